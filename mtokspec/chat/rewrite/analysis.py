"""What the rewrite's printer asks of an expression: its type where it can be told, whether it is
pure, how MNN's lexer reads a literal."""

from __future__ import annotations

import jinja2.nodes as nodes

# the printer's helper macros (their output is a string; the lint reads their calls, not their bodies)
from mtokspec.chat.lint.guards import EQ, ESCAPE, REPR, TITLE, TOJSON, TOJSON_IND  # noqa: E402,F401

STR_FILTERS = {"trim", "upper", "lower", "capitalize", "tojson", "join", "string", "replace", "title", "indent",
                "center", "format", "striptags", "wordwrap", "truncate", "urlencode", "e", "escape", "safe"}


def str_lit(s: str) -> str:
    """A string literal MNN's lexer and jinja2 both read as ``s``."""
    out = ["'"]
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("\\'")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        else:
            out.append(ch)
    out.append("'")
    return "".join(out)


def text(data: str) -> str:
    """Template text MNN's lexer (and jinja2's with trim/lstrip_blocks) gives back unchanged."""
    out = []
    if data.startswith("\n"):
        out.append("{{ '\\n' }}")
        data = data[1:]
    tail = ""
    cut = data.rfind("\n") + 1
    if cut < len(data) and data[cut:].strip(" \t") == "":
        data, tail = data[:cut], data[cut:]
    i = 0
    buf = []
    while i < len(data):
        ch = data[i]
        if ch == "{" and (i + 1 == len(data) or data[i + 1] in "{%#"):  # a tag follows the text
            buf.append("{{ '{' }}")
        else:
            buf.append(ch)
        i += 1
    out.append("".join(buf))
    if tail:
        out.append("{{ " + str_lit(tail) + " }}")
    return "".join(out)


BINOPS = {nodes.Add: "+", nodes.Sub: "-", nodes.Mul: "*", nodes.Div: "/", nodes.FloorDiv: "//",
           nodes.Mod: "%", nodes.Pow: "**"}
CMP = {"eq": "==", "ne": "!=", "lt": "<", "lteq": "<=", "gt": ">", "gteq": ">=", "in": "in", "notin": "not in"}


def chainable(e: nodes.Expr) -> bool:
    """MNN reads ``.attr``, ``[i]`` and ``.method()`` only after a name or a call of a name."""
    if isinstance(e, nodes.Name):
        return True
    if isinstance(e, (nodes.Getattr, nodes.Getitem)):
        return chainable(e.node)
    if isinstance(e, nodes.Call):
        return isinstance(e.node, nodes.Name) or (isinstance(e.node, nodes.Getattr) and chainable(e.node.node))
    return False


PURE_FUNCTIONS = {"range", "namespace", "strftime_now", "dict"}
PURE_METHODS = {"startswith", "endswith", "split", "strip", "lstrip", "rstrip", "replace", "upper", "lower", "get",
                 "items", "keys", "values", "title", "capitalize", "count", "find", "join"}


def pure(e: nodes.Node) -> bool:
    """No macro call (which could set a namespace): evaluating it twice is harmless."""
    for n in [e, *e.find_all(nodes.Call)]:
        if not isinstance(n, nodes.Call):
            continue
        f = n.node
        if isinstance(f, nodes.Name) and f.name in PURE_FUNCTIONS:
            continue
        if isinstance(f, nodes.Getattr) and f.attr in PURE_METHODS:
            continue
        return False
    return True


def is_int_const(e: nodes.Expr) -> bool:
    return isinstance(e, nodes.Const) and type(e.value) is int


def stringish(e: nodes.Expr, macros: set[str]) -> bool:
    """Statically a string (or an int), printed the same by MNN and Python."""
    if isinstance(e, nodes.Const):
        return type(e.value) in (str, int)
    if isinstance(e, (nodes.Concat, nodes.TemplateData)):
        return True
    if isinstance(e, nodes.Filter):
        return e.name in STR_FILTERS or e.name in ("length", "count")
    if isinstance(e, nodes.Call):
        if isinstance(e.node, nodes.Name):
            return e.node.name in macros or e.node.name in ("strftime_now", TOJSON, REPR, TOJSON_IND, ESCAPE)
        if isinstance(e.node, nodes.Getattr):
            return e.node.attr in ("strip", "lstrip", "rstrip", "replace", "upper", "lower")
    if isinstance(e, nodes.Add):  # str + x is a str or an error in Python
        return str_typed(e.left, macros) or str_typed(e.right, macros)
    if isinstance(e, nodes.Name):
        return e.name in ("bos_token", "eos_token")
    if isinstance(e, nodes.CondExpr):
        return stringish(e.expr1, macros) and (e.expr2 is None or stringish(e.expr2, macros))
    return False


