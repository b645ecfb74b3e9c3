"""MNN's Jinja parser (``jinja.hpp``, ``class Parser``), with its recovery.

The parser never fails: a token it does not expect is skipped by the enclosing statement loop, a
missing ``%}``/``}}``/``)`` is not required, an unknown tag is skipped up to its ``%}`` (its body
then renders as plain template text).  Precedence, lowest first: ternary ``a if b else c``,
``or``, ``and``, ``not``, comparisons / ``in`` / ``not in`` / ``is [not] test``, ``+ - ~``,
filters, unary ``+ -``, primaries (literals, names, calls, ``[]``/``.``/method chains, lists,
dicts, parentheses).  ``* / // % **`` are not operators: the expression ends before them.
A number is ``(int)strtol(digits)``: any run of more than 19 significant digits saturates to
``LONG_MAX`` and reads as ``-1``.

Where MNN's parser would loop forever (a list or dict literal whose next element it cannot read:
it appends empty literals until memory runs out) :class:`~mtokspec.chat.mnn.values.MnnEngineFailure`
is raised naming ``mnn-jinja-literal-hang``.
"""

from __future__ import annotations


from mtokspec.chat.mnn.lexer import (BLOCK_END, BLOCK_START, EOF, EXPR_END, EXPR_START, IDENT,
                                     NUMBER, OPERATOR, PUNCT, STRING, TEXT)
from mtokspec.chat.mnn.nodes import (
    Binary, Call, DictLit, Expr, Filter, ForNode, GetAttr, GetItem, IfNode, ListLit, Lit, MacroNode, Method, Node,
    PrintNode, SetNode, Slice, Ternary, Test, TextNode, Var,
)
from mtokspec.chat.mnn.values import MnnEngineFailure


# --- the parser ------------------------------------------------------------------------------------

_COMPARE_OPS = frozenset((b"==", b"!=", b"<", b">", b"<=", b">="))
_LONG_MAX = (1 << 63) - 1


