"""MNN's regex compiler (``Unicode::regex_scanner``'s parser): a pattern read into top-level
alternatives of nodes over sets of folded bytes (:func:`compile_pattern`), with the alternatives
MNN drops and the bounds on nesting; :mod:`.regex` matches them."""

from __future__ import annotations

from dataclasses import dataclass, field

from mtokspec.runtime.shared.bounds import PATTERN_DEPTH, PATTERN_FRAMES, pattern_cost, remember
from mtokspec.runtime.mnn import unicode as U
from mtokspec.errors import TokenizerError, UndefinedInMnn
from mtokspec.runtime.shared.text import GPT2_PATTERN


_ALL = (1 << 256) - 1

# measured with mnn_tok (g++ -O2, an 8 MiB stack): groups nested 19,335 deep answer and 19,401 crash
# (SIGSEGV), on both of MNN's engines: its recursive parsers and matchers overflow the stack
STACK_DEPTH = 19_400
_INT_MAX = 2**31 - 1  # std::stoi of a repeat count past this throws std::out_of_range


def _bits(chars) -> int:
    m = 0
    for c in chars:
        m |= 1 << c
    return m


_LETTER = _bits([U.FOLD_LETTER, *range(65, 91), *range(97, 123)])
_NUMBER = _bits([U.FOLD_NUMBER, *range(48, 58)])
_SPACE = _bits([U.FOLD_SPACE, *b" \t\n\r\f\v"])
_MARK = _bits([U.FOLD_MARK])
_PUNCT = _bits([U.FOLD_PUNCT, *b"!\"#%&'()*,-./:;?@[\\]_{}"])
_SYMBOL = _bits([U.FOLD_SYMBOL, *b"$+<=>^`|~"])
_DOT = _ALL & ~(1 << 10)
_PROPERTY = {"L": _LETTER, "N": _NUMBER, "M": _MARK, "P": _PUNCT, "S": _SYMBOL, "Z": _SPACE}

CS, GRP, NEG_LA = 0, 1, 2


@dataclass
class Node:
    kind: int = CS
    cs: int = 0  # a 256-bit set of folded bytes
    alts: list = field(default_factory=list)  # GRP / NEG_LA: list of branches (lists of Node)
    qmin: int = 1
    qmax: int = 1  # -1: unlimited


