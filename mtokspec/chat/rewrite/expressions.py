"""The rewrite's printer of expressions: each expression node back as Jinja, a construct MNN
renders differently as an equivalent both engines render alike."""

from __future__ import annotations

import re
from typing import Any

import jinja2.nodes as nodes

from mtokspec.chat.rewrite.analysis import (
    BINOPS, CMP, EQ, ESCAPE, REPR, TITLE, TOJSON, TOJSON_IND, chainable, is_int_const, markup,
    pure, str_lit, stringish,
)
from mtokspec.chat.rewrite.names import CTX_DEFAULTS, IDENT, MNN_TESTS, ON_HF, STRING_FILTERS, UNDEF, Unprintable


def _balanced_outer(s: str) -> bool:
    """Whether the first '(' of ``s`` closes at its last character (string literals skipped)."""
    depth = 0
    quote = None
    i = 0
    while i < len(s):
        c = s[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0 and i != len(s) - 1:
                return False
        i += 1
    return depth == 0


def _maybe_mapping(e: nodes.Expr) -> bool:
    """A variable or an item of one (``m``, ``msgs[-1]``): maybe a mapping, which MNN's == misjudges."""
    if isinstance(e, nodes.Name):
        return e.name not in ("loop", "none", "true", "false")
    return isinstance(e, nodes.Getitem) and isinstance(e.node, nodes.Name) and (
        is_int_const(e.arg) or (isinstance(e.arg, nodes.Neg) and is_int_const(e.arg.node)))


def _html_escape(s: str) -> str:
    """markupsafe's escape (what Markup's ``+`` applies to a plain string)."""
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;")
            .replace("'", "&#39;"))