class Parser:
    """A port of MNN's recursive-descent parser over :func:`~mtokspec.chat.mnn.lexer.tokenize`'s tokens."""

    def __init__(self, tokens: list[tuple[int, bytes]]):
        self.t = tokens
        self.i = 0

    # helpers (same contracts as the C++ ones: check() is false at the end, advance() returns the
    # previous token there without moving)
    def at_end(self) -> bool:
        return self.t[self.i][0] == EOF

    def check(self, typ: int) -> bool:
        return not self.at_end() and self.t[self.i][0] == typ

    def is_(self, typ: int, value: bytes) -> bool:
        return self.check(typ) and self.t[self.i][1] == value

    def peekv(self) -> bytes:
        return self.t[self.i][1]

    def advance(self) -> tuple[int, bytes]:
        if not self.at_end():
            self.i += 1
        return self.t[self.i - 1]

    # statements
    def parse(self) -> list[Node]:
        nodes: list[Node] = []
        while not self.at_end():
            self._statement_or_skip(nodes)
        return nodes

    def _statement_or_skip(self, body: list[Node]) -> None:
        if self.check(TEXT):
            body.append(TextNode(self.advance()[1]))
        elif self.check(EXPR_START):
            body.append(self.parse_print())
        elif self.check(BLOCK_START):
            body.append(self.parse_block())
        else:
            self.advance()

    def parse_block(self) -> Node:
        self.advance()
        typ, cmd = self.advance()
        if typ == IDENT:
            if cmd == b"for":
                return self.parse_for()
            if cmd == b"if":
                return self.parse_if(self.parse_expression_then_end())
            if cmd == b"set":
                return self.parse_set()
            if cmd == b"macro":
                return self.parse_macro()
        while not self.check(BLOCK_END) and not self.at_end():
            self.advance()
        if not self.at_end():
            self.advance()
        return TextNode(b"")

    def parse_macro(self) -> Node:
        name = self.advance()[1]
        params: list[bytes] = []
        if self.is_(PUNCT, b"("):
            self.advance()
            while not self.is_(PUNCT, b")"):
                if self.check(IDENT):
                    params.append(self.advance()[1])
                    if self.is_(OPERATOR, b"="):
                        self.advance()
                        self.parse_expression()
                if self.is_(PUNCT, b","):
                    self.advance()
                else:
                    break
            if self.is_(PUNCT, b")"):
                self.advance()
        if self.check(BLOCK_END):
            self.advance()
        body: list[Node] = []
        while not self.at_end():
            if self.check(BLOCK_START) and self.i + 1 < len(self.t) and self.t[self.i + 1][1] == b"endmacro":
                self.advance()
                self.advance()
                if self.check(BLOCK_END):
                    self.advance()
                break
            self._statement_or_skip(body)
        return MacroNode(name, params, body)

    def parse_set(self) -> Node:
        target = self.parse_expression()
        if self.is_(OPERATOR, b"="):
            self.advance()
        value = self.parse_expression()
        if self.check(BLOCK_END):
            self.advance()
        return SetNode(target, value)

    def parse_expression_then_end(self) -> Expr:
        cond = self.parse_expression()
        if self.check(BLOCK_END):
            self.advance()
        return cond

    def parse_if(self, cond: Expr) -> Node:
        """``parse_if`` and ``parse_if_from_elif`` (the same loop once the condition is read)."""
        yes: list[Node] = []
        no: list[Node] = []
        body = yes
        while not self.at_end():
            if self.check(BLOCK_START) and self.i + 1 < len(self.t) and self.t[self.i + 1][0] == IDENT:
                tag = self.t[self.i + 1][1]
                if tag == b"endif":
                    self.advance()
                    self.advance()
                    if self.check(BLOCK_END):
                        self.advance()
                    break
                if tag == b"else":
                    self.advance()
                    self.advance()
                    if self.check(BLOCK_END):
                        self.advance()
                    body = no
                    continue
                if tag == b"elif":
                    self.advance()
                    self.advance()
                    elif_cond = self.parse_expression_then_end()
                    no.append(self.parse_if(elif_cond))
                    break
            self._statement_or_skip(body)
        return IfNode(cond, yes, no)

    def parse_for(self) -> Node:
        names: list[bytes] = []
        while self.check(IDENT):
            names.append(self.advance()[1])
            if self.is_(PUNCT, b","):
                self.advance()
            else:
                break
        if self.is_(IDENT, b"in"):
            self.advance()
        iterable = self.parse_expression(allow_ternary=False)
        cond = None
        if self.is_(IDENT, b"if"):
            self.advance()
            cond = self.parse_expression()
        if self.check(BLOCK_END):
            self.advance()
        body: list[Node] = []
        while not self.at_end():
            if (self.check(BLOCK_START) and self.i + 2 < len(self.t) and self.t[self.i + 1][0] == IDENT
                    and self.t[self.i + 1][1] == b"endfor"):
                self.advance()
                self.advance()
                if self.check(BLOCK_END):
                    self.advance()
                break
            self._statement_or_skip(body)
        return ForNode(names, iterable, body, cond)

    def parse_print(self) -> Node:
        self.advance()
        expr = self.parse_expression()
        if self.check(EXPR_END):
            self.advance()
        return PrintNode(expr)

    # expressions
    def parse_expression(self, allow_ternary: bool = True) -> Expr:
        expr = self.parse_or()
        if allow_ternary and self.is_(IDENT, b"if"):
            self.advance()
            cond = self.parse_or()
            if self.is_(IDENT, b"else"):
                self.advance()
                return Ternary(cond, expr, self.parse_expression())
        return expr

    def parse_or(self) -> Expr:
        left = self.parse_and()
        while self.is_(IDENT, b"or"):
            self.advance()
            left = Binary(b"or", left, self.parse_and())
        return left

    def parse_and(self) -> Expr:
        left = self.parse_not()
        while self.is_(IDENT, b"and"):
            self.advance()
            left = Binary(b"and", left, self.parse_not())
        return left

    def parse_not(self) -> Expr:
        if self.is_(IDENT, b"not"):
            self.advance()
            return Ternary(self.parse_not(), Lit(False), Lit(True))
        return self.parse_compare()

    def parse_compare(self) -> Expr:
        left = self.parse_add()
        while ((self.check(OPERATOR) and self.peekv() in _COMPARE_OPS)
               or (self.check(IDENT) and self.peekv() in (b"in", b"is", b"not"))):
            op = self.advance()[1]
            if op == b"is":
                negated = False
                if self.is_(IDENT, b"not"):
                    self.advance()
                    negated = True
                left = Test(left, self.advance()[1], negated)
            elif op == b"not":
                if self.is_(IDENT, b"in"):
                    self.advance()
                    left = Binary(b"not in", left, self.parse_add())
                else:
                    break
            else:
                left = Binary(op, left, self.parse_add())
        return left

    def parse_add(self) -> Expr:
        left = self.parse_filter()
        while self.check(OPERATOR) and self.peekv() in (b"+", b"-", b"~"):
            op = self.advance()[1]
            left = Binary(op, left, self.parse_filter())
        return left

    def _call_args(self) -> list[tuple[bytes, Expr]]:
        """``(name=value, value, ...)`` after the ``(``, up to and including ``)``."""
        args: list[tuple[bytes, Expr]] = []
        while not self.is_(PUNCT, b")"):
            name = b""
            if self.check(IDENT) and len(self.t) > self.i + 1 and self.t[self.i + 1][1] == b"=":
                name = self.advance()[1]
                self.advance()
            args.append((name, self.parse_expression()))
            if self.is_(PUNCT, b","):
                self.advance()
            else:
                break
        if self.is_(PUNCT, b")"):
            self.advance()
        return args

    def parse_filter(self) -> Expr:
        left = self.parse_unary()
        while self.is_(OPERATOR, b"|"):
            self.advance()
            if self.check(IDENT):
                name = self.advance()[1]
                args: list[tuple[bytes, Expr]] = []
                if self.is_(PUNCT, b"("):
                    self.advance()
                    args = self._call_args()
                left = Filter(left, name, args)
        return left

    def parse_unary(self) -> Expr:
        if self.check(OPERATOR) and self.peekv() in (b"+", b"-"):
            op = self.advance()[1]
            return Binary(op, Lit(0), self.parse_unary())
        return self.parse_primary()

    def _hang(self, what: str) -> MnnEngineFailure:
        return MnnEngineFailure(
            "mnn-jinja-literal-hang",
            f"MNN's parser loops forever on this {what} literal (token {self.i}: "
            f"{self.t[self.i][1].decode('utf-8', 'replace')!r} is not an element it can read): it "
            f"appends empty elements until memory runs out")

    def parse_primary(self) -> Expr:
        if self.is_(PUNCT, b"["):
            self.advance()
            items: list[Expr] = []
            while not self.is_(PUNCT, b"]"):
                before = self.i
                items.append(self.parse_expression())
                if self.is_(PUNCT, b","):
                    self.advance()
                if self.i == before:
                    raise self._hang("list")
            if self.is_(PUNCT, b"]"):
                self.advance()
            return ListLit(items)
        if self.is_(PUNCT, b"{"):
            self.advance()
            pairs: list[tuple[Expr, Expr]] = []
            while not self.is_(PUNCT, b"}"):
                before = self.i
                key = self.parse_expression()
                if self.is_(PUNCT, b":"):
                    self.advance()
                pairs.append((key, self.parse_expression()))
                if self.is_(PUNCT, b","):
                    self.advance()
                if self.i == before:
                    raise self._hang("dict")
            if self.is_(PUNCT, b"}"):
                self.advance()
            return DictLit(pairs)
        if self.check(STRING):
            return Lit(self.advance()[1])
        if self.check(IDENT):
            name = self.advance()[1]
            if name == b"true":
                return Lit(True)
            if name == b"false":
                return Lit(False)
            if name == b"none":
                return Lit(None)
            expr: Expr
            if self.is_(PUNCT, b"("):
                self.advance()
                expr = Call(name, self._call_args())
            else:
                expr = Var(name)
            while True:
                if self.is_(PUNCT, b"["):
                    self.advance()
                    start = stop = step = None
                    is_slice = False
                    if not self.is_(PUNCT, b":") and not self.is_(PUNCT, b"]"):
                        start = self.parse_expression()
                    if self.is_(PUNCT, b":"):
                        is_slice = True
                        self.advance()
                        if not self.is_(PUNCT, b":") and not self.is_(PUNCT, b"]"):
                            stop = self.parse_expression()
                        if self.is_(PUNCT, b":"):
                            self.advance()
                            if not self.is_(PUNCT, b"]"):
                                step = self.parse_expression()
                    if self.is_(PUNCT, b"]"):
                        self.advance()
                    if is_slice:
                        expr = GetItem(expr, Slice(start, stop, step))
                    else:
                        expr = GetItem(expr, start if start is not None else Lit(b""))
                elif self.is_(PUNCT, b"."):
                    self.advance()
                    if self.check(IDENT):
                        member = self.advance()[1]
                        if self.is_(PUNCT, b"("):
                            self.advance()
                            margs: list[Expr] = []
                            while not self.is_(PUNCT, b")"):
                                margs.append(self.parse_expression())
                                if self.is_(PUNCT, b","):
                                    self.advance()
                                else:
                                    break
                            if self.is_(PUNCT, b")"):
                                self.advance()
                            expr = Method(expr, member, margs)
                        else:
                            expr = GetAttr(expr, member)
                else:
                    break
            return expr
        if self.check(NUMBER):
            # strtol saturates at LONG_MAX (a run of digits has no sign), then (int) keeps 32 bits:
            # more than 19 significant digits is LONG_MAX without reading them (int() refuses
            # more than 4,300)
            digits = self.advance()[1].lstrip(b"0")
            value = _LONG_MAX if len(digits) > 19 else min(int(digits or b"0"), _LONG_MAX)
            value &= 0xFFFFFFFF
            return Lit(value - (1 << 32) if value >= 1 << 31 else value)
        if self.is_(PUNCT, b"("):
            self.advance()
            expr = self.parse_expression()
            if self.is_(PUNCT, b")"):
                self.advance()
            return expr
        return Lit(b"")


def parse(tokens: list[tuple[int, bytes]]) -> list[Node]:
    """The template's statement list."""
    return Parser(tokens).parse()


__all__ = ["parse", "Parser"]
