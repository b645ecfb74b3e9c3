"""Rewrite a chat template so that MNN's Jinja engine renders it as transformers renders the original.

:func:`rewrite_for_mnn` parses the template with jinja2 (transformers' syntax) and prints the tree
back as Jinja that MNN's engine reads as meant, replacing each construct MNN renders differently by
an equivalent both engines render as transformers renders the original:

* text MNN's lexer keeps (a leading newline, trailing blanks before a tag, a literal ``{{``/``{%``/
  ``{#`` as string expressions); string literals with only the escapes MNN knows; no comments or
  white-space markers;
* ``x['key']`` as ``x.key``, ``x['a-b'] is defined`` as ``'a-b' in x``, ``x[i] is defined`` by
  length; ``loop.revindex(0)`` from ``loop.length`` and ``loop.index``, ``loop.previtem``/``nextitem``
  by index; ``x % k`` and ``x // k`` (k > 0 constant, x >= 0) with ``range``, ``x * k`` (k from 0
  to 16) as a sum, constants folded; tuples as lists; a mapping literal iterated in its own order;
* filters, tests and methods MNN lacks: ``default``, ``first``, ``last``, ``count``, ``replace``;
  ``select``/``reject``/``selectattr``/``rejectattr`` as a loop hoisted before the statement;
  ``tojson`` (with or without ``indent``) by macros keeping the keys' order; ``odd``, ``even``,
  ``divisibleby``, ``in``, ``eq``, ``ne``; ``mapping``/``iterable``/``sequence`` right for undefined
  values and mappings; ``.get()``, ``.items()``, ``.upper()``, ``.lower()``; ``dict(k=v)``;
* ``bos_token`` as ``''``, ``tools``/``documents`` as ``none`` and ``add_generation_prompt`` as
  ``false`` where MNN leaves them undefined; ``a if b`` with an undefined ``else``; ``and``/``or``
  outside conditions giving their operand; a printed (or ``|string``) value that may not be a string
  in Python's form, in its mapping's order, nothing when undefined; ``~`` of an undefined operand as
  ``''``; macro parameter defaults set in the body; ``strftime_now('%-d')``/``'%-m'`` without the
  zero;
* ``break``/``continue`` through a namespace that guards the rest of the loop body; ``for ... else``
  as an ``if`` after the loop; a ``{% set x %}`` block as a macro whose output is assigned;
* ``raise_exception(msg)``: transformers stops with an error; MNN cannot stop, so the rewritten
  template renders its body into a macro and, when a raise was reached, the prompt is :data:`RAISED`
  followed by the first message instead.  On transformers the call still raises where it stood.

What cannot be rewritten stays as it was and is reported (:class:`Loss`, coded with the rules of
``mtokspec/divergences/rules/chat_template.py``: the lint's findings on the rewritten template).
Each group of rewrites (one per rule) is checked with the emulated engine on probe conversations
(and any the caller gives): a group is left out when it would make one render worse on MNN than the
original did, or change transformers' rendering.  The printer's choices are recorded in
``docs/design/chat-mnn.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import jinja2
import jinja2.nodes as nodes

from mtokspec.chat.mnn import render_mnn
from mtokspec.chat.render import render_chat_template
from mtokspec.errors import ChatTemplateError

__all__ = ["rewrite_for_mnn", "Rewrite", "Loss", "RAISED", "PROBE_CONVERSATIONS", "matches", "transformers_prompt",
           "mnn_prompt"]

#: What the rewritten template renders on MNN where transformers raises: this, then the message.
RAISED = "raise_exception: "

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TOJSON = "__mnn_tojson"
_ERR = "__mnn_raised"
_BODY = "__mnn_body"
_UNDEF = "mnn_rewrite_undefined"  # a free name (dunder names are refused by the sandbox)
_REPR = "__mnn_repr"
_TOJSON_IND = "__mnn_tojson_indent"
_STR_FILTERS = {"trim", "upper", "lower", "capitalize", "tojson", "join", "string", "replace", "title", "indent",
                "center", "format", "striptags", "wordwrap", "truncate", "urlencode", "e", "escape", "safe"}
_MNN_TESTS = {"defined", "undefined", "none", "boolean", "string", "number", "sequence", "iterable", "mapping",
              "true", "false"}
#: Rules whose lint findings the rewritten template's own constructs raise (a guarded
#: raise_exception, ``bos_token is defined``, ``|tojson`` of a scalar, ``is mapping`` ...): a
#: finding of these is a loss only where the printer left a construct of the rule as it was.
_SELF_RAISED = {"mnn-jinja-raise-noop", "mnn-jinja-special-token-undefined", "mnn-jinja-tojson-order",
                "mnn-jinja-unsupported-test", "mnn-jinja-context-undefined", "mnn-jinja-print-non-string",
                "mnn-jinja-undefined-concat"}
#: What transformers passes when the caller gives nothing; MNN leaves these undefined.
_CTX_DEFAULTS = {"tools": "none", "documents": "none", "add_generation_prompt": "false"}

#: Groups of rewrites, by the rule each answers; a group is dropped when it makes a probe worse.
GROUPS = ("mnn-jinja-missing-item-defined", "mnn-jinja-loop-attribute", "mnn-jinja-unparsed-operator",
          "mnn-jinja-unsupported-filter", "mnn-jinja-unsupported-test", "mnn-jinja-unsupported-method",
          "mnn-jinja-special-token-undefined", "mnn-jinja-context-undefined", "mnn-jinja-condexpr-no-else",
          "mnn-jinja-print-non-string", "mnn-jinja-undefined-concat", "mnn-jinja-tojson-order",
          "mnn-jinja-raise-noop", "mnn-jinja-macro-default", "mnn-jinja-unknown-function",
          "mnn-jinja-strftime-flag", "mnn-jinja-unsupported-statement")

PROBE_CONVERSATIONS: list[list[dict]] = [
    [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Hi"},
     {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye"}],
    [{"role": "user", "content": "Hi"}],
    [{"role": "user", "content": "  caf\u00e9 \u4e16\u754c \U0001F600 'q' \"d\" \\ {{x}}\n"},
     {"role": "assistant", "content": ""}, {"role": "user", "content": "ok"}],
    [{"role": "user", "content": "What is the weather?"},
     {"role": "assistant", "content": "",
      "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "a": 1}}}]},
     {"role": "tool", "name": "get_weather", "content": "sunny"}],
    [{"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}],
]


@dataclass(frozen=True)
class Loss:
    """A construct left as it was: MNN still renders it differently (``code``: the rule)."""

    code: str
    severity: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.message} [{self.code}]"


@dataclass
class Rewrite:
    """The rewritten template, the rules it rewrote, and what it could not."""

    template: str
    applied: list[str] = field(default_factory=list)
    losses: list[Loss] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def __iter__(self):  # (template, losses) = rewrite_for_mnn(...)
        return iter((self.template, self.losses))


class _Unprintable(Exception):
    pass


# --- the printer -----------------------------------------------------------------------------------

def _str_lit(s: str) -> str:
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


def _text(data: str) -> str:
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
        out.append("{{ " + _str_lit(tail) + " }}")
    return "".join(out)


_BINOPS = {nodes.Add: "+", nodes.Sub: "-", nodes.Mul: "*", nodes.Div: "/", nodes.FloorDiv: "//",
           nodes.Mod: "%", nodes.Pow: "**"}
_CMP = {"eq": "==", "ne": "!=", "lt": "<", "lteq": "<=", "gt": ">", "gteq": ">=", "in": "in", "notin": "not in"}


def _chainable(e: nodes.Expr) -> bool:
    """MNN reads ``.attr``, ``[i]`` and ``.method()`` only after a name or a call of a name."""
    if isinstance(e, nodes.Name):
        return True
    if isinstance(e, (nodes.Getattr, nodes.Getitem)):
        return _chainable(e.node)
    if isinstance(e, nodes.Call):
        return isinstance(e.node, nodes.Name) or (isinstance(e.node, nodes.Getattr) and _chainable(e.node.node))
    return False


_PURE_FUNCTIONS = {"range", "namespace", "strftime_now", "dict"}
_PURE_METHODS = {"startswith", "endswith", "split", "strip", "lstrip", "rstrip", "replace", "upper", "lower", "get",
                 "items", "keys", "values", "title", "capitalize", "count", "find", "join"}


def _pure(e: nodes.Node) -> bool:
    """No macro call (which could set a namespace): evaluating it twice is harmless."""
    for n in [e, *e.find_all(nodes.Call)]:
        if not isinstance(n, nodes.Call):
            continue
        f = n.node
        if isinstance(f, nodes.Name) and f.name in _PURE_FUNCTIONS:
            continue
        if isinstance(f, nodes.Getattr) and f.attr in _PURE_METHODS:
            continue
        return False
    return True


def _is_int_const(e: nodes.Expr) -> bool:
    return isinstance(e, nodes.Const) and type(e.value) is int


def _stringish(e: nodes.Expr, macros: set[str]) -> bool:
    """Statically a string (or an int), printed the same by MNN and Python."""
    if isinstance(e, nodes.Const):
        return type(e.value) in (str, int)
    if isinstance(e, (nodes.Concat, nodes.TemplateData)):
        return True
    if isinstance(e, nodes.Filter):
        return e.name in _STR_FILTERS or e.name in ("length", "count")
    if isinstance(e, nodes.Call):
        if isinstance(e.node, nodes.Name):
            return e.node.name in macros or e.node.name in ("strftime_now", _TOJSON, _REPR, _TOJSON_IND)
        if isinstance(e.node, nodes.Getattr):
            return e.node.attr in ("strip", "lstrip", "rstrip", "replace", "upper", "lower")
    if isinstance(e, nodes.Add):  # str + x is a str or an error in Python
        return _str_typed(e.left, macros) or _str_typed(e.right, macros)
    if isinstance(e, nodes.Name):
        return e.name in ("bos_token", "eos_token")
    if isinstance(e, nodes.CondExpr):
        return _stringish(e.expr1, macros) and (e.expr2 is None or _stringish(e.expr2, macros))
    return False


def _str_typed(e: nodes.Expr, macros: set[str]) -> bool:
    """Statically a string (not an int)."""
    if isinstance(e, nodes.Const):
        return type(e.value) is str
    return _stringish(e, macros) and not (isinstance(e, nodes.Filter) and e.name in ("length", "count"))


def _has_control(n: nodes.Node) -> bool:
    """A break/continue of the enclosing loop inside ``n`` (not one of a loop nested in it)."""
    if isinstance(n, (nodes.Break, nodes.Continue)):
        return True
    if isinstance(n, (nodes.For, nodes.Macro)):
        return False
    return any(_has_control(c) for c in n.iter_child_nodes() if isinstance(c, nodes.Stmt))


def _booleanish(e: nodes.Expr) -> bool:
    return isinstance(e, (nodes.Compare, nodes.Test, nodes.Not)) or (
        isinstance(e, nodes.Const) and type(e.value) is bool)


class _Printer:
    def __init__(self, groups: set[str], bos_empty: bool | None):
        self.g = groups
        self.bos_empty = bos_empty
        self.applied: set[str] = set()
        self.macros: set[str] = set()
        self.need_tojson = False
        self.need_repr = False
        self.need_raise = False
        self.need_tojson_indent = False
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
            if flag is not None and _has_control(n) and i + 1 < len(body):
                rest = self.body(body[i + 1:])
                out.append("{% if not (" + flag + ".stop or " + flag + ".skip) %}" + rest + "{% endif %}")
                break
        return "".join(out)

    def stmt(self, n: nodes.Node) -> str:
        if isinstance(n, nodes.Output):
            return "".join(_text(c.data) if isinstance(c, nodes.TemplateData) else "".join(self.hoisted(
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
                raise _Unprintable("recursive loop")
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
            if any(_has_control(b) for b in n.body) and self.on("mnn-jinja-unsupported-statement"):
                flag = self.fresh("loop")
                pre += "{% set " + flag + " = namespace(stop=false, skip=false) %}"
            self.loops.append(flag)
            self.iters.append(it if n.test is None and _pure(n.iter) and _chainable(n.iter) else None)
            try:
                body = self.body(n.body)
            finally:
                self.loops.pop()
                self.iters.pop()
            if flag is not None:
                body = "{% if not " + flag + ".stop %}{% set " + flag + ".skip = false %}" + body + "{% endif %}"
            s = pre + head + " %}" + body
            if n.else_:
                if n.test is None and _pure(n.iter) and self.on("mnn-jinja-unsupported-statement"):
                    return s + "{% endfor %}{% if not " + self.atom(n.iter) + " %}" + self.body(n.else_) + "{% endif %}"
                s += "{% else %}" + self.body(n.else_)
            return s + "{% endfor %}"
        if isinstance(n, nodes.Assign):
            pre, value = self.hoisted(lambda: self.expr(n.node))
            return pre + "{% set " + self.target(n.target) + " = " + value + " %}"
        if isinstance(n, nodes.AssignBlock):
            if n.filter is not None:
                raise _Unprintable("filtered set block")
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
            for i, a in enumerate(n.args):
                d = n.defaults[i - (len(n.args) - nd)] if i >= len(n.args) - nd else None
                if d is not None and self.on("mnn-jinja-macro-default"):
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
        raise _Unprintable(type(n).__name__)

    def target(self, t: nodes.Node) -> str:
        if isinstance(t, nodes.Name):
            return t.name
        if isinstance(t, nodes.NSRef):
            return f"{t.name}.{t.attr}"
        if isinstance(t, nodes.Tuple):
            return ", ".join(self.target(i) for i in t.items)
        raise _Unprintable(type(t).__name__)

    def output(self, e: nodes.Expr) -> str:
        if (isinstance(e, nodes.Call) and isinstance(e.node, nodes.Name) and e.node.name == "raise_exception"
                and self.on("mnn-jinja-raise-noop")):
            self.need_raise = True
            msg = self.expr(e.args[0]) if e.args else "''"
            return ("{% if raise_exception is defined %}{{ raise_exception(" + msg + ") }}{% endif %}"
                    "{% if not " + _ERR + ".raised %}{% set " + _ERR + ".message = " + msg + " %}{% endif %}"
                    "{% set " + _ERR + ".raised = true %}")
        if isinstance(e, nodes.Call) and isinstance(e.node, nodes.Name) and e.node.name == "raise_exception":
            self.missed.add("mnn-jinja-raise-noop")
        if _booleanish(e) and self.on("mnn-jinja-print-non-string"):
            return "{{ 'True' if " + self.atom(e) + " else 'False' }}"
        if not _stringish(e, self.macros):
            if _pure(e) and self.on("mnn-jinja-print-non-string"):
                a = self.atom(e)
                self.need_repr = True
                shown = f"({a} if {a} is string else {_REPR}({a}))"
                if a.endswith("]"):  # MNN's x[i] is never undefined ('' when missing)
                    return "{{ " + shown + " }}"
                return "{{ " + shown + " if " + a + " is defined else '' }}"
            self.missed.add("mnn-jinja-print-non-string")
        return "{{ " + self.expr(e) + " }}"

    # expressions
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
            return _str_lit(v)
        if type(v) in (list, tuple):
            return "[" + ", ".join(self.const(x) for x in v) + "]"
        if type(v) is dict and all(type(k) is str for k in v):
            return "{ " + ", ".join(_str_lit(k) + ": " + self.const(x) for k, x in v.items()) + " }"
        if type(v) is float:
            return repr(v)
        raise _Unprintable(f"constant {type(v).__name__}")

    def expr(self, e: nodes.Expr, in_cond: bool = False) -> str:  # noqa: C901 - one case per node type
        if isinstance(e, nodes.Const):
            return self.const(e.value)
        if isinstance(e, nodes.Name):
            if e.name == "bos_token" and self.bos_empty is not False and self.on("mnn-jinja-special-token-undefined"):
                return "(bos_token if bos_token is defined else '')"
            if e.name in _CTX_DEFAULTS and self.on("mnn-jinja-context-undefined"):
                return f"({e.name} if {e.name} is defined else {_CTX_DEFAULTS[e.name]})"
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
                    return f"({x}[loop.index0 - 1] if not loop.first else {_UNDEF})"
                return f"({x}[loop.index] if not loop.last else {_UNDEF})"
            return self.chain(e.node) + "." + e.attr
        if isinstance(e, nodes.Getitem):
            if (isinstance(e.arg, nodes.Const) and type(e.arg.value) is str and _IDENT.match(e.arg.value)
                    and _chainable(e.node) and self.on("mnn-jinja-missing-item-defined")):
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
                    if _pure(c) and self.on("mnn-jinja-undefined-concat"):
                        a = "(" + a + " if " + a + " is defined else '')"
                    else:
                        self.missed.add("mnn-jinja-undefined-concat")
                parts.append(a)
            return "(" + " ~ ".join(parts) + ")"
        if isinstance(e, (nodes.And, nodes.Or)):
            left, right = self.atom(e.left, in_cond), self.atom(e.right, in_cond)
            if not in_cond and not _pure(e.left):
                self.missed.add("mnn-jinja-print-non-string")
            if not in_cond and _pure(e.left) and self.on("mnn-jinja-print-non-string"):
                if isinstance(e, nodes.Or):
                    return f"({left} if {left} else {right})"
                return f"({right} if {left} else {left})"
            return f"({left} {'and' if isinstance(e, nodes.And) else 'or'} {right})"
        if isinstance(e, nodes.BinExpr):
            return self.binexpr(e)
        if isinstance(e, nodes.Not):
            return "(not " + self.atom(e.node, True) + ")"
        if isinstance(e, nodes.Neg):
            if _is_int_const(e.node):
                return str(-e.node.value)
            return "(-" + self.atom(e.node) + ")"
        if isinstance(e, nodes.Pos):
            return "(+" + self.atom(e.node) + ")"
        if isinstance(e, nodes.Compare):
            terms = []
            left = e.expr
            for op in e.ops:
                terms.append("(" + self.atom(left) + " " + _CMP[op.op] + " " + self.atom(op.expr) + ")")
                left = op.expr
            return terms[0] if len(terms) == 1 else "(" + " and ".join(terms) + ")"
        if isinstance(e, nodes.CondExpr):
            s = self.atom(e.expr1) + " if " + self.cond(e.test)
            if e.expr2 is not None:
                s += " else " + self.atom(e.expr2)
            elif self.on("mnn-jinja-condexpr-no-else"):
                s += " else " + _UNDEF
            return "(" + s + ")"
        if isinstance(e, nodes.Filter):
            return self.filter(e)
        if isinstance(e, nodes.Test):
            return self.test(e)
        if isinstance(e, nodes.Call):
            return self.call(e)
        raise _Unprintable(type(e).__name__)

    def chain(self, e: nodes.Expr) -> str:
        if isinstance(e, nodes.Name):
            return e.name
        if (isinstance(e, nodes.Getattr) and isinstance(e.node, nodes.Name) and e.node.name == "loop"
                and e.attr in ("previtem", "nextitem") and self.iters and self.iters[-1] is not None
                and self.on("mnn-jinja-loop-attribute")):
            # read through: transformers fails where there is no such item, so no guard is needed
            return self.iters[-1] + ("[loop.index0 - 1]" if e.attr == "previtem" else "[loop.index]")
        s = self.expr(e)
        return s if _chainable(e) else "(" + s + ")"

    def args(self, args: list, kwargs: list) -> str:
        return ", ".join([self.expr(a) for a in args] + [k.key + "=" + self.expr(k.value) for k in kwargs])

    def binexpr(self, e: nodes.BinExpr) -> str:
        op = _BINOPS[type(e)]
        try:
            if op == "**" and not (_is_int_const(e.right) and 0 <= e.right.value <= 64):
                raise nodes.Impossible()
            value = e.as_const()
            if type(value) in (int, str) and (type(value) is str or abs(value) < 1 << 31):
                if op in ("*", "/", "//", "%", "**") and self.on("mnn-jinja-unparsed-operator"):
                    return self.const(value)
        except nodes.Impossible:
            pass
        left, right = e.left, e.right
        if op in ("%", "//") and _is_int_const(right) and right.value > 0 and _pure(left) \
                and self.on("mnn-jinja-unparsed-operator"):
            a, k = self.atom(left), right.value
            if op == "//":
                return f"(range({k}, {a} + 1, {k})|length)"
            return f"({a} - range(0, {a} + 1, {k})[-1])"
        if op == "*" and self.on("mnn-jinja-unparsed-operator"):
            for x, k in ((left, right), (right, left)):
                if _is_int_const(k) and 1 <= k.value <= 16 and _pure(x):
                    a = self.atom(x)
                    return "(" + " + ".join([a] * k.value) + ")"
        return "(" + self.atom(left) + " " + op + " " + self.atom(right) + ")"

    def filter(self, e: nodes.Filter) -> str:
        base = e.node
        name = e.name
        if name in ("default", "d") and base is not None and _pure(base) and self.on("mnn-jinja-unsupported-filter"):
            a = self.atom(base)
            dflt = self.expr(e.args[0]) if e.args else "''"
            boolean = (len(e.args) > 1 and isinstance(e.args[1], nodes.Const) and e.args[1].value) or any(
                k.key == "boolean" and isinstance(k.value, nodes.Const) and k.value.value for k in e.kwargs)
            return f"({a} if {a} else {dflt})" if boolean else f"({a} if {a} is defined else {dflt})"
        if name in ("first", "last") and not e.args and _chainable(base) and self.on("mnn-jinja-unsupported-filter"):
            return self.expr(base) + ("[0]" if name == "first" else "[-1]")
        if name == "string" and not e.args and _pure(base) and self.on("mnn-jinja-undefined-concat"):
            a = self.atom(base)
            if self.on("mnn-jinja-print-non-string"):
                self.need_repr = True
                return f"(({a} if {a} is string else {_REPR}({a})) if {a} is defined else '')"
            return f"({a}|string if {a} is defined else '')"
        if name == "count" and self.on("mnn-jinja-unsupported-filter"):
            name = "length"
        if (name == "replace" and len(e.args) == 2 and not e.kwargs and _chainable(base)
                and self.on("mnn-jinja-unsupported-filter")):
            return self.expr(base) + ".replace(" + self.args(e.args, []) + ")"
        if name == "tojson":
            if not e.args and not e.kwargs and self.on("mnn-jinja-tojson-order"):
                self.need_tojson = True
                return _TOJSON + "(" + self.expr(base) + ")"
            indent = e.args[0] if len(e.args) == 1 and not e.kwargs else (
                e.kwargs[0].value if not e.args and len(e.kwargs) == 1 and e.kwargs[0].key == "indent" else None)
            if _is_int_const(indent) and 0 <= indent.value <= 64 and self.on("mnn-jinja-tojson-order"):
                self.need_tojson_indent = True
                return _TOJSON_IND + "(" + self.expr(base) + ", " + _str_lit(" " * indent.value) + ", '')"
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
        if (self.pre is None or e.kwargs or not _pure(e.node) or (by_attr and not args)
                or not all(_pure(a) for a in args)):
            return None
        attr = None
        if by_attr:
            a = args.pop(0)
            if not (isinstance(a, nodes.Const) and isinstance(a.value, str) and _IDENT.match(a.value)):
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
        if name in ("odd", "even", "divisibleby") and _pure(node) and self.on("mnn-jinja-unsupported-test"):
            k = 2 if name != "divisibleby" else (e.args[0].value if e.args and _is_int_const(e.args[0]) else None)
            if k is not None and k > 0:
                rem = f"({a} - range(0, {a} + 1, {k})[-1])"
                return f"({rem} == 1)" if name == "odd" else f"({rem} == 0)"
        if name in ("in",) and e.args and self.on("mnn-jinja-unsupported-test"):
            return "(" + a + " in " + self.atom(e.args[0]) + ")"
        if name in ("eq", "equalto", "==") and e.args and self.on("mnn-jinja-unsupported-test"):
            return "(" + a + " == " + self.atom(e.args[0]) + ")"
        if name in ("ne", "!=") and e.args and self.on("mnn-jinja-unsupported-test"):
            return "(" + a + " != " + self.atom(e.args[0]) + ")"
        if name == "mapping" and _pure(node) and self.on("mnn-jinja-unsupported-test"):
            return f"({a} is defined and {a} is mapping)"
        if name in ("iterable", "sequence") and _pure(node) and self.on("mnn-jinja-unsupported-test"):
            return f"({a} is sequence or ({a} is defined and {a} is mapping))"
        if (isinstance(node, nodes.Getitem) and name in ("defined", "undefined") and _is_int_const(node.arg)
                and _pure(node.node) and self.on("mnn-jinja-missing-item-defined")):
            x, i = self.atom(node.node), node.arg.value
            bound = f"(({x}|length) > {i})" if i >= 0 else f"(({x}|length) >= {-i})"
            inside = f"({x} is sequence and {x} is not mapping and {bound})"
            return inside if name == "defined" else "(not " + inside + ")"
        if (isinstance(node, nodes.Getitem) and name in ("defined", "undefined") and isinstance(node.arg, nodes.Const)
                and type(node.arg.value) is str and not _IDENT.match(node.arg.value) and _pure(node.node)
                and self.on("mnn-jinja-missing-item-defined")):
            inside = "(" + _str_lit(node.arg.value) + " in " + self.atom(node.node) + ")"
            return inside if name == "defined" else "(not " + inside + ")"
        if name not in _MNN_TESTS or name in ("mapping", "iterable", "sequence"):
            self.missed.add("mnn-jinja-unsupported-test")
        s = a + " is " + name
        if e.args or e.kwargs:
            s += "(" + self.args(e.args, e.kwargs) + ")"
        return "(" + s + ")"

    def call(self, e: nodes.Call) -> str:
        f = e.node
        if e.dyn_args is not None or e.dyn_kwargs is not None:
            raise _Unprintable("call with *args")
        if isinstance(f, nodes.Name):
            if f.name == "dict" and not e.args and self.on("mnn-jinja-unknown-function"):
                return "{ " + ", ".join(_str_lit(k.key) + ": " + self.expr(k.value) for k in e.kwargs) + " }"
            if (f.name == "strftime_now" and len(e.args) == 1 and isinstance(e.args[0], nodes.Const)
                    and isinstance(e.args[0].value, str) and re.search(r"%-[dm]", e.args[0].value)
                    and self.on("mnn-jinja-strftime-flag")):
                pieces = re.split(r"(%-[dm])", e.args[0].value)
                out = []
                for p in pieces:
                    if p in ("%-d", "%-m"):
                        out.append("strftime_now(" + _str_lit("%" + p[2]) + ").lstrip('0')")
                    elif p:
                        out.append("strftime_now(" + _str_lit(p) + ")")
                return "(" + " ~ ".join(out) + ")"
            return f.name + "(" + self.args(e.args, e.kwargs) + ")"
        if isinstance(f, nodes.Getattr):
            base, m = f.node, f.attr
            if m == "get" and 1 <= len(e.args) <= 2 and not e.kwargs and isinstance(e.args[0], nodes.Const) \
                    and isinstance(e.args[0].value, str) and _IDENT.match(e.args[0].value) and _chainable(base) \
                    and _pure(base) and self.on("mnn-jinja-unsupported-method"):
                v = self.chain(base) + "." + e.args[0].value
                d = self.expr(e.args[1]) if len(e.args) == 2 else "none"
                return f"({v} if {v} is defined else {d})"
            if m == "items" and not e.args and not e.kwargs and self.on("mnn-jinja-unsupported-method"):
                return self.atom(base) + "|items"
            if m in ("upper", "lower") and not e.args and not e.kwargs and self.on("mnn-jinja-unsupported-method"):
                return self.atom(base) + "|" + m
            return self.chain(base) + "." + m + "(" + self.args(e.args, e.kwargs) + ")"
        raise _Unprintable("call of an expression")


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


_TOJSON_MACRO = (
    "{% macro " + _TOJSON + "(v) %}{% if v is string %}{{ v|tojson }}{% elif v is mapping %}{{ '{' }}"
    "{% for k, x in v|items %}{% if not loop.first %}{{ ', ' }}{% endif %}{{ k|tojson }}{{ ': ' }}{{ "
    + _TOJSON + "(x) }}{% endfor %}{{ '}' }}{% elif v is sequence %}{{ '[' }}{% for x in v %}"
    "{% if not loop.first %}{{ ', ' }}{% endif %}{{ " + _TOJSON + "(x) }}{% endfor %}{{ ']' }}"
    "{% else %}{{ v|tojson }}{% endif %}{% endmacro %}")


_REPR_MACRO = (
    "{% macro " + _REPR + "(v) %}{% if v is string %}{% set r = [v]|string %}{{ r.strip('[]') }}"
    "{% elif v is mapping %}{{ '{' }}{% for k, x in v|items %}{% if not loop.first %}{{ ', ' }}{% endif %}"
    "{{ " + _REPR + "(k) }}{{ ': ' }}{{ " + _REPR + "(x) }}{% endfor %}{{ '}' }}{% elif v is sequence %}{{ '[' }}"
    "{% for x in v %}{% if not loop.first %}{{ ', ' }}{% endif %}{{ " + _REPR + "(x) }}{% endfor %}{{ ']' }}"
    "{% else %}{{ v|string }}{% endif %}{% endmacro %}")
_REPR_STUB = "{% macro " + _REPR + "(v) %}{% endmacro %}"
_TOJSON_IND_MACRO = (
    "{% macro " + _TOJSON_IND + "(v, pad, cur) %}{% if v is string %}{{ v|tojson }}{% elif v is mapping %}"
    "{% if v|length == 0 %}{{ '{}' }}{% else %}{{ '{' }}{% for k, x in v|items %}{% if not loop.first %}{{ ',' }}"
    "{% endif %}{{ '\\n' ~ cur ~ pad }}{{ k|tojson }}{{ ': ' }}{{ " + _TOJSON_IND + "(x, pad, cur ~ pad) }}{% endfor %}"
    "{{ '\\n' ~ cur ~ '}' }}{% endif %}{% elif v is sequence %}{% if v|length == 0 %}{{ '[]' }}{% else %}{{ '[' }}"
    "{% for x in v %}{% if not loop.first %}{{ ',' }}{% endif %}{{ '\\n' ~ cur ~ pad }}{{ " + _TOJSON_IND
    + "(x, pad, cur ~ pad) }}{% endfor %}{{ '\\n' ~ cur ~ ']' }}{% endif %}{% else %}{{ v|tojson }}{% endif %}"
    "{% endmacro %}")
_TOJSON_IND_STUB = "{% macro " + _TOJSON_IND + "(v, pad, cur) %}{% endmacro %}"
#: What the lint reads in place of the macro (whose own tests and tojson are right by construction).
_TOJSON_STUB = "{% macro " + _TOJSON + "(v) %}{% endmacro %}"


def _print(ast: nodes.Template, groups: set[str], bos_empty: bool | None) -> tuple[str, set[str]]:
    """The template printed with the rewrites of ``groups``, and the rules it rewrote fully."""
    p = _Printer(groups, bos_empty)
    body = p.body(ast.body)
    head = ((_TOJSON_MACRO if p.need_tojson else "") + (_REPR_MACRO if p.need_repr else "")
            + (_TOJSON_IND_MACRO if p.need_tojson_indent else ""))
    if p.need_raise:
        head += "{% set " + _ERR + " = namespace(raised=false, message='') %}"
        body = ("{% macro " + _BODY + "() %}" + body + "{% endmacro %}{% set " + _BODY + "_out = " + _BODY + "() %}"
                "{% if " + _ERR + ".raised %}{{ " + _str_lit(RAISED) + " ~ " + _ERR + ".message }}"
                "{% else %}{{ " + _BODY + "_out }}{% endif %}")
    return head + body, p.applied - p.missed


# --- checking --------------------------------------------------------------------------------------

class _Raised(ChatTemplateError):
    """raise_exception() of the template (not any other error)."""


def _raise(message: Any) -> None:
    raise _Raised(str(message))


def transformers_prompt(template: str, messages, agp: bool, bos, eos, now) -> str:
    """transformers' rendering; where it raises, ``"\0raise:" + message`` for the template's
    ``raise_exception`` and ``"\0error:" + message`` for any other error (input it refuses)."""
    try:
        return render_chat_template(template, messages, add_generation_prompt=agp, bos_token=bos, eos_token=eos,
                                    strftime_now=now, raise_exception=_raise)
    except _Raised as e:
        return "\0raise:" + str(e)
    except ChatTemplateError as e:
        return "\0error:" + str(e)


_hf = transformers_prompt


def mnn_prompt(template: str, messages, agp: bool, bos, eos, now) -> str:
    """MNN's rendering (the emulation); ``"\0mnn-error:" + message`` where its engine fails."""
    try:
        return render_mnn(template, messages, add_generation_prompt=agp, bos_token=bos, eos_token=eos,
                          strftime_now=now)
    except ChatTemplateError as e:
        return "\0mnn-error:" + str(e)