class _Parser:
    """MNN's ``PatternParser``: recursive descent over the pattern's bytes."""

    def __init__(self, pattern: bytes):
        self.p = pattern
        self.pos = 0
        self.icase = False
        self.supported = True

    def peek(self) -> int:
        return self.p[self.pos] if self.pos < len(self.p) else 0

    def next(self) -> int:
        if self.pos < len(self.p):
            self.pos += 1
            return self.p[self.pos - 1]
        return 0

    def at_end(self) -> bool:
        return self.pos >= len(self.p)

    def read_cp(self) -> int:
        if self.pos >= len(self.p):
            return 0
        cp, r = U.utf8_decode(self.p, self.pos)
        self.pos += r
        return cp

    def multibyte(self) -> bool:
        return self.pos < len(self.p) and self.p[self.pos] >= 0x80

    def literal(self, c: int) -> int:
        if self.icase and 97 <= c <= 122:
            return 1 << c | 1 << (c - 32)
        if self.icase and 65 <= c <= 90:
            return 1 << c | 1 << (c + 32)
        return 1 << c

    def escape(self) -> int:
        self.next()  # the backslash
        c = self.next()
        ch = chr(c)
        if ch in "pP":
            if self.peek() == ord("{"):
                self.next()
                prop = bytearray()
                while not self.at_end() and self.peek() != ord("}"):
                    prop.append(self.next())
                if self.peek() == ord("}"):
                    self.next()
                s = _PROPERTY.get(chr(prop[0]), 0) if prop else 0
                return _ALL & ~s if ch == "P" else s
            return 0
        simple = {"s": _SPACE, "S": _ALL & ~_SPACE, "d": _NUMBER, "D": _ALL & ~_NUMBER,
                  "w": _LETTER | _NUMBER | 1 << 95, "W": _ALL & ~(_LETTER | _NUMBER | 1 << 95),
                  "r": 1 << 13, "n": 1 << 10, "t": 1 << 9, "f": 1 << 12, "v": 1 << 11}
        if ch in simple:
            return simple[ch]
        if ch == "x":
            if self.pos + 1 < len(self.p):
                h1, h2 = self.next(), self.next()
                return 1 << (_hex(h1) * 16 + _hex(h2))
            return 0
        if ch in "bBAZ123456789":
            self.supported = False  # zero-width assertions and back-references
        return self.literal(c)

    def char_class(self) -> Node:
        self.next()  # '['
        negated = self.peek() == ord("^")
        if negated:
            self.next()
        cs = 0
        if self.peek() == ord("]"):
            cs |= 1 << 93
            self.next()
        while not self.at_end() and self.peek() != ord("]"):
            if self.peek() == ord("\\"):
                cs |= self.escape()
            elif self.multibyte():
                fb = U.fold(self.read_cp())
                if self._range_follows():
                    self.next()
                    end = U.fold(self.read_cp()) if self.multibyte() else self.next()
                    cs |= _span(fb, end)
                else:
                    cs |= 1 << fb
            else:
                c = self.next()
                if self._range_follows():
                    self.next()
                    if self.peek() == ord("\\"):
                        self.next()
                        e = self.next()
                        end_c = {110: 10, 114: 13, 116: 9}.get(e, e)
                    elif self.multibyte():
                        cs |= _span(U.fold(c), U.fold(self.read_cp()))
                        continue
                    else:
                        end_c = self.next()
                    for b in range(c, end_c + 1):
                        cs |= self.literal(b)
                else:
                    cs |= self.literal(c)
        if self.peek() == ord("]"):
            self.next()
        return Node(CS, _ALL & ~cs if negated else cs)

    def _range_follows(self) -> bool:
        return self.peek() == ord("-") and self.pos + 1 < len(self.p) and self.p[self.pos + 1] != ord("]")

    def group(self) -> Node:
        self.next()  # '('
        if self.peek() == ord("?"):
            self.next()
            if self.peek() == ord("!"):
                self.next()
                n = Node(NEG_LA, alts=self.alternation())
                if self.peek() == ord(")"):
                    self.next()
                return n
            if self.peek() in (ord("="), ord("<")):
                self.supported = False  # look-ahead, look-behind, named group: skipped to ')'
                depth = 1
                while not self.at_end() and depth > 0:
                    ch = self.next()
                    depth += (ch == ord("(")) - (ch == ord(")"))
                return Node()
            old = self.icase
            while not self.at_end() and self.peek() not in (ord(":"), ord(")")):
                if self.peek() == ord("i"):
                    self.icase = True
                self.next()
            if self.peek() == ord(":"):
                self.next()
            n = Node(GRP, alts=self.alternation())
            if self.peek() == ord(")"):
                self.next()
            self.icase = old
            return n
        n = Node(GRP, alts=self.alternation())
        if self.peek() == ord(")"):
            self.next()
        return n

    def atom(self) -> Node:
        c = self.peek()
        if c == ord("("):
            return self.group()
        if c == ord("["):
            return self.char_class()
        if c == ord("\\"):
            return Node(CS, self.escape())
        if c == ord("."):
            self.next()
            return Node(CS, _DOT)
        if self.multibyte():
            return Node(CS, 1 << U.fold(self.read_cp()))
        self.next()
        return Node(CS, self.literal(c))

    def quantifier(self, n: Node) -> None:
        if self.at_end():
            return
        c = self.peek()
        if c == ord("+"):
            self.next()
            n.qmin, n.qmax = 1, -1
        elif c == ord("*"):
            self.next()
            n.qmin, n.qmax = 0, -1
        elif c == ord("?"):
            self.next()
            n.qmin, n.qmax = 0, 1
        elif c == ord("{"):
            self.next()
            n.qmin = self._number(0)
            if self.peek() == ord(","):
                self.next()
                n.qmax = self._number(-1)
            else:
                n.qmax = n.qmin
            if self.peek() == ord("}"):
                self.next()
        else:
            return
        if not self.at_end() and self.peek() == ord("?"):
            self.next()  # lazy: matched greedily all the same

    def _number(self, empty: int) -> int:
        digits = bytearray()
        while not self.at_end() and 48 <= self.peek() <= 57:
            digits.append(self.next())
        if not digits:
            return empty
        digits = digits.lstrip(b"0") or b"0"
        if len(digits) > 10 or int(digits) > _INT_MAX:
            raise UndefinedInMnn(f"pattern {self.p[:60]!r}: a repeat count past {_INT_MAX}: MNN's std::stoi "
                                 "throws std::out_of_range, so its encode throws")
        return int(digits)

    def branch(self) -> list[Node]:
        nodes = []
        while not self.at_end() and self.peek() not in (ord("|"), ord(")")):
            nodes.append(self.atom())
            self.quantifier(nodes[-1])
        return nodes

    def alternation(self) -> list[list[Node]]:
        alts = [self.branch()]
        while self.peek() == ord("|"):
            self.next()
            alts.append(self.branch())
        return alts

    def parse(self) -> list[list[Node]]:
        """Top-level alternatives; one that uses an unsupported construct is dropped."""
        alts = []
        self.supported = True
        b = self.branch()
        if self.supported:
            alts.append(b)
        while self.peek() == ord("|"):
            self.next()
            self.supported = True
            b = self.branch()
            if self.supported:
                alts.append(b)
        return alts


