"""The rewrite's printer: a parsed template back as Jinja that MNN's engine reads as meant, each
construct MNN renders differently written as an equivalent both engines render alike (the choices:
``docs/design/chat-mnn.md``)."""

from __future__ import annotations

import jinja2.nodes as nodes

from mtokspec.chat.rewrite.analysis import (
    REPR, booleanish, chainable, has_control, markup_plan, pure, str_lit, stringish, text,
)
from mtokspec.chat.lint import RAISED  # what MNN renders where transformers raises
from mtokspec.chat.rewrite.expressions import ExprPrinter
from mtokspec.chat.rewrite.macros import (
    EQ_MACRO, ESCAPE_MACRO, REPR_MACRO, TITLE_MACROS, TOJSON_IND_MACRO, TOJSON_MACRO, macro_signatures,
)
from mtokspec.chat.rewrite.names import BODY, ERR, Unprintable


class _Printer(ExprPrinter):
    """One template's printing: its state, the statements (the expressions: ``ExprPrinter``)."""

    def __init__(self, groups: set[str], bos_empty: bool | None):
        self.g = groups
        self.bos_empty = bos_empty
        self.applied: set[str] = set()
        self.macros: set[str] = set()
        self.need_tojson = False
        self.need_repr = False
        self.need_raise = False
        self.need_tojson_indent = False
        self.need_escape = False
        self.need_eq = False
        self.need_title: set[str] = set()  # "method" (str.title) and/or "filter" (jinja's |title)
        self.signatures: dict[str, tuple[list[str], dict[str, nodes.Expr]] | None] = {}
        self.markup_names: set[str] = set()  # variables only ever set to a Markup value (|safe ...)
        self.markup_ok = False  # every Markup value is used where it can be printed plain
        self.missed: set[str] = set()
        self.counter = 0
        self.loops: list[str | None] = []  # per enclosing for: its control namespace (break/continue)
        self.iters: list[str | None] = []  # per enclosing for: its iterable when loop.previtem can index it
        self.pre: list[str] | None = None  # statements hoisted before the one being printed

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"mnn_{stem}{self.counter}"

    def hoisted(self, head) -> tuple[str, str]:
        """Print ``head()`` (a statement's expressions), with what it hoists."""
        outer, self.pre = self.pre, []
        try:
            text = head()
            return "".join(self.pre), text
        finally:
            self.pre = outer

    def on(self, rule: str) -> bool:
        if rule in self.g:
            self.applied.add(rule)
            return True
        return False

    # statements
    def body(self, body: list[nodes.Node]) -> str:
        flag = self.loops[-1] if self.loops else None
        out = []
        for i, n in enumerate(body):
            out.append(self.stmt(n))
            if flag is not None and has_control(n) and i + 1 < len(body):
                rest = self.body(body[i + 1:])
                out.append("{% if not (" + flag + ".stop or " + flag + ".skip) %}" + rest + "{% endif %}")
                break
        return "".join(out)

    def stmt(self, n: nodes.Node) -> str:
        if isinstance(n, nodes.Output):
            return "".join(text(c.data) if isinstance(c, nodes.TemplateData) else "".join(self.hoisted(
                lambda c=c: self.output(c))) for c in n.nodes)
        if isinstance(n, nodes.If):
            pre, tests = self.hoisted(lambda: [self.cond(t) for t in [n.test, *(el.test for el in n.elif_)]])
            s = pre + "{% if " + tests[0] + " %}" + self.body(n.body)
            for el, t in zip(n.elif_, tests[1:]):
                s += "{% elif " + t + " %}" + self.body(el.body)
            if n.else_:
                s += "{% else %}" + self.body(n.else_)
            return s + "{% endif %}"
        if isinstance(n, nodes.For):
            if n.recursive:
                raise Unprintable("recursive loop")
            pre, it = self.hoisted(lambda: self.atom(n.iter))
            if (isinstance(n.iter, nodes.Dict) and isinstance(n.target, nodes.Name)
                    and all(isinstance(p.key, nodes.Const) and type(p.key.value) is str for p in n.iter.items)
                    and self.on("mnn-jinja-unsupported-statement")):
                it = "[" + ", ".join(self.expr(p.key) for p in n.iter.items) + "]"  # MNN sorts a mapping's keys
            head = "{% for " + self.target(n.target) + " in " + it
            if n.test is not None:
                outer, self.pre = self.pre, None  # the test reads the loop variable: nothing hoisted
                head += " if " + self.cond(n.test)
                self.pre = outer
            flag = None
            if any(has_control(b) for b in n.body) and self.on("mnn-jinja-unsupported-statement"):
                flag = self.fresh("loop")
                pre += "{% set " + flag + " = namespace(stop=false, skip=false) %}"
            self.loops.append(flag)
            self.iters.append(it if n.test is None and pure(n.iter) and chainable(n.iter) else None)
            try:
                body = self.body(n.body)
            finally:
                self.loops.pop()
                self.iters.pop()
            if flag is not None:
                body = "{% if not " + flag + ".stop %}{% set " + flag + ".skip = false %}" + body + "{% endif %}"
            s = pre + head + " %}" + body
            if n.else_:
                if n.test is None and pure(n.iter) and self.on("mnn-jinja-unsupported-statement"):
                    return s + "{% endfor %}{% if not " + self.atom(n.iter) + " %}" + self.body(n.else_) + "{% endif %}"
                s += "{% else %}" + self.body(n.else_)
            return s + "{% endfor %}"
        if isinstance(n, nodes.Assign):
            pre, value = self.hoisted(lambda: self.expr(n.node))
            return pre + "{% set " + self.target(n.target) + " = " + value + " %}"
        if isinstance(n, nodes.AssignBlock):
            if n.filter is not None:
                raise Unprintable("filtered set block")
            if isinstance(n.target, nodes.Name) and self.on("mnn-jinja-unsupported-statement"):
                block = self.fresh("block")  # a macro captures the body's output as the set block does
                outer_pre, self.pre = self.pre, None
                try:
                    body = self.body(n.body)
                finally:
                    self.pre = outer_pre
                return ("{% macro " + block + "() %}" + body + "{% endmacro %}{% set " + n.target.name + " = "
                        + block + "() %}")
            self.missed.add("mnn-jinja-unsupported-statement")
            return "{% set " + self.target(n.target) + " %}" + self.body(n.body) + "{% endset %}"
        if isinstance(n, nodes.Macro):
            self.macros.add(n.name)
            params = []
            pro = ""
            nd = len(n.defaults)
            explicit = self.signatures.get(n.name) is not None
            for i, a in enumerate(n.args):
                d = n.defaults[i - (len(n.args) - nd)] if i >= len(n.args) - nd else None
                if d is not None and explicit and self.on("mnn-jinja-macro-default"):
                    params.append(a.name)  # every call passes it (see call())
                elif d is not None and self.on("mnn-jinja-macro-default"):
                    params.append(a.name)
                    pro += "{% if " + a.name + " is not defined %}{% set " + a.name + " = " + self.expr(d) + " %}{% endif %}"
                else:
                    params.append(a.name + ("" if d is None else "=" + self.expr(d)))
            outer_loops, outer_iters, self.loops, self.iters = self.loops, self.iters, [], []
            outer_pre, self.pre = self.pre, None
            try:
                body = self.body(n.body)
            finally:
                self.loops, self.iters, self.pre = outer_loops, outer_iters, outer_pre
            return "{% macro " + n.name + "(" + ", ".join(params) + ") %}" + pro + body + "{% endmacro %}"
        if isinstance(n, (nodes.Break, nodes.Continue)):
            flag = self.loops[-1] if self.loops else None
            if flag is None:
                self.missed.add("mnn-jinja-unsupported-statement")
                return "{% break %}" if isinstance(n, nodes.Break) else "{% continue %}"
            return "{% set " + flag + (".stop" if isinstance(n, nodes.Break) else ".skip") + " = true %}"
        if isinstance(n, nodes.ExprStmt):
            return "{% do " + self.expr(n.node) + " %}"
        raise Unprintable(type(n).__name__)

    def target(self, t: nodes.Node) -> str:
        if isinstance(t, nodes.Name):
            return t.name
        if isinstance(t, nodes.NSRef):
            return f"{t.name}.{t.attr}"
        if isinstance(t, nodes.Tuple):
            return ", ".join(self.target(i) for i in t.items)
        raise Unprintable(type(t).__name__)

    def output(self, e: nodes.Expr) -> str:
        if (isinstance(e, nodes.Call) and isinstance(e.node, nodes.Name) and e.node.name == "raise_exception"
                and self.on("mnn-jinja-raise-noop")):
            self.need_raise = True
            msg = self.expr(e.args[0]) if e.args else "''"
            return ("{% if raise_exception is defined %}{{ raise_exception(" + msg + ") }}{% endif %}"
                    "{% if not " + ERR + ".raised %}{% set " + ERR + ".message = " + msg + " %}{% endif %}"
                    "{% set " + ERR + ".raised = true %}")
        if isinstance(e, nodes.Call) and isinstance(e.node, nodes.Name) and e.node.name == "raise_exception":
            self.missed.add("mnn-jinja-raise-noop")
        if booleanish(e) and self.on("mnn-jinja-print-non-string"):
            return "{{ 'True' if " + self.atom(e) + " else 'False' }}"
        if not stringish(e, self.macros):
            if pure(e) and self.on("mnn-jinja-print-non-string"):
                a = self.atom(e)
                self.need_repr = True
                shown = f"({a} if {a} is string else {REPR}({a}))"
                if a.endswith("]"):  # MNN's x[i] is never undefined ('' when missing)
                    return "{{ " + shown + " }}"
                return "{{ " + shown + " if " + a + " is defined else '' }}"
            self.missed.add("mnn-jinja-print-non-string")
        return "{{ " + self.expr(e) + " }}"

    # expressions


