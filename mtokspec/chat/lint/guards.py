"""What MNN's engine evaluates of the guards ``rewrite_for_mnn`` writes (and that read the same
wherever they are written): the lint reads a rewritten template through :func:`mnn_view`, so it
reports what the rewrite could not make equal and not the rewrite's own, exact, constructs.

* ``A if raise_exception is defined else B``: MNN defines no ``raise_exception``, so it evaluates
  ``B`` (``B`` for ``A`` = ``x|dictsort`` visits the keys sorted bytewise: an approximation); ``{% if raise_exception is defined %}...{% endif %}`` renders nothing there (a
  ``raise_exception(msg)`` inside is the rewrite's raise contract, returned as :class:`GuardedRaise`);
* ``x if x is defined else D`` where ``D`` is what transformers passes for an undefined ``x``
  (``none`` for ``tools``/``documents``, ``false`` for ``add_generation_prompt``, ``''`` for
  ``bos_token``): both engines give transformers' value;
* ``x is defined and x is mapping`` and ``x is sequence or (x is defined and x is mapping)``:
  transformers' ``mapping`` and ``sequence`` tests (MNN's undefined is a mapping, its ``sequence``
  false for mappings); ``x is sequence and x is not mapping``: a list;
* ``x if x is string else __mnn_repr(x)``: Python's ``str(x)``, a string;
* the bodies of the rewrite's helper macros (:data:`HELPERS`), right by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import jinja2.nodes as nodes
from jinja2.visitor import NodeTransformer

#: The rewrite's helper macros (``mtokspec.chat.rewrite``'s printer writes them; their output is a string).
TOJSON = "__mnn_tojson"
TOJSON_IND = "__mnn_tojson_indent"
REPR = "__mnn_repr"
ESCAPE = "__mnn_escape"
EQ = "__mnn_eq"  # 'T' where two values are equal as transformers compares them
TITLE = "__mnn_title"  # TITLE + "_method" (str.title), TITLE + "_filter" (|title)
HELPERS = {TOJSON, TOJSON_IND, REPR, ESCAPE, EQ, TITLE + "_method", TITLE + "_filter"}
#: What transformers passes where the caller gives nothing, as the guard's else writes it.
_HF_DEFAULTS: dict[str, object] = {"tools": None, "documents": None, "add_generation_prompt": False,
                                   "bos_token": ""}


@dataclass(frozen=True)
class GuardedRaise:
    """A ``raise_exception(message)`` only transformers calls (``message``: its source)."""

    lineno: int
    message: str


@dataclass
class MnnView:
    """The guards found: tests the lint must not report, and the guarded raises."""

    exact_tests: set[int] = field(default_factory=set)  # id() of Test nodes that are guards
    raises: list[GuardedRaise] = field(default_factory=list)
    #: (line, rule, message): what MNN's side of an engine switch still renders otherwise
    approximations: list[tuple[int, str, str]] = field(default_factory=list)


def _hf_probe(e: nodes.Node) -> bool:
    """``raise_exception is defined``: true on transformers only."""
    return (isinstance(e, nodes.Test) and e.name == "defined" and not e.args and isinstance(e.node, nodes.Name)
            and e.node.name == "raise_exception")


def _same(a: nodes.Node, b: nodes.Node) -> bool:
    """The same variable read (``x``, ``x.a``, ``x.a.b``)."""
    if isinstance(a, nodes.Name) and isinstance(b, nodes.Name):
        return a.name == b.name
    if isinstance(a, nodes.Getattr) and isinstance(b, nodes.Getattr):
        return a.attr == b.attr and _same(a.node, b.node)
    return False


def _test_of(e: nodes.Node, name: str) -> nodes.Expr | None:
    """The operand of ``operand is name`` (no arguments), else None."""
    if isinstance(e, nodes.Test) and e.name == name and not e.args and not e.kwargs:
        return e.node
    return None


class _View(NodeTransformer):
    def __init__(self) -> None:
        self.view = MnnView()

    def visit_Macro(self, node: nodes.Macro) -> nodes.Node:
        if node.name in HELPERS:
            node.body = []
            return node
        return self.generic_visit(node)

    def visit_If(self, node: nodes.If) -> object:
        if _hf_probe(node.test) and not node.elif_:
            for call in node.find_all(nodes.Call):
                if isinstance(call.node, nodes.Name) and call.node.name == "raise_exception":
                    msg = call.args[0] if call.args else nodes.Const("")
                    self.view.raises.append(GuardedRaise(node.lineno, _source(msg)))
            kept: list[nodes.Node] = []
            for n in node.else_:
                r = self.visit(n)
                kept.extend(r if isinstance(r, list) else [r] if r is not None else [])
            return kept
        return self.generic_visit(node)

    def visit_CondExpr(self, node: nodes.CondExpr) -> nodes.Node:
        if _hf_probe(node.test) and node.expr2 is not None:
            if isinstance(node.expr1, nodes.Filter) and node.expr1.name == "dictsort":
                self.view.approximations.append((node.lineno, "mnn-jinja-unsupported-filter", (
                    "dictsort, on MNN by a loop over the mapping: its keys sorted bytewise (transformers: "
                    "case-insensitively), which differs for keys that differ in case")))
            return self.visit(node.expr2)
        node = self.generic_visit(node)
        s = _test_of(node.test, "string")
        if (s is not None and _same(s, node.expr1) and isinstance(node.expr2, nodes.Call)
                and isinstance(node.expr2.node, nodes.Name) and node.expr2.node.name == REPR
                and len(node.expr2.args) == 1 and _same(s, node.expr2.args[0])):
            return node.expr2  # x if x is string else __mnn_repr(x): Python's str(x), a string
        x = _test_of(node.test, "defined")
        if (x is not None and node.expr2 is not None and _same(x, node.expr1) and isinstance(x, nodes.Name)
                and x.name in _HF_DEFAULTS and isinstance(node.expr2, nodes.Const)
                and node.expr2.value == _HF_DEFAULTS[x.name]
                and type(node.expr2.value) is type(_HF_DEFAULTS[x.name])):
            self.view.exact_tests.add(id(node.test))
        return node

    def visit_And(self, node: nodes.And) -> nodes.Node:
        node = self.generic_visit(node)
        x, y = _test_of(node.left, "defined"), _test_of(node.right, "mapping")
        if x is not None and y is not None and _same(x, y):
            self.view.exact_tests.add(id(node.right))
        x = _test_of(node.left, "sequence")
        y = _test_of(node.right.node, "mapping") if isinstance(node.right, nodes.Not) else None
        if x is not None and y is not None and _same(x, y):  # a list (x[i] is defined, by length)
            self.view.exact_tests.update((id(node.left), id(node.right.node)))
        return node

    def visit_Or(self, node: nodes.Or) -> nodes.Node:
        node = self.generic_visit(node)
        x = _test_of(node.left, "sequence")
        if x is not None and isinstance(node.right, nodes.And) and id(node.right.right) in self.view.exact_tests:
            y = _test_of(node.right.right, "mapping")
            if y is not None and _same(x, y):
                self.view.exact_tests.add(id(node.left))
        return node


def _source(e: nodes.Expr) -> str:
    if isinstance(e, nodes.Const):
        return repr(e.value)
    return "an expression"


def mnn_view(ast: nodes.Template) -> MnnView:
    """Rewrite ``ast`` in place to what MNN's engine evaluates of the guards (see the module)."""
    v = _View()
    v.visit(ast)
    return v.view
