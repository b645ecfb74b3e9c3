"""libstdc++'s ``std::regex`` compiler, emulated (``regex_compiler.tcc``): a pattern read as it
reads it (:func:`parse`), the states its compiler would insert (:func:`states`, against
:data:`STATE_LIMIT`), and the automaton it builds (:func:`compile`), which :mod:`.wregex` runs."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

__all__ = ["Program", "compile", "parse", "states", "STATE_LIMIT"]

# libstdc++'s _GLIBCXX_REGEX_STATE_LIMIT: its compiler throws regex_error (error_space) when the
# automaton passes this many states; MNN does not catch it, so its encode throws (measured with
# mnn_tok: "(?:(?:(?:a{1000}){1000}){1000})é" -> "Number of NFA states exceeds limit")
STATE_LIMIT = 100_000
_HUGE = 1 << 62

MATCH, ALT, REPEAT, DUMMY, LINE_BEGIN, LINE_END, WORD, LOOKAHEAD, ACCEPT = range(9)

_DIGIT = [(0x30, 0x39)]
_WORD = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
_SPACE = [(0x09, 0x0D), (0x20, 0x20)]
_CLASS_ESCAPES = {"d": (_DIGIT, False), "D": (_DIGIT, True), "w": (_WORD, False), "W": (_WORD, True),
                  "s": (_SPACE, False), "S": (_SPACE, True)}
_CONTROL_ESCAPES = {"n": 10, "r": 13, "t": 9, "f": 12, "v": 11, "0": 0}


class _Unsupported(Exception):
    pass


COMPARES_PER_STEP = 32
"""Range comparisons a step of the search is worth.  Measured with MNN's mnn_tok (g++ -O2, libstdc++
12) over 200,000 characters: a class of 170 ranges, its match last, costs 0.03 s more than a class of
one range (about 1 ns a comparison); 60 alternatives that fail before the one that matches cost
0.6 s over 50,000 starts (about 200 ns an alternative: a state and a class test).  A comparison is
about a fiftieth of a state; counted as a 32nd."""


@dataclass
class _CharSet:
    """A character class: ranges (and negated sub-classes such as ``\\W`` inside ``[...]``).

    ``cost``: the work of one test in steps: one, and the comparisons libstdc++'s
    ``_BracketMatcher`` makes (a binary search of its single characters, one comparison per range
    and per sub-class), :data:`COMPARES_PER_STEP` to a step."""

    ranges: list[tuple[int, int]] = field(default_factory=list)
    negated_parts: list[list[tuple[int, int]]] = field(default_factory=list)
    negate: bool = False
    singles: int = 0  # single characters written in the class (a binary search)
    tests: int = 0  # ranges and class escapes in it (one test each, in turn)
    _table: tuple | None = field(default=None, repr=False, compare=False)

    def _ready(self) -> tuple:
        if self._table is None:
            self._table = (_merged(self.ranges), [_merged(part) for part in self.negated_parts])
        return self._table

    @property
    def cost(self) -> int:
        return 1 + (self.singles.bit_length() + self.tests) // COMPARES_PER_STEP

    def __contains__(self, cp: int) -> bool:
        own, parts = self._ready()
        hit = _inside(own, cp) or any(not _inside(part, cp) for part in parts)
        return hit != self.negate


def _merged(ranges: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """The ranges sorted and merged: (starts, ends), for a binary search."""
    starts: list[int] = []
    ends: list[int] = []
    for lo, hi in sorted(ranges):
        if ends and lo <= ends[-1] + 1:
            ends[-1] = max(ends[-1], hi)
        else:
            starts.append(lo)
            ends.append(hi)
    return starts, ends


def _inside(table: tuple[list[int], list[int]], cp: int) -> bool:
    k = bisect_right(table[0], cp) - 1
    return k >= 0 and cp <= table[1][k]


class Program:
    """An automaton as libstdc++ compiles a pattern: parallel lists of op, next, alt and data."""

    def __init__(self) -> None:
        self.op: list[int] = []
        self.next: list[int] = []
        self.alt: list[int] = []
        self.data: list = []
        self.cost: list[int] = []  # a class's comparisons per test (0 for other states)
        self.start = -1

    def add(self, op: int, data=None, alt: int = -1) -> int:
        self.op.append(op)
        self.next.append(-1)
        self.alt.append(alt)
        self.data.append(data)
        self.cost.append(data.cost if isinstance(data, _CharSet) else 0)
        return len(self.op) - 1


class _Parser:
    """ECMAScript, as ``std::regex`` reads it, to a small tree of tuples."""

    def __init__(self, pattern: str):
        self.s = pattern
        self.i = 0

    def disjunction(self):
        branches = [self.alternative()]
        while self.i < len(self.s) and self.s[self.i] == "|":
            self.i += 1
            branches.append(self.alternative())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def alternative(self):
        items = []
        while self.i < len(self.s) and self.s[self.i] not in "|)":
            items.append(self.term())
        return ("seq", items)

    def term(self):
        s = self.s
        c = s[self.i]
        if c == "^":
            self.i += 1
            return ("bol",)
        if c == "$":
            self.i += 1
            return ("eol",)
        if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in "bB":
            self.i += 2
            return ("word", s[self.i - 1] == "B")
        if s.startswith("(?=", self.i) or s.startswith("(?!", self.i):
            neg = s[self.i + 2] == "!"
            self.i += 3
            inner = self.disjunction()
            self._close()
            return ("look", inner, neg)
        node = self.atom()
        while self.i < len(s) and s[self.i] in "*+?{":
            node = self.quantifier(node)
        return node

    def _close(self) -> None:
        if self.i >= len(self.s) or self.s[self.i] != ")":
            raise _Unsupported("unbalanced parenthesis")
        self.i += 1

    def atom(self):
        s = self.s
        c = s[self.i]
        if c == "(":
            capture = not s.startswith("(?:", self.i)
            if not capture:
                self.i += 3
            elif s.startswith("(?", self.i):
                raise _Unsupported("group kind")
            else:
                self.i += 1
            inner = self.disjunction()
            self._close()
            return ("group", inner, capture)
        if c == ".":
            self.i += 1
            return ("char", _CharSet([(10, 10), (13, 13)], negate=True))
        if c == "[":
            return ("char", self.bracket())
        if c == "\\":
            return ("char", self.escape(in_class=False))
        if c in "*+?{}]":
            raise _Unsupported("a quantifier or bracket out of place")
        self.i += 1
        return ("char", ord(c))

    def escape(self, in_class: bool):
        s = self.s
        if self.i + 1 >= len(s):
            raise _Unsupported("trailing backslash")
        e = s[self.i + 1]
        self.i += 2
        if e in _CLASS_ESCAPES:
            ranges, neg = _CLASS_ESCAPES[e]
            return _CharSet([], [ranges]) if neg else _CharSet(list(ranges))
        if e in _CONTROL_ESCAPES:
            if e == "0" and self.i < len(s) and s[self.i].isdigit():
                raise _Unsupported("octal escape")
            return _CONTROL_ESCAPES[e]
        if e == "b" and in_class:
            return 8
        if e in "xu":
            width = 2 if e == "x" else 4
            digits = s[self.i:self.i + width]
            if len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise _Unsupported("hex escape")
            self.i += width
            return int(digits, 16)
        if e.isdigit() or e.isalpha():
            raise _Unsupported(f"escape \\{e}")  # back-references, \c, and what std::regex rejects
        return ord(e)

    def bracket(self) -> _CharSet:
        s = self.s
        self.i += 1
        cs = _CharSet()
        if self.i < len(s) and s[self.i] == "^":
            cs.negate = True
            self.i += 1
        first = True
        while True:
            if self.i >= len(s):
                raise _Unsupported("unterminated class")
            c = s[self.i]
            if c == "]" and not first:
                self.i += 1
                return cs
            first = False
            if c == "[" and self.i + 1 < len(s) and s[self.i + 1] in ":.=":
                raise _Unsupported("class name")
            lo = self.escape(in_class=True) if c == "\\" else self._take()
            if isinstance(lo, _CharSet):
                cs.ranges += lo.ranges
                cs.tests += 1  # \\d \\w \\s: one isctype test
                cs.negated_parts += lo.negated_parts
                continue
            if self.i + 1 < len(s) and s[self.i] == "-" and s[self.i + 1] != "]":
                self.i += 1
                hi = self.escape(in_class=True) if s[self.i] == "\\" else self._take()
                if isinstance(hi, _CharSet) or hi < lo:
                    raise _Unsupported("range")
                cs.ranges.append((lo, hi))
                cs.tests += 1  # a range: one comparison in libstdc++'s linear scan of its ranges
            else:
                cs.ranges.append((lo, lo))
                cs.singles += 1

    def _take(self) -> int:
        self.i += 1
        return ord(self.s[self.i - 1])

    def quantifier(self, node):
        s = self.s
        c = s[self.i]
        self.i += 1
        if c == "{":
            close = s.find("}", self.i)
            if close == -1:
                raise _Unsupported("interval")
            lo_s, comma, hi_s = s[self.i:close].partition(",")
            if not (lo_s + hi_s).isascii() or not lo_s.isdigit() or (hi_s and not hi_s.isdigit()):
                raise _Unsupported("interval")
            self.i = close + 1
            # a count past a long: libstdc++ throws (error_badbrace); counted as one past any limit
            low = min(int(lo_s) if len(lo_s.lstrip("0")) < 19 else _HUGE, _HUGE)
            high = None if comma and not hi_s else (
                min(int(hi_s) if len(hi_s.lstrip("0")) < 19 else _HUGE, _HUGE) if hi_s else low)
            if high is not None and high < low:
                raise _Unsupported("interval")
        else:
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        lazy = self.i < len(s) and s[self.i] == "?"
        self.i += lazy
        return ("rep", node, low, high, lazy, c)


class _Compiler:
    """The automaton, state by state as libstdc++'s ``_Compiler`` inserts them."""

    def __init__(self, prog: Program):
        self.prog = prog

    def _patch(self, ends: list[int], target: int) -> None:
        for e in ends:
            self.prog.next[e] = target

    def _seq(self, a, b):
        self._patch(a[1], b[0])
        return a[0], b[1]

    def _dummy(self):
        d = self.prog.add(DUMMY)
        return d, [d]

    def _repeat(self, body, lazy: bool) -> int:
        return self.prog.add(REPEAT, lazy, alt=body[0])

    def emit(self, node):
        kind = node[0]
        add = self.prog.add
        if kind == "char":
            n = add(MATCH, node[1])
            return n, [n]
        if kind == "seq":
            frag = self._dummy()
            for item in node[1]:
                frag = self._seq(frag, self.emit(item))
            return frag
        if kind == "alt":
            frag = self.emit(node[1][0])
            for branch in node[1][1:]:
                right = self.emit(branch)
                end = add(DUMMY)
                self._patch(frag[1], end)
                self._patch(right[1], end)
                alt = add(ALT, alt=frag[0])  # the left branch (alt) first, then the right (next)
                self.prog.next[alt] = right[0]
                frag = (alt, [end])
            return frag
        if kind == "group":  # _M_insert_subexpr_begin/_end: epsilon moves for the search
            return self._seq(self._seq(self._dummy(), self.emit(node[1])), self._dummy())
        if kind in ("bol", "eol"):
            n = add(LINE_BEGIN if kind == "bol" else LINE_END)
            return n, [n]
        if kind == "word":
            n = add(WORD, node[1])
            return n, [n]
        if kind == "look":
            inner = self.emit(node[1])
            self._patch(inner[1], add(ACCEPT))
            n = add(LOOKAHEAD, (inner[0], node[2]))
            return n, [n]
        return self._rep(node)

    def _rep(self, node):
        _, operand, low, high, lazy, sign = node
        if sign == "*":
            body = self.emit(operand)
            r = self._repeat(body, lazy)
            self._patch(body[1], r)
            return r, [r]
        if sign == "+":
            body = self.emit(operand)
            r = self._repeat(body, lazy)
            self._patch(body[1], r)
            return body[0], [r]
        if sign == "?":
            body = self.emit(operand)
            end = self.prog.add(DUMMY)
            r = self._repeat(body, lazy)
            self.prog.next[r] = end
            self._patch(body[1], end)
            return r, [end]
        frag = self._dummy()  # an interval: the operand cloned
        for _ in range(low):
            frag = self._seq(frag, self.emit(operand))
        if high is None:
            body = self.emit(operand)
            r = self._repeat(body, lazy)
            self._patch(body[1], r)
            return self._seq(frag, (r, [r]))
        end = self.prog.add(DUMMY)
        for _ in range(high - low):
            body = self.emit(operand)
            r = self._repeat(body, lazy)
            self.prog.next[r] = end
            frag = self._seq(frag, (r, body[1]))
        self._patch(frag[1], end)
        return frag[0], [end]