def str_typed(e: nodes.Expr, macros: set[str]) -> bool:
    """Statically a string (not an int)."""
    if isinstance(e, nodes.Const):
        return type(e.value) is str
    return stringish(e, macros) and not (isinstance(e, nodes.Filter) and e.name in ("length", "count"))


def has_control(n: nodes.Node) -> bool:
    """A break/continue of the enclosing loop inside ``n`` (not one of a loop nested in it)."""
    if isinstance(n, (nodes.Break, nodes.Continue)):
        return True
    if isinstance(n, (nodes.For, nodes.Macro)):
        return False
    return any(has_control(c) for c in n.iter_child_nodes() if isinstance(c, nodes.Stmt))


def booleanish(e: nodes.Expr) -> bool:
    return isinstance(e, (nodes.Compare, nodes.Test, nodes.Not)) or (
        isinstance(e, nodes.Const) and type(e.value) is bool)


# --- Markup (|safe): transformers HTML-escapes what '+' joins to it ---------------------------------

MARKUP_MAKERS = {"safe", "e", "escape", "forceescape"}
#: filters and string methods whose result is Markup when their input is (autoescape off)
MARKUP_KEEPERS = {"trim", "upper", "lower", "capitalize", "title", "string", "strip", "lstrip", "rstrip"}


def markup(e: nodes.Expr, names: set[str]) -> bool:
    """Statically a Markup string under transformers (``names``: variables only ever set to one)."""
    if isinstance(e, nodes.Filter):
        if e.name in MARKUP_MAKERS:
            return True
        return e.name in MARKUP_KEEPERS and e.node is not None and markup(e.node, names)
    if isinstance(e, nodes.Add):
        return markup(e.left, names) or markup(e.right, names)
    if isinstance(e, nodes.Call) and isinstance(e.node, nodes.Getattr) and e.node.attr in MARKUP_KEEPERS:
        return markup(e.node.node, names)
    if isinstance(e, nodes.CondExpr):
        return markup(e.expr1, names) and e.expr2 is not None and markup(e.expr2, names)
    if isinstance(e, nodes.Name):
        return e.name in names
    return False


def markup_plan(ast: nodes.Template) -> tuple[set[str], bool]:
    """(the variables only ever set to Markup, whether every Markup value is used where printing it
    as a plain string with the escapes written out is exact: an operand of ``+``, ``~``, a
    comparison or a test, printed, a keeper's input, or set to such a variable)."""
    assigned: dict[str, list[nodes.Expr]] = {}
    for a in ast.find_all(nodes.Assign):
        if isinstance(a.target, nodes.Name):
            assigned.setdefault(a.target.name, []).append(a.node)
    names: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, values in assigned.items():
            if name not in names and all(markup(v, names) for v in values):
                names.add(name)
                changed = True
    mixed = {n for n, vs in assigned.items() if n not in names and any(markup(v, names) for v in vs)}
    ok = [not mixed]

    def walk(n: nodes.Node, parent: nodes.Node | None) -> None:
        if isinstance(n, nodes.Expr) and markup(n, names) and not _markup_sink(n, parent, names):
            ok[0] = False
        for c in n.iter_child_nodes():
            walk(c, n)

    walk(ast, None)
    return names, ok[0]


def _markup_sink(e: nodes.Expr, parent: nodes.Node | None, names: set[str]) -> bool:
    if isinstance(parent, (nodes.Add, nodes.Concat, nodes.Compare, nodes.Operand, nodes.Output, nodes.Test,
                           nodes.If, nodes.Not, nodes.And, nodes.Or)):
        return True
    if isinstance(parent, nodes.CondExpr):
        return parent.test is e or markup(parent, names)
    if isinstance(parent, nodes.Filter):
        return parent.node is e and (parent.name in MARKUP_KEEPERS | MARKUP_MAKERS | {"length", "tojson"})
    if isinstance(parent, nodes.Getattr):  # a keeper method (its call is the markup value)
        return parent.attr in MARKUP_KEEPERS
    if isinstance(parent, nodes.Call):
        return isinstance(parent.node, nodes.Getattr) and parent.node.attr in MARKUP_KEEPERS and not parent.args
    if isinstance(parent, nodes.Assign):
        return isinstance(parent.target, nodes.Name) and parent.target.name in names
    return False