_mnn = mnn_prompt


def matches(hf: str, mnn: str) -> bool:
    """Whether MNN's rendering is transformers' (:func:`transformers_prompt`): the same text, or,
    where the template raised, :data:`RAISED` and the message.  Input transformers refuses with
    another error never matches: MNN's engine renders it anyway."""
    if hf.startswith("\0raise:"):
        return mnn == RAISED + hf[len("\0raise:"):]
    if hf.startswith("\0error:"):
        return False
    return hf == mnn


def _score(template: str, cases, hf_out, bos, eos, now, same_on_hf: bool = False) -> list[bool]:
    """Per case: MNN renders ``template`` as transformers rendered the original (and, with
    ``same_on_hf``, transformers renders ``template`` as the original)."""
    return [matches(h, _mnn(template, m, agp, bos, eos, now))
            and (not same_on_hf or _same_hf(_hf(template, m, agp, bos, eos, now), h)) for (m, agp), h in zip(cases, hf_out)]


def _same_hf(a: str, b: str) -> bool:
    """The same transformers rendering (refusing the input counts the same whatever the message)."""
    return a == b or (a.startswith("\0error:") and b.startswith("\0error:"))


def rewrite_for_mnn(template: str, *, bos_token: str | None = None, eos_token: str | None = None,
                    conversations: list[list[dict]] | None = None, strftime_now=None) -> Rewrite:
    """Rewrite ``template`` so that MNN's engine renders what transformers renders from it, and
    transformers renders it as the original.

    ``bos_token``/``eos_token``: the file's strings (``None``: unknown).  ``conversations``: extra
    conversations to check the rewrite on, besides :data:`PROBE_CONVERSATIONS` (each with and
    without the generation prompt).  Returns a :class:`Rewrite`: ``template`` (the original when
    nothing could be rewritten), ``applied`` (rules rewritten), ``losses`` (what MNN still renders
    differently), ``dropped`` (rewrites left out because a check rendered worse with them).
    """
    from datetime import datetime

    from mtokspec.chat.environment import parsing_environment
    from mtokspec.chat.lint import lint_chat_template

    now = strftime_now if strftime_now is not None else datetime(2024, 7, 26)
    try:
        ast = parsing_environment().parse(template)
    except jinja2.TemplateSyntaxError:
        return Rewrite(template, [], _losses(template, bos_token, lint_chat_template))
    cases = [(m, agp) for m in [*PROBE_CONVERSATIONS, *(conversations or [])] for agp in (True, False)]
    hf_out = [_hf(template, m, agp, bos_token, eos_token, now) for m, agp in cases]
    before = _score(template, cases, hf_out, bos_token, eos_token, now)
    groups = set(GROUPS)
    bos_empty = None if bos_token is None else not bos_token
    dropped: list[str] = []
    while True:
        try:
            new, applied = _print(ast, groups, bos_empty)
        except _Unprintable:
            return Rewrite(template, [], _losses(template, bos_token, lint_chat_template))
        after = _score(new, cases, hf_out, bos_token, eos_token, now)
        hf_same = [_same_hf(_hf(new, m, agp, bos_token, eos_token, now), h) for (m, agp), h in zip(cases, hf_out)]
        worse = [i for i, (b, a, same) in enumerate(zip(before, after, hf_same)) if (b and not a) or not same]
        if not worse:
            break
        # leave out, one at a time, the group whose removal repairs the most worse cases
        best, best_fixed = None, -1
        for g in sorted(applied):
            trial, _ = _print(ast, groups - {g}, bos_empty)
            score = _score(trial, [cases[i] for i in worse], [hf_out[i] for i in worse], bos_token, eos_token, now,
                           same_on_hf=True)
            if sum(score) > best_fixed:
                best, best_fixed = g, sum(score)
        if best is None:
            return Rewrite(template, [], _losses(template, bos_token, lint_chat_template), sorted(groups))
        groups.discard(best)
        dropped.append(best)
    return Rewrite(new, sorted(applied), _losses(new.replace(_TOJSON_MACRO, _TOJSON_STUB).replace(_REPR_MACRO, _REPR_STUB)
                                                  .replace(_TOJSON_IND_MACRO, _TOJSON_IND_STUB), bos_token,
                                                  lint_chat_template, applied), dropped)


def _losses(template: str, bos_token, lint, fixed: set[str] = frozenset()) -> list[Loss]:
    seen = []
    for f in lint(template, bos_token=bos_token):
        if f.code in fixed and f.code in _SELF_RAISED:
            continue
        loss = Loss(f.code, f.severity, f.message)
        if loss not in seen:
            seen.append(loss)
    return seen