def _hex(h: int) -> int:
    if 48 <= h <= 57:
        return h - 48
    if 97 <= h <= 102:
        return h - 87
    if 65 <= h <= 70:
        return h - 55
    return 0


def _span(a: int, b: int) -> int:
    lo, hi = min(a, b), max(a, b)
    return ((1 << (hi + 1)) - 1) & ~((1 << lo) - 1)


_compiled: dict[bytes, list] = {}


def compile_pattern(pattern: bytes) -> list[list[Node]]:
    """The pattern's top-level alternatives as MNN compiles them (the GPT-2 pattern when none is
    supported), cached like MNN's (the newest few: :func:`~mtokspec.runtime.shared.bounds.remember`).
    ``TokenizerError`` past the bounds mtokspec follows
    (:mod:`mtokspec.runtime.shared.bounds`), ``UndefinedInMnn`` where MNN throws or crashes."""
    c = _compiled.get(pattern)
    if c is None:
        c = _parse(pattern)
        if not c:
            c = compile_pattern(GPT2_PATTERN.encode())
        if frames(c) > PATTERN_FRAMES:
            raise TokenizerError(f"pattern {pattern[:60]!r}: MNN's matcher would nest more than {PATTERN_FRAMES} "
                                 "calls for it (a long branch or deep groups), past what mtokspec follows")
        remember(_compiled, pattern, c)
    return c


def check_depth(pattern: bytes) -> None:
    """Refuse a pattern nested past what mtokspec's parsers follow (``TokenizerError``) or past
    where MNN's own recursion overflows its stack (``UndefinedInMnn``), before parsing it."""
    depth = pattern_cost(pattern.decode("utf-8", "replace")).depth
    if depth >= STACK_DEPTH:
        raise UndefinedInMnn(f"pattern {pattern[:60]!r}: groups nested {depth} deep: MNN's recursive regex "
                             f"parser and matcher overflow an 8 MiB stack from about {STACK_DEPTH} (SIGSEGV)")
    if depth > PATTERN_DEPTH:
        raise TokenizerError(f"pattern {pattern[:60]!r}: groups nested {depth} deep, past the {PATTERN_DEPTH} "
                             "levels mtokspec's pattern parsers follow (MNN runs it)")


def _parse(pattern: bytes) -> list[list[Node]]:
    check_depth(pattern)
    try:
        return _Parser(pattern).parse()
    except RecursionError:
        raise TokenizerError(f"pattern {pattern[:60]!r}: groups nested deeper than mtokspec follows") from None


def dropped_alternatives(pattern: bytes) -> bool:
    """Does MNN drop a top-level alternative of this pattern (or fall back to GPT-2's)?  False for
    a pattern MNN or mtokspec cannot parse (:func:`compile_pattern` says why)."""
    try:
        kept = _parse(pattern)
    except TokenizerError:
        return False
    p = _Parser(pattern)
    p.supported = True
    try:
        p.branch()
        total = 1
        while p.peek() == ord("|"):
            p.next()
            p.branch()
            total += 1
    except (RecursionError, TokenizerError):
        return False
    return len(kept) < total


# The compiled matcher recurses as _match does; it takes a pattern only when that recursion stays
# this many frames deep at most (the pure path's RecursionError, at Python's limit, is then out of
# reach for both, so both refuse the same inputs).
MAX_FRAMES = 150


def frames(alts) -> int:
    """How many frames deep ``_try`` over ``alts`` recurses at most (itself included)."""
    deepest = 0
    for branch in alts:
        d = len(branch) + 1
        for k, node in enumerate(branch):
            if node.kind != CS:
                d = max(d, k + 1 + frames(node.alts))
        deepest = max(deepest, d)
    return 1 + deepest