def parse(pattern: str):
    """``pattern`` read as ``std::regex`` reads it (a tree for :func:`states` and :func:`compile`),
    or ``None`` when this module cannot read it.  The caller bounds the nesting first
    (:data:`mtokspec.runtime.shared.bounds.PATTERN_DEPTH`): the reader recurses."""
    p = _Parser(pattern)
    try:
        tree = p.disjunction()
    except (_Unsupported, IndexError, RecursionError):
        return None
    return tree if p.i == len(pattern) else None


def states(tree) -> int:
    """How many states libstdc++'s compiler inserts for ``tree`` (``regex_compiler.tcc``: an
    interval clones what its operand reaches, the operand itself stays), counted without building
    them: compare with :data:`STATE_LIMIT`."""
    inserted, _ = _count(tree)
    return inserted + 3  # the whole match's subexpression begin and end, and the accepting state


def _count(node) -> tuple[int, int]:
    """``(states inserted, states a clone copies)`` of a node (iterative: no recursion limit)."""
    # post-order over the tree with an explicit stack; each node's pair goes on ``values``
    values: list[tuple[int, int]] = []
    todo: list[tuple[object, bool]] = [(node, False)]
    while todo:
        n, done = todo.pop()
        kind = n[0]
        kids = n[1] if kind in ("seq", "alt") else [n[1]] if kind in ("group", "look", "rep") else []
        if not done:
            todo.append((n, True))
            todo.extend((k, False) for k in kids)
            continue
        sub = [values.pop() for _ in kids]
        if kind == "seq":  # each term, then the alternative's closing dummy
            r = (sum(a for a, _ in sub) + 1, sum(b for _, b in sub) + 1)
        elif kind == "alt":  # per extra branch: a joining dummy and the alternative state
            extra = 2 * (len(sub) - 1)
            r = (sum(a for a, _ in sub) + extra, sum(b for _, b in sub) + extra)
        elif kind == "group":  # a capture's begin and end states, a non-capture's dummy
            extra = 2 if n[2] else 1
            r = (sub[0][0] + extra, sub[0][1] + extra)
        elif kind == "look":  # the sub-search's accepting state and the look-ahead state
            r = (sub[0][0] + 2, sub[0][1] + 2)
        elif kind == "rep":
            (ins, reach), (_, _, low, high, _, sign) = sub[0], n
            if sign in "*+":
                r = (ins + 1, reach + 1)
            elif sign == "?":
                r = (ins + 2, reach + 2)
            else:  # the interval's dummy, low clones, then one clone and a repeat per optional copy
                tail = reach + 1 if high is None else (high - low) * (reach + 1) + 1
                r = (ins + 1 + low * reach + tail, 1 + low * reach + tail)
        else:
            r = (1, 1)
        values.append(r)
    return values[0]


def compile(pattern: str, tree=None) -> Program | None:
    """The automaton libstdc++ builds for ``pattern`` (or its :func:`parse` ``tree``), or ``None``
    when this module cannot read it.  The caller checks :func:`states` first."""
    prog = Program()
    if tree is None:
        tree = parse(pattern)
    if tree is None:
        return None
    try:
        frag = _Compiler(prog).emit(tree)
    except (_Unsupported, IndexError, RecursionError):
        return None
    acc = prog.add(ACCEPT)
    for e in frag[1]:
        prog.next[e] = acc
    prog.start = frag[0]
    return prog
