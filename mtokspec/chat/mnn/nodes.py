"""The tree MNN's Jinja parser builds (``jinja.hpp``): expression nodes (literals, names, attribute
and item access, calls, methods, filters, operators, tests, literals) and statement nodes (text,
print, set, for, if, macro), which :mod:`.render` walks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


# --- expressions -----------------------------------------------------------------------------------


class Expr:
    __slots__ = ()


@dataclass(slots=True)
class Lit(Expr):
    value: Any


@dataclass(slots=True)
class Var(Expr):
    name: bytes


@dataclass(slots=True)
class GetAttr(Expr):
    obj: Expr
    name: bytes


@dataclass(slots=True)
class Slice(Expr):
    start: Expr | None
    stop: Expr | None
    step: Expr | None


@dataclass(slots=True)
class GetItem(Expr):
    obj: Expr
    key: Expr


@dataclass(slots=True)
class Call(Expr):
    name: bytes
    args: list[tuple[bytes, Expr]]


@dataclass(slots=True)
class Method(Expr):
    obj: Expr
    name: bytes
    args: list[Expr]


@dataclass(slots=True)
class Filter(Expr):
    left: Expr
    name: bytes
    args: list[tuple[bytes, Expr]]


@dataclass(slots=True)
class Binary(Expr):
    op: bytes
    left: Expr
    right: Expr


@dataclass(slots=True)
class Test(Expr):
    expr: Expr
    name: bytes
    negated: bool


@dataclass(slots=True)
class Ternary(Expr):
    cond: Expr
    yes: Expr
    no: Expr


@dataclass(slots=True)
class ListLit(Expr):
    items: list[Expr]


@dataclass(slots=True)
class DictLit(Expr):
    items: list[tuple[Expr, Expr]]


# --- statements ------------------------------------------------------------------------------------


class Node:
    __slots__ = ()


@dataclass(slots=True)
class TextNode(Node):
    text: bytes


@dataclass(slots=True)
class PrintNode(Node):
    expr: Expr


@dataclass(slots=True)
class SetNode(Node):
    target: Expr
    value: Expr


@dataclass(slots=True)
class ForNode(Node):
    vars: list[bytes]
    iterable: Expr
    body: list[Node]
    cond: Expr | None


@dataclass(slots=True)
class IfNode(Node):
    cond: Expr
    yes: list[Node]
    no: list[Node]


@dataclass(slots=True)
class MacroNode(Node):
    name: bytes
    params: list[bytes]
    body: list[Node]