class ExprPrinter:
    """The expression half of the printer (``printer._Printer`` holds its state and the statements)."""

    def cond(self, e: nodes.Expr) -> str:
        """An expression whose truthiness only counts (and/or may stay boolean)."""
        return self.expr(e, in_cond=True)

    def atom(self, e: nodes.Expr, in_cond: bool = False) -> str:
        s = self.expr(e, in_cond)
        if isinstance(e, (nodes.Name, nodes.Const, nodes.Getattr, nodes.Getitem, nodes.Call, nodes.List,
                          nodes.Dict)) and not s.startswith("("):
            return s
        return s if s.startswith("(") and s.endswith(")") and _balanced_outer(s) else "(" + s + ")"

    def const(self, v: Any) -> str:
        if v is None:
            return "none"
        if type(v) is bool:
            return "true" if v else "false"
        if type(v) is int:
            return str(v)
        if type(v) is str:
            return str_lit(v)
        if type(v) in (list, tuple):
            return "[" + ", ".join(self.const(x) for x in v) + "]"
        if type(v) is dict and all(type(k) is str for k in v):
            return "{ " + ", ".join(str_lit(k) + ": " + self.const(x) for k, x in v.items()) + " }"
        if type(v) is float:
            return repr(v)
        raise Unprintable(f"constant {type(v).__name__}")

    def expr(self, e: nodes.Expr, in_cond: bool = False) -> str:  # noqa: C901 - one case per node type
        if isinstance(e, nodes.Const):
            return self.const(e.value)
        if isinstance(e, nodes.Name):
            if e.name == "bos_token" and self.bos_empty is not False and self.on("mnn-jinja-special-token-undefined"):
                return "(bos_token if bos_token is defined else '')"
            if e.name in CTX_DEFAULTS and self.on("mnn-jinja-context-undefined"):
                return f"({e.name} if {e.name} is defined else {CTX_DEFAULTS[e.name]})"
            if e.name.endswith("_token") and e.name not in ("bos_token", "eos_token"):
                self.missed.add("mnn-jinja-special-token-undefined")
            return e.name
        if isinstance(e, nodes.Getattr):
            if (isinstance(e.node, nodes.Name) and e.node.name == "loop" and e.attr in ("revindex", "revindex0")
                    and self.on("mnn-jinja-loop-attribute")):
                return "(loop.length - loop.index" + (" + 1)" if e.attr == "revindex" else ")")
            if (isinstance(e.node, nodes.Name) and e.node.name == "loop" and e.attr in ("previtem", "nextitem")
                    and self.iters and self.iters[-1] is not None and self.on("mnn-jinja-loop-attribute")):
                x = self.iters[-1]
                if e.attr == "previtem":
                    return f"({x}[loop.index0 - 1] if not loop.first else {UNDEF})"
                return f"({x}[loop.index] if not loop.last else {UNDEF})"
            return self.chain(e.node) + "." + e.attr
        if isinstance(e, nodes.Getitem):
            if (isinstance(e.arg, nodes.Const) and type(e.arg.value) is str and IDENT.match(e.arg.value)
                    and chainable(e.node) and self.on("mnn-jinja-missing-item-defined")):
                return self.chain(e.node) + "." + e.arg.value
            if isinstance(e.arg, nodes.Slice):
                s = e.arg
                parts = [self.expr(s.start) if s.start else "", self.expr(s.stop) if s.stop else ""]
                if s.step:
                    parts.append(self.expr(s.step))
                return self.chain(e.node) + "[" + ":".join(parts) + "]"
            return self.chain(e.node) + "[" + self.expr(e.arg) + "]"
        if isinstance(e, nodes.Tuple):
            return "[" + ", ".join(self.expr(i) for i in e.items) + "]"
        if isinstance(e, nodes.List):
            return "[" + ", ".join(self.expr(i) for i in e.items) + "]"
        if isinstance(e, nodes.Dict):
            return "{ " + ", ".join(self.expr(p.key) + ": " + self.expr(p.value) for p in e.items) + " }"
        if isinstance(e, nodes.Concat):
            parts = []
            for c in e.nodes:
                a = self.atom(c)
                if isinstance(c, (nodes.Name, nodes.Getattr, nodes.Getitem)):
                    if pure(c) and self.on("mnn-jinja-undefined-concat"):
                        a = "(" + a + " if " + a + " is defined else '')"
                    else:
                        self.missed.add("mnn-jinja-undefined-concat")
                parts.append(a)
            return "(" + " ~ ".join(parts) + ")"
        if isinstance(e, (nodes.And, nodes.Or)):
            left, right = self.atom(e.left, in_cond), self.atom(e.right, in_cond)
            if not in_cond and not pure(e.left):
                self.missed.add("mnn-jinja-print-non-string")
            if not in_cond and pure(e.left) and self.on("mnn-jinja-print-non-string"):
                if isinstance(e, nodes.Or):
                    return f"({left} if {left} else {right})"
                return f"({right} if {left} else {left})"
            return f"({left} {'and' if isinstance(e, nodes.And) else 'or'} {right})"
        if isinstance(e, nodes.BinExpr):
            return self.binexpr(e)
        if isinstance(e, nodes.Not):
            return "(not " + self.atom(e.node, True) + ")"
        if isinstance(e, nodes.Neg):
            if is_int_const(e.node):
                return str(-e.node.value)
            return "(-" + self.atom(e.node) + ")"
        if isinstance(e, nodes.Pos):
            return "(+" + self.atom(e.node) + ")"
        if isinstance(e, nodes.Compare):
            if (len(e.ops) == 1 and e.ops[0].op in ("eq", "ne") and _maybe_mapping(e.expr)
                    and _maybe_mapping(e.ops[0].expr) and pure(e.expr) and pure(e.ops[0].expr)
                    and (isinstance(e.expr, nodes.Name) or isinstance(e.ops[0].expr, nodes.Name))
                    and self.on("mnn-jinja-unsupported-test")):
                # MNN's == holds for any two mappings of one size: a deep comparison by macro there
                a, b = self.atom(e.expr), self.atom(e.ops[0].expr)
                self.need_eq = True
                eq = "==" if e.ops[0].op == "eq" else "!="
                return f"(({a} {eq} {b}) if {ON_HF} else ({EQ}({a}, {b}) {eq} 'T'))"
            terms = []
            left = e.expr
            for op in e.ops:
                terms.append("(" + self.atom(left) + " " + CMP[op.op] + " " + self.atom(op.expr) + ")")
                left = op.expr
            return terms[0] if len(terms) == 1 else "(" + " and ".join(terms) + ")"
        if isinstance(e, nodes.CondExpr):
            s = self.atom(e.expr1) + " if " + self.cond(e.test)
            if e.expr2 is not None:
                s += " else " + self.atom(e.expr2)
            elif self.on("mnn-jinja-condexpr-no-else"):
                s += " else " + UNDEF
            return "(" + s + ")"
        if isinstance(e, nodes.Filter):
            return self.filter(e)
        if isinstance(e, nodes.Test):
            return self.test(e)
        if isinstance(e, nodes.Call):
            return self.call(e)
        raise Unprintable(type(e).__name__)

    def chain(self, e: nodes.Expr) -> str:
        if isinstance(e, nodes.Name):
            return e.name
        if (isinstance(e, nodes.Getattr) and isinstance(e.node, nodes.Name) and e.node.name == "loop"
                and e.attr in ("previtem", "nextitem") and self.iters and self.iters[-1] is not None
                and self.on("mnn-jinja-loop-attribute")):
            # read through: transformers fails where there is no such item, so no guard is needed
            return self.iters[-1] + ("[loop.index0 - 1]" if e.attr == "previtem" else "[loop.index]")
        s = self.expr(e)
        return s if chainable(e) else "(" + s + ")"

    def args(self, args: list, kwargs: list) -> str:
        return ", ".join([self.expr(a) for a in args] + [k.key + "=" + self.expr(k.value) for k in kwargs])

    def markup_add(self, e: nodes.Add) -> str | None:
        """``a + b`` with a Markup side (``|safe`` ...): transformers HTML-escapes the other side;
        printed as plain strings with that escape written out (the ``|safe`` dropped)."""
        if not (self.markup_ok and (markup(e.left, self.markup_names) or markup(e.right, self.markup_names))):
            return None
        if not self.on("mnn-jinja-unsupported-filter"):
            return None
        parts = []
        for x in (e.left, e.right):
            if markup(x, self.markup_names):
                parts.append(self.atom(x))
            elif isinstance(x, nodes.Const) and type(x.value) is str:
                parts.append(str_lit(_html_escape(x.value)))
            else:
                self.need_escape = True
                parts.append(ESCAPE + "(" + self.expr(x) + ")")
        return "(" + parts[0] + " + " + parts[1] + ")"

    def binexpr(self, e: nodes.BinExpr) -> str:
        op = BINOPS[type(e)]
        if isinstance(e, nodes.Add):
            marked = self.markup_add(e)
            if marked is not None:
                return marked
        try:
            if op == "**" and not (is_int_const(e.right) and 0 <= e.right.value <= 64):
                raise nodes.Impossible()
            value = e.as_const()
            if type(value) in (int, str) and (type(value) is str or abs(value) < 1 << 31):
                if op in ("*", "/", "//", "%", "**") and self.on("mnn-jinja-unparsed-operator"):
                    return self.const(value)
        except nodes.Impossible:
            pass
        left, right = e.left, e.right
        if op in ("%", "//") and is_int_const(right) and right.value > 0 and pure(left) \
                and self.on("mnn-jinja-unparsed-operator"):
            a, k = self.atom(left), right.value
            if op == "//":
                return f"(range({k}, {a} + 1, {k})|length)"
            return f"({a} - range(0, {a} + 1, {k})[-1])"
        if op == "*" and self.on("mnn-jinja-unparsed-operator"):
            for x, k in ((left, right), (right, left)):
                if is_int_const(k) and 1 <= k.value <= 16 and pure(x):
                    a = self.atom(x)
                    return "(" + " + ".join([a] * k.value) + ")"
        return "(" + self.atom(left) + " " + op + " " + self.atom(right) + ")"

    def as_str(self, e: nodes.Expr) -> str | None:
        """``e`` as transformers' ``str(e)`` for a string filter, where MNN's filter would pass a
        non-string through (``None``: not rewritable)."""
        if stringish(e, self.macros) and not (isinstance(e, nodes.Filter) and e.name in ("length", "count")):
            return self.expr(e)
        if isinstance(e, nodes.Filter) and e.name in ("length", "count"):
            return None
        if not pure(e) or not self.on("mnn-jinja-print-non-string"):
            return None
        a = self.atom(e)
        self.need_repr = True
        return f"(({a} if {a} is string else {REPR}({a})) if {a} is defined else '')"

    def filter(self, e: nodes.Filter) -> str:
        base = e.node
        name = e.name
        if name in ("safe", "e", "escape", "forceescape") and base is not None and self.markup_ok \
                and self.on("mnn-jinja-unsupported-filter"):
            if name == "safe" or (name != "forceescape" and markup(base, self.markup_names)):
                return self.expr(base)  # printed plain (markup_add writes the escapes out)
            inner = self.as_str(base)
            if inner is not None:
                self.need_escape = True
                return ESCAPE + "(" + inner + ")"
        if name == "title" and not e.args and not e.kwargs and base is not None \
                and self.on("mnn-jinja-unsupported-filter"):
            inner = self.as_str(base)
            if inner is not None:
                self.need_title.add("filter")
                return f"{TITLE}_filter({self.expr(base)}, {inner})"
        if (name == "dictsort" and not e.args and not e.kwargs and base is not None and chainable(base) and pure(base)
                and self.pre is not None and self.on("mnn-jinja-unsupported-filter")):
            # MNN's for visits a mapping's keys sorted bytewise: the pairs collected before the statement
            a = self.chain(base)
            box, k = self.fresh("dictsort"), self.fresh("key")
            self.pre.append("{% set " + box + " = namespace(items=[]) %}{% for " + k + " in (" + a + " if (" + a
                            + " is defined and " + a + " is mapping) else {}) %}{% set " + box + ".items = " + box
                            + ".items + [[" + k + ", " + a + "[" + k + "]]] %}{% endfor %}")
            return f"({a}|dictsort if {ON_HF} else {box}.items)"
        if name in STRING_FILTERS and base is not None and not e.args and not e.kwargs \
                and not stringish(base, self.macros):
            inner = self.as_str(base)
            if inner is not None:
                return inner + "|" + name
        if name in ("default", "d") and base is not None and pure(base) and self.on("mnn-jinja-unsupported-filter"):
            a = self.atom(base)
            dflt = self.expr(e.args[0]) if e.args else "''"
            boolean = (len(e.args) > 1 and isinstance(e.args[1], nodes.Const) and e.args[1].value) or any(
                k.key == "boolean" and isinstance(k.value, nodes.Const) and k.value.value for k in e.kwargs)
            return f"({a} if {a} else {dflt})" if boolean else f"({a} if {a} is defined else {dflt})"
        if name in ("first", "last") and not e.args and chainable(base) and self.on("mnn-jinja-unsupported-filter"):
            return self.expr(base) + ("[0]" if name == "first" else "[-1]")
        if name == "string" and not e.args and pure(base) and self.on("mnn-jinja-undefined-concat"):
            a = self.atom(base)
            if self.on("mnn-jinja-print-non-string"):
                self.need_repr = True
                return f"(({a} if {a} is string else {REPR}({a})) if {a} is defined else '')"
            return f"({a}|string if {a} is defined else '')"
        if name == "count" and self.on("mnn-jinja-unsupported-filter"):
            name = "length"
        if (name == "replace" and len(e.args) == 2 and not e.kwargs and chainable(base)
                and self.on("mnn-jinja-unsupported-filter")):
            return self.expr(base) + ".replace(" + self.args(e.args, []) + ")"
        if name == "tojson":
            # transformers' own defaults (ensure_ascii=False, separators=None, sort_keys=False) change nothing
            kwargs = [k for k in e.kwargs if not (isinstance(k.value, nodes.Const) and (
                (k.key == "ensure_ascii" and k.value.value is False) or (k.key == "sort_keys" and k.value.value is False)
                or (k.key == "separators" and k.value.value is None)))]
            if not e.args and not kwargs and self.on("mnn-jinja-tojson-order"):
                self.need_tojson = True
                return TOJSON + "(" + self.expr(base) + ")"
            indent = e.args[0] if len(e.args) == 1 and not kwargs else (
                kwargs[0].value if not e.args and len(kwargs) == 1 and kwargs[0].key == "indent" else None)
            if is_int_const(indent) and 0 <= indent.value <= 64 and self.on("mnn-jinja-tojson-order"):
                self.need_tojson_indent = True
                return TOJSON_IND + "(" + self.expr(base) + ", " + str_lit(" " * indent.value) + ", '')"
            self.missed.add("mnn-jinja-tojson-order")
        if name in ("selectattr", "rejectattr", "select", "reject"):
            hoisted = self.select(e)
            if hoisted is not None:
                return hoisted
        if name == "list" and not e.args and not e.kwargs and (
                (isinstance(base, nodes.Filter) and base.name in ("selectattr", "rejectattr", "select", "reject"))
                or (isinstance(base, nodes.Call) and isinstance(base.node, nodes.Name) and base.node.name == "range")):
            inner = self.expr(base)
            if inner.startswith("mnn_kept") or inner.startswith("range("):
                return inner  # already a list on MNN
        s = self.atom(base) + "|" + name
        if e.args or e.kwargs:
            s += "(" + self.args(e.args, e.kwargs) + ")"
        return s

    def select(self, e: nodes.Filter) -> str | None:
        """``select``/``reject``/``selectattr``/``rejectattr`` as a loop hoisted before the statement
        that collects the kept items in a namespace; the expression reads that list."""
        by_attr = e.name.endswith("attr")
        args = list(e.args)
        if (self.pre is None or e.kwargs or not pure(e.node) or (by_attr and not args)
                or not all(pure(a) for a in args)):
            return None
        attr = None
        if by_attr:
            a = args.pop(0)
            if not (isinstance(a, nodes.Const) and isinstance(a.value, str) and IDENT.match(a.value)):
                return None
            attr = a.value
        if args and not (isinstance(args[0], nodes.Const) and isinstance(args[0].value, str)):
            return None
        if not self.on("mnn-jinja-unsupported-filter"):
            return None
        item = self.fresh("item")
        subject: nodes.Expr = nodes.Name(item, "load")
        if attr is not None:
            subject = nodes.Getattr(subject, attr, "load")
        if args:
            cond: nodes.Expr = nodes.Test(subject, args[0].value, args[1:], [], None, None)
        else:
            cond = subject
        if e.name.startswith("reject"):
            cond = nodes.Not(cond)
        box = self.fresh("kept")
        seq = self.atom(e.node)
        self.pre.append("{% set " + box + " = namespace(items=[]) %}{% for " + item + " in (" + seq + " if " + seq
                        + " else []) %}{% if " + self.cond(cond) + " %}{% set " + box + ".items = " + box
                        + ".items + [" + item + "] %}{% endif %}{% endfor %}")
        return box + ".items"

    def test(self, e: nodes.Test) -> str:
        node, name = e.node, e.name
        a = self.atom(node)
        if name in ("odd", "even", "divisibleby") and pure(node) and self.on("mnn-jinja-unsupported-test"):
            k = 2 if name != "divisibleby" else (e.args[0].value if e.args and is_int_const(e.args[0]) else None)
            if k is not None and k > 0:
                rem = f"({a} - range(0, {a} + 1, {k})[-1])"
                return f"({rem} == 1)" if name == "odd" else f"({rem} == 0)"
        if name in ("in",) and e.args and self.on("mnn-jinja-unsupported-test"):
            return "(" + a + " in " + self.atom(e.args[0]) + ")"
        if name in ("eq", "equalto", "==") and e.args and self.on("mnn-jinja-unsupported-test"):
            return "(" + a + " == " + self.atom(e.args[0]) + ")"
        if name in ("ne", "!=") and e.args and self.on("mnn-jinja-unsupported-test"):
            return "(" + a + " != " + self.atom(e.args[0]) + ")"
        if name == "mapping" and pure(node) and self.on("mnn-jinja-unsupported-test"):
            return f"({a} is defined and {a} is mapping)"
        if name in ("iterable", "sequence") and pure(node) and self.on("mnn-jinja-unsupported-test"):
            return f"({a} is sequence or ({a} is defined and {a} is mapping))"
        if (isinstance(node, nodes.Getitem) and name in ("defined", "undefined") and is_int_const(node.arg)
                and pure(node.node) and self.on("mnn-jinja-missing-item-defined")):
            x, i = self.atom(node.node), node.arg.value
            bound = f"(({x}|length) > {i})" if i >= 0 else f"(({x}|length) >= {-i})"
            inside = f"({x} is sequence and {x} is not mapping and {bound})"
            return inside if name == "defined" else "(not " + inside + ")"
        if (isinstance(node, nodes.Getitem) and name in ("defined", "undefined") and isinstance(node.arg, nodes.Const)
                and type(node.arg.value) is str and not IDENT.match(node.arg.value) and pure(node.node)
                and self.on("mnn-jinja-missing-item-defined")):
            inside = "(" + str_lit(node.arg.value) + " in " + self.atom(node.node) + ")"
            return inside if name == "defined" else "(not " + inside + ")"
        if name not in MNN_TESTS or name in ("mapping", "iterable", "sequence"):
            self.missed.add("mnn-jinja-unsupported-test")
        s = a + " is " + name
        if e.args or e.kwargs:
            s += "(" + self.args(e.args, e.kwargs) + ")"
        return "(" + s + ")"

    def call(self, e: nodes.Call) -> str:
        f = e.node
        if e.dyn_args is not None or e.dyn_kwargs is not None:
            raise Unprintable("call with *args")
        if isinstance(f, nodes.Name):
            if f.name == "dict" and not e.args and self.on("mnn-jinja-unknown-function"):
                return "{ " + ", ".join(str_lit(k.key) + ": " + self.expr(k.value) for k in e.kwargs) + " }"
            if (f.name == "strftime_now" and len(e.args) == 1 and isinstance(e.args[0], nodes.Const)
                    and isinstance(e.args[0].value, str) and re.search(r"%-[dm]", e.args[0].value)
                    and self.on("mnn-jinja-strftime-flag")):
                pieces = re.split(r"(%-[dm])", e.args[0].value)
                out = []
                for p in pieces:
                    if p in ("%-d", "%-m"):
                        out.append("strftime_now(" + str_lit("%" + p[2]) + ").lstrip('0')")
                    elif p:
                        out.append("strftime_now(" + str_lit(p) + ")")
                return "(" + " ~ ".join(out) + ")"
            sig = self.signatures.get(f.name)
            if sig is not None and sig[1] and self.on("mnn-jinja-macro-default"):
                # the defaults passed by every call: MNN binds no default, and a parameter left out
                # reads the caller's variable of that name (or MNN's own, as namespace)
                names, defaults = sig
                given = {k.key for k in e.kwargs}
                extra = [name + "=" + self.expr(defaults[name]) for name in names[len(e.args):]
                         if name in defaults and name not in given]
                return f.name + "(" + ", ".join([a for a in [self.args(e.args, e.kwargs)] if a] + extra) + ")"
            return f.name + "(" + self.args(e.args, e.kwargs) + ")"
        if isinstance(f, nodes.Getattr):
            base, m = f.node, f.attr
            if m == "get" and 1 <= len(e.args) <= 2 and not e.kwargs and isinstance(e.args[0], nodes.Const) \
                    and isinstance(e.args[0].value, str) and IDENT.match(e.args[0].value) and chainable(base) \
                    and pure(base) and self.on("mnn-jinja-unsupported-method"):
                v = self.chain(base) + "." + e.args[0].value
                d = self.expr(e.args[1]) if len(e.args) == 2 else "none"
                return f"({v} if {v} is defined else {d})"
            if m == "items" and not e.args and not e.kwargs and self.on("mnn-jinja-unsupported-method"):
                return self.atom(base) + "|items"
            if m in ("upper", "lower") and not e.args and not e.kwargs and self.on("mnn-jinja-unsupported-method"):
                return self.atom(base) + "|" + m
            if m == "title" and not e.args and not e.kwargs and self.on("mnn-jinja-unsupported-method"):
                self.need_title.add("method")
                return f"{TITLE}_method({self.expr(base)}, none)"
            return self.chain(base) + "." + m + "(" + self.args(e.args, e.kwargs) + ")"
        raise Unprintable("call of an expression")