def print_template(ast: nodes.Template, groups: set[str], bos_empty: bool | None) -> tuple[str, set[str]]:
    """The template printed with the rewrites of ``groups``, and the rules it rewrote fully."""
    p = _Printer(groups, bos_empty)
    p.signatures = macro_signatures(ast)
    p.markup_names, p.markup_ok = markup_plan(ast)
    body = p.body(ast.body)
    head = ((TOJSON_MACRO if p.need_tojson else "") + (REPR_MACRO if p.need_repr else "")
            + (TOJSON_IND_MACRO if p.need_tojson_indent else "") + (ESCAPE_MACRO if p.need_escape else "")
            + (EQ_MACRO if p.need_eq else "")
            + "".join(TITLE_MACROS[k] for k in sorted(p.need_title)))
    if p.need_raise:
        head += _RAISE_HEAD
        body = _RAISE_BODY[0] + body + _RAISE_BODY[1] + _RAISE_TAIL
    return head + body, p.applied - p.missed


# A template with a guarded raise_exception: its body renders into a macro; the prompt is the marker
# when a raise was reached, else the body's output.
_RAISE_HEAD = "{% set " + ERR + " = namespace(raised=false, message='') %}"
_RAISE_BODY = ("{% macro " + BODY + "() %}", "{% endmacro %}{% set " + BODY + "_out = " + BODY + "() %}")
_RAISE_TAIL = ("{% if " + ERR + ".raised %}{{ " + str_lit(RAISED) + " ~ " + ERR + ".message }}"
               "{% else %}{{ " + BODY + "_out }}{% endif %}")
#: The same template printing only whether a raise was reached (MNN prints ``true``/``false``).
_RAISE_PROBE_TAIL = "{{ " + ERR + ".raised }}"


def raise_probe(template: str) -> str | None:
    """For a template :func:`print_template` wrote with a guarded raise: the same template printing
    only whether a raise was reached (``None`` for any other template)."""
    if not (template.endswith(_RAISE_TAIL) and _RAISE_HEAD in template):
        return None
    return template[:-len(_RAISE_TAIL)] + _RAISE_PROBE_TAIL
