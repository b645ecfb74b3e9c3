"""Abstract values for deciding branches the way MNN would on a role/content conversation, and
the predicates over jinja2 expression nodes the checks use."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import jinja2.nodes as nodes

from mtokspec.chat.lint.engine import (
    CONTEXT_VARS,
    KNOWN_NAMES,
    MNN_ESCAPES,
    OTHER_SPECIAL_TOKENS,
)

# ---------------------------------------------------------------------------------------------
# Abstract values, for deciding branches the way MNN would on a role/content conversation
# ---------------------------------------------------------------------------------------------

UNDEF = "undefined"      # MNN's undefined marker
EMPTY = "empty"          # '' (what MNN gives for a missing key by subscript or .get())
NONE = "none"
STR = "string"           # a message's role or content in a plain conversation
UNKNOWN = None


@dataclass
class Scope:
    # names bound to a message (the variable of a loop over messages, a set of messages[i])
    message_vars: set[str] = field(default_factory=set)
    # context or caller variable -> its abstract value after the template's assignments
    values: dict[str, object] = field(default_factory=dict)



# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def free_names(ast: nodes.Template) -> set[str]:
    """Names read but never assigned by the template, other than those MNN or transformers pass."""
    loaded, stored = set(), set()
    for n in ast.find_all(nodes.Name):
        (stored if n.ctx in ("store", "param") else loaded).add(n.name)
    stored |= {m.name for m in ast.find_all(nodes.Macro)}
    return loaded - stored - KNOWN_NAMES - OTHER_SPECIAL_TOKENS


def target_key(e: nodes.Node) -> str | None:
    """``x`` for a variable, ``ns.attr`` for a namespace attribute (set target or read)."""
    if isinstance(e, nodes.Name):
        return e.name
    if isinstance(e, nodes.NSRef):
        return f"{e.name}.{e.attr}"
    if isinstance(e, nodes.Getattr) and isinstance(e.node, nodes.Name):
        return f"{e.node.name}.{e.attr}"
    return None


def is_boolean(e: nodes.Expr) -> bool:
    """Statically a boolean (where jinja's and/or give what MNN gives)."""
    if isinstance(e, (nodes.And, nodes.Or)):
        return is_boolean(e.left) and is_boolean(e.right)
    if isinstance(e, nodes.Getattr):  # loop.first, loop.last
        return isinstance(e.node, nodes.Name) and e.node.name == "loop" and e.attr in ("first", "last")
    if isinstance(e, nodes.Call):
        return isinstance(e.node, nodes.Getattr) and e.node.attr in ("startswith", "endswith")
    return isinstance(e, (nodes.Compare, nodes.Test, nodes.Not)) or (
        isinstance(e, nodes.Const) and isinstance(e.value, bool))


def op_name(e: nodes.Expr) -> str:
    return "and" if isinstance(e, nodes.And) else "or"


def operands(e: nodes.Expr) -> Iterator[nodes.Expr]:
    if isinstance(e, (nodes.Add, nodes.Concat)):
        yield from ([e.left, e.right] if isinstance(e, nodes.Add) else e.nodes)
    elif isinstance(e, nodes.Compare):
        yield e.expr
        yield from (o.expr for o in e.ops)
    elif isinstance(e, nodes.Filter):
        if e.node is not None:
            yield e.node
        yield from e.args
    elif isinstance(e, nodes.Call):
        yield from e.args


def falsy_const(e: nodes.Expr) -> bool:
    if isinstance(e, nodes.Const):
        return not e.value
    return isinstance(e, (nodes.List, nodes.Dict)) and not e.items


def const_key(e: nodes.Expr) -> str | None:
    if isinstance(e, nodes.Getattr):
        return e.attr
    if isinstance(e, nodes.Getitem) and isinstance(e.arg, nodes.Const) and isinstance(e.arg.value, str):
        return e.arg.value
    return None


def is_messages(e: nodes.Expr) -> bool:
    """A list of messages: ``messages``, ``loop_messages`` (or a slice or filter of one)."""
    while isinstance(e, (nodes.Getitem, nodes.Filter)):
        if isinstance(e, nodes.Getitem) and not isinstance(e.arg, nodes.Slice):
            return False
        e = e.node
    return isinstance(e, nodes.Name) and e.name.endswith("messages")


def is_message_ref(e: nodes.Expr, scope: Scope) -> bool:
    if isinstance(e, nodes.Name):
        return e.name in scope.message_vars
    return is_message_item(e, scope)


def is_message_item(e: nodes.Expr, scope: Scope) -> bool:
    return (isinstance(e, nodes.Getitem) and not isinstance(e.arg, nodes.Slice) and is_messages(e.node)) or (
        isinstance(e, nodes.Name) and e.name in scope.message_vars)


def is_indexed_in(target: nodes.Expr, root: nodes.Expr) -> bool:
    """Whether ``target`` is the object of a subscript inside ``root``."""
    return any(g.node is target for g in [root, *root.find_all(nodes.Getitem)] if isinstance(g, nodes.Getitem))


def is_role(e: nodes.Expr, scope: Scope) -> bool:
    """A message's role, maybe through |lower, |trim, |string."""
    while isinstance(e, nodes.Filter) and e.name in ("lower", "trim", "string"):
        e = e.node
    return const_key(e) == "role" and is_message_ref(e.node, scope)  # type: ignore[union-attr]


def is_stringish(e: nodes.Expr, scope: Scope) -> bool:
    """Statically a string: a literal, a concatenation, or a message's role/content."""
    if isinstance(e, nodes.Const):
        return isinstance(e.value, str)
    if isinstance(e, nodes.Concat):
        return True
    if isinstance(e, nodes.CondExpr):
        return e.expr2 is not None and is_stringish(e.expr1, scope) and is_stringish(e.expr2, scope)
    if isinstance(e, nodes.Filter) and e.name in ("string", "trim", "upper", "lower", "tojson", "join"):
        return True
    key = const_key(e)
    return key in ("role", "content") and is_message_ref(e.node, scope)  # type: ignore[union-attr]


def unparsable_inside(e: nodes.Expr) -> str | None:
    """What in this literal MNN's parser cannot consume (so its list/dict loop never ends)."""
    for sub in e.find_all(nodes.Expr):
        if isinstance(sub, (nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Pow)):
            return f"the operator '{sub.operator}'"
        if isinstance(sub, nodes.Const) and isinstance(sub.value, float):
            return f"the float {sub.value!r}"
        if isinstance(sub, nodes.Tuple):
            return "a tuple"
        if isinstance(sub, nodes.Test) and (sub.args or sub.kwargs):
            return f"the test '{sub.name}' with arguments"
    return None


def only_raises(body: list[nodes.Node]) -> bool:
    """Nothing but raise_exception(...) calls and white space."""
    for node in body:
        if not isinstance(node, nodes.Output):
            return False
        for child in node.nodes:
            if isinstance(child, nodes.TemplateData):
                if child.data.strip():
                    return False
            elif not (isinstance(child, nodes.Call) and isinstance(child.node, nodes.Name)
                      and child.node.name == "raise_exception"):
                return False
    return True


def normalises(node: nodes.If) -> bool:
    """``{% if X is not defined %}{% set X = ... %}{% endif %}`` for a context variable X."""
    t = node.test
    if isinstance(t, nodes.Not):
        t, negated = t.node, True
    else:
        negated = False
    if not (isinstance(t, nodes.Test) and isinstance(t.node, nodes.Name) and t.node.name in CONTEXT_VARS):
        return False
    if (t.name == "defined") != negated:
        return False
    return bool(node.body) and all(isinstance(s, nodes.Assign) and isinstance(s.target, nodes.Name)
                                   and s.target.name == t.node.name for s in node.body)


#: what transformers passes for each name MNN may leave undefined (a guard's default must be it)
_TRANSFORMERS_PASSES: dict[str, object] = {"tools": None, "documents": None, "add_generation_prompt": False,
                                           "bos_token": ""}


def defaults_as_transformers(e: nodes.Expr) -> str | None:
    """The name X of ``X if X is defined else D`` (or ``D if X is not defined else X``, ``is
    undefined``) when X is a context variable or ``bos_token`` and D the constant transformers
    passes for it (None, False, ''): both engines give transformers' value whether MNN defines X or
    not, so the test of X is no difference (the ``--target mnn`` rewrite prints every such name so)."""
    if not (isinstance(e, nodes.CondExpr) and e.expr2 is not None):
        return None
    t, negated = e.test, False
    if isinstance(t, nodes.Not):
        t, negated = t.node, True
    if not (isinstance(t, nodes.Test) and t.name in ("defined", "undefined") and not t.args
            and isinstance(t.node, nodes.Name) and t.node.name in _TRANSFORMERS_PASSES):
        return None
    name = t.node.name
    kept, default = (e.expr1, e.expr2) if (t.name == "defined") != negated else (e.expr2, e.expr1)
    passed = _TRANSFORMERS_PASSES[name]
    if (isinstance(kept, nodes.Name) and kept.name == name and isinstance(default, nodes.Const)
            and type(default.value) is type(passed) and default.value == passed):
        return name
    return None


def bad_escapes(body: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            if body[i + 1] not in MNN_ESCAPES:
                out.append("\\" + body[i + 1])
            i += 2
        else:
            i += 1
    return out


def short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:18] + "..." + text[-18:])
