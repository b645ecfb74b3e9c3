"""The walk over a template's AST that finds each construct MNN renders differently."""

from __future__ import annotations

import jinja2
import jinja2.ext
import jinja2.nodes as nodes

from mtokspec.chat.lint.engine import (
    CAP,
    CONTEXT_VARS,
    SEVERITY_RANK,
    VALUE_RULES,
    WHERE,
    CALLER,
    PLAIN,
)
from mtokspec.chat.lint.expressions import (
    EMPTY,
    NONE,
    UNDEF,
    UNKNOWN,
    bad_escapes,
    const_key,
    is_boolean,
    is_indexed_in,
    is_message_item,
    is_messages,
    normalises,
    only_raises,
    op_name,
    Scope,
    short,
    target_key,
)
from mtokspec.chat.lint.whitespace import jinja_segments, mnn_segments
from mtokspec.format.validate import Finding
from mtokspec.chat.lint.expr_checks import ExprChecks


class TemplateLint(ExprChecks):
    def __init__(self, path: str, bos_token: str | None):
        self.path = path
        self.bos_token = bos_token
        self.found: dict[tuple[str, int | None], Finding] = {}
        self.exact_tests: set[int] = set()  # id() of the rewrite's guard tests (lint/guards.py)
        self.macros: dict[str, nodes.Macro] = {}
        self.macro_reach: dict[str, int] = {}
        self.sink = False  # inside {{ ... }}: a value's difference is printed
        self.line_reach: dict[int, int] = {}
        self.free_names: set[str] = set()
        self.printed_vars: set[str | None] = set()  # variables (x, ns.attr) read inside {{ ... }}
        self.var_kinds: dict[str, str] = {}  # variables last set to a value MNN prints as JSON
        self.text_diffs: list[tuple[int, int, str]] = []
        self.escapes: list[tuple[int, str]] = []
        self.hangs: list[tuple[int, str]] = []
        self.token_findings: list[tuple[int, str, str]] = []  # found in the tokens, judged once reach is known

    # -- findings --------------------------------------------------------------------------
    def add(self, code: str, severity: str, lineno: int | None, message: str, reach: int = PLAIN) -> None:
        if code in VALUE_RULES and not self.sink and severity == "error":
            severity = "warning"
            message += " (the value goes to a variable or a condition: the output differs only where it changes)"
        if reach < PLAIN and SEVERITY_RANK[severity] > SEVERITY_RANK[CAP[reach]]:
            severity = CAP[reach]
        if reach < PLAIN:
            message += WHERE[reach]
        where = f"{self.path}:{lineno}" if lineno else self.path
        key = (code, lineno)
        old = self.found.get(key)
        if old is None:
            self.found[key] = Finding(severity, where, message, code)
        elif message not in old.message:
            worst = max(severity, old.severity, key=SEVERITY_RANK.__getitem__)
            self.found[key] = Finding(worst, where, old.message + "; " + message, code)

    def result(self) -> list[Finding]:
        return sorted(self.found.values(),
                      key=lambda f: (int(f.path.rsplit(":", 1)[1]) if ":" in f.path else 0, f.code))

    # -- token-level checks ----------------------------------------------------------------
    def lexical(self, env: jinja2.Environment, template: str) -> None:
        tokens = list(env.lexer.tokeniter(template, None))
        in_variable = False
        for (_, prev_kind, prev_value), (lineno, kind, value) in zip([(0, "", "")] + tokens, tokens):
            if kind == "variable_begin":
                in_variable = True
            elif kind == "variable_end":
                in_variable = False
            if in_variable or kind == "variable_end":
                # MNN's lexer ends a {{ }} tag at the first '}}' it meets between tokens, so a dict
                # literal closed by '}}' or right before the tag's end leaves its parser looping.
                if prev_kind == "operator" and prev_value == "}" and (
                        kind == "variable_end" or (kind == "operator" and value == "}")):
                    self.hangs.append((lineno, "a dict literal closed right before '}}': MNN's lexer reads "
                                               "'}}' as the end of the tag and its parser loops forever"))
            if kind == "string":
                bad = bad_escapes(value[1:-1])
                if bad:
                    self.escapes.append((lineno, f"string literal {value} uses the escape(s) {', '.join(bad)}, "
                                                 "which MNN reads as the bare character"))
            elif kind == "block_begin" and value.endswith("+"):
                self.token_findings.append((lineno, "unsupported-statement",
                                           "{%+ is unknown to MNN: it skips the whole tag and renders what follows"))
            elif kind == "raw_begin":
                self.add("mnn-jinja-unsupported-statement", "error", lineno,
                         "{% raw %} is unknown to MNN: the tags inside are executed")
        self._whitespace(tokens, template)

    def _whitespace(self, tokens: list[tuple[int, str, str]], template: str) -> None:
        ours = jinja_segments(tokens)
        theirs = mnn_segments(template)
        if len(ours) != len(theirs):
            return  # the tags themselves are read differently; other rules report why
        for (lineno, tag_line, hf_text), mnn_text in zip(ours, theirs):
            if hf_text != mnn_text:
                self.text_diffs.append((lineno, tag_line,
                                        f"MNN keeps the text {short(mnn_text)} where transformers keeps {short(hf_text)}"))

    def whitespace_findings(self) -> None:
        """The text differences, as reached as the statements around them."""
        lines = sorted(self.line_reach)
        for lineno, tag_line, message in self.text_diffs[:8]:  # a few are enough to fix the rest
            near = [ln for ln in lines if lineno <= ln <= tag_line + 1]
            reach = max((self.line_reach[ln] for ln in near), default=PLAIN)
            self.add("mnn-jinja-whitespace", "error", lineno, message, reach)
        for lineno, message in self.escapes:
            self.add("mnn-jinja-string-escape", "error", lineno, message, self.line_reach.get(lineno, PLAIN))
        for lineno, message in self.hangs:
            self.add("mnn-jinja-literal-hang", "error", lineno, message, self.line_reach.get(lineno, PLAIN))
        for lineno, code, message in self.token_findings:
            self.add(f"mnn-jinja-{code}", "error", lineno, message, self.line_reach.get(lineno, PLAIN))

    def typed_content(self, ast: nodes.Template) -> None:
        """MNN's apply_chat_template (jinja.hpp:2185-2226) renders the template once with a string
        content and once with [{type: text, text}] parts; when only the parts show, it converts every
        string content to parts.  Statically: content is read as parts (iterated or indexed) and
        never printed as it is."""
        parts_at = None
        for node in ast.find_all((nodes.For, nodes.Getitem)):
            inner = node.iter if isinstance(node, nodes.For) else node.node
            if const_key(inner) == "content" and (
                    isinstance(node, nodes.For) or not isinstance(node.arg, nodes.Const) or isinstance(node.arg.value, int)):
                parts_at = parts_at or node.lineno
        if parts_at is None:
            return
        for out in ast.find_all(nodes.Output):
            for child in out.nodes:
                for sub in [child, *child.find_all(nodes.Expr)]:
                    if const_key(sub) == "content" and not is_indexed_in(sub, child):
                        return
        self.add("mnn-jinja-typed-content", "warning", parts_at,
                 "content is read as a list of parts and never printed as a string: MNN then turns every "
                 "string content into [{'type': 'text', 'text': ...}] (transformers leaves it a string)")

    # -- AST walk ----------------------------------------------------------------------------
    def walk_template(self, ast: nodes.Template) -> None:
        for m in ast.find_all(nodes.Macro):
            self.macros.setdefault(m.name, m)
        scope = Scope()
        self.stmts(ast.body, PLAIN, scope, top=True)
        # Macro bodies: as reached as their most reached call; calls inside macros may raise
        # another macro's reach, so repeat until nothing changes.
        done: dict[str, int] = {}
        while True:
            todo = [(n, r) for n, r in self.macro_reach.items() if done.get(n, -1) < r]
            if not todo:
                break
            for name, reach in todo:
                done[name] = reach
                m = self.macros[name]
                self.stmts(m.body, reach, Scope(values=dict(scope.values)))
        for name, m in self.macros.items():
            if name not in done:
                self.stmts(m.body, CALLER, Scope(values=dict(scope.values)))

    def stmts(self, body: list[nodes.Node], reach: int, scope: Scope, top: bool = False) -> None:
        for node in body:
            self.stmt(node, reach, scope, top)

    def stmt(self, node: nodes.Node, reach: int, scope: Scope, top: bool) -> None:
        if isinstance(node, nodes.Node):
            self.line_reach[node.lineno] = max(self.line_reach.get(node.lineno, -1), reach)
        if isinstance(node, list):  # a {% generation %} body
            self.stmts(node, reach, scope, top)
        elif isinstance(node, nodes.Output):
            for child in node.nodes:
                if isinstance(child, nodes.TemplateData):
                    continue
                self.sink = True
                self.printed(child, reach, scope)
                self.expr(child, reach, scope)
                self.sink = False
        elif isinstance(node, nodes.If):
            self.if_(node, reach, scope, top)
        elif isinstance(node, nodes.For):
            self.for_(node, reach, scope)
        elif isinstance(node, nodes.Assign):
            self.assign(node, reach, scope, top)
        elif isinstance(node, nodes.Macro):
            for arg, default in zip(node.args[len(node.args) - len(node.defaults):], node.defaults):
                self.expr(default, reach, scope)
        elif isinstance(node, (nodes.Break, nodes.Continue)):
            self.add("mnn-jinja-unsupported-statement", "warning", node.lineno,
                     f"{{% {type(node).__name__.lower()} %}} is ignored by MNN: the loop goes on (differs "
                     "where the rest of the loop prints something)", reach)
        elif isinstance(node, nodes.ExprStmt):
            self.expr(node.node, reach, scope)
        else:
            name = {nodes.AssignBlock: "{% set %}...{% endset %}", nodes.With: "{% with %}",
                    nodes.FilterBlock: "{% filter %}", nodes.CallBlock: "{% call %}",
                    nodes.Include: "{% include %}", nodes.Import: "{% import %}",
                    nodes.FromImport: "{% from ... import %}", nodes.Extends: "{% extends %}",
                    nodes.Block: "{% block %}", nodes.Scope: None,
                    nodes.ScopedEvalContextModifier: "{% autoescape %}"}.get(type(node), "?")
            if name is not None:
                self.add("mnn-jinja-unsupported-statement", "error", node.lineno,
                         f"{name if name != '?' else type(node).__name__} is unknown to MNN: the tag is "
                         "skipped and its body rendered as is", reach)
            for child in node.iter_child_nodes():
                if isinstance(child, nodes.Expr):
                    self.expr(child, reach, scope)
                else:
                    self.stmt(child, reach, scope, False)

    def if_(self, node: nodes.If, reach: int, scope: Scope, top: bool) -> None:
        branches: list[tuple[nodes.Expr | None, list[nodes.Node]]] = [(node.test, node.body)]
        branches += [(e.test, e.body) for e in node.elif_]
        branches.append((None, node.else_))
        if all(only_raises(body) for _, body in branches):
            # The condition only chooses whether a no-op raise runs: whatever MNN makes of it,
            # the output is the same (the raise itself is reported).
            for _, body in branches:
                self.stmts(body, reach, scope)
            return
        # Top-level "if tools is not defined: set tools = ..." gives tools the value both sides see.
        normalised = top and normalises(node)
        here = reach
        for test, body in branches:
            if test is not None:
                if not (normalised and test is node.test):
                    self.expr(test, here, scope)
                value, cause = self.truth(test, scope)
            else:
                value, cause = True, PLAIN
            if value is False:
                self.stmts(body, min(here, cause), scope)
                continue
            self.stmts(body, here, scope, top)
            if value is True:
                here = min(here, cause)  # later branches only when this test is not as MNN sees it

    def for_(self, node: nodes.For, reach: int, scope: Scope) -> None:
        self.expr(node.iter, reach, scope)
        if node.test is not None:
            self.expr(node.test, reach, scope)
        if node.else_:
            self.add("mnn-jinja-unsupported-statement", "error", node.lineno,
                     "{% for %}...{% else %}: MNN renders the else part in every iteration, never "
                     "for an empty sequence", reach)
        if node.recursive:
            self.add("mnn-jinja-unsupported-statement", "error", node.lineno,
                     "recursive loops are unknown to MNN", reach)
        self.for_iterable(node, reach)
        body_reach = reach
        it = self.value(node.iter, scope)
        if it[0] in (UNDEF, EMPTY, NONE):
            body_reach = min(reach, it[1])
        inner = Scope(set(scope.message_vars), dict(scope.values))
        if isinstance(node.target, nodes.Name) and is_messages(node.iter):
            inner.message_vars.add(node.target.name)
        self.stmts(node.body, body_reach, inner)
        self.stmts(node.else_, reach, scope)

    def for_iterable(self, node: nodes.For, reach: int) -> None:
        """A loop over a string (MNN: no iteration) or over a mapping (MNN: keys sorted bytewise)."""
        it = node.iter
        if (isinstance(it, nodes.Const) and isinstance(it.value, str) and it.value) or isinstance(it, nodes.Concat) \
                or (isinstance(it, nodes.Filter) and it.name == "string"):
            self.add("mnn-jinja-for-string", "error", node.lineno,
                     "a for loop over a string: transformers visits its characters, MNN visits nothing", reach)
        elif isinstance(it, nodes.Dict) and it.items:
            keys = [k.key.value if isinstance(k.key, nodes.Const) else None for k in it.items]
            if any(not isinstance(k, str) for k in keys) or keys != sorted(keys, key=lambda k: k.encode()):
                self.add("mnn-jinja-for-mapping-sorted", "error", node.lineno,
                         "a for loop over a mapping: transformers visits its keys in order, MNN sorted bytewise",
                         reach)

    def assign(self, node: nodes.Assign, reach: int, scope: Scope, top: bool) -> None:
        if isinstance(node.target, nodes.Tuple):
            self.add("mnn-jinja-unsupported-statement", "error", node.lineno,
                     "{% set a, b = ... %}: MNN cannot assign to a tuple, nothing is set", reach)
        self.expr(node.node, reach, scope)
        if isinstance(node.node, nodes.Name):
            self.use_of_context_var(node.node, "assigning", reach, scope, severity="warning")
        key = target_key(node.target)
        kind = self.nonstring_kind(node.node)
        if key is not None:
            if kind:
                self.var_kinds[key] = kind
            else:
                self.var_kinds.pop(key, None)
        if isinstance(node.node, (nodes.And, nodes.Or)) and not is_boolean(node.node) and key in self.printed_vars:
            self.add("mnn-jinja-print-non-string", "warning", node.lineno,
                     f"'{op_name(node.node)}' gives MNN a boolean, not the operand: the variable "
                     "differs unless it is only tested for truth", reach)
        if isinstance(node.target, nodes.Name):
            name = node.target.name
            if is_message_item(node.node, scope):
                scope.message_vars.add(name)
            if name in CONTEXT_VARS or name in scope.values or name in self.free_names:
                v = self.value(node.node, scope)[0]
                scope.values[name] = v if v in (NONE, UNDEF, EMPTY) else UNKNOWN

    # -- expressions -------------------------------------------------------------------------
    def printed(self, e: nodes.Expr, reach: int, scope: Scope) -> None:
        """``{{ e }}``: MNN prints JSON for what is not a string or an integer."""
        kind = self.nonstring_kind(e)
        if isinstance(e, nodes.Name) and e.name in CONTEXT_VARS:
            self.use_of_context_var(e, "printing", reach, scope)
        if kind:
            self.add("mnn-jinja-print-non-string", "error", e.lineno,
                     f"printing {kind}: MNN writes JSON (true/null/[...]), transformers Python's repr", reach)

    def nonstring_kind(self, e: nodes.Expr) -> str | None:
        """What a printed value statically is when MNN prints it otherwise than Python: None, a
        boolean, a list or mapping (MNN prints JSON); None when it is a string, number or unknown."""
        if isinstance(e, nodes.Const) and (e.value is None or isinstance(e.value, bool)):
            return repr(e.value)
        if isinstance(e, (nodes.And, nodes.Or)) and not is_boolean(e):
            return f"'{op_name(e)}' (MNN: a boolean, not the operand)"
        if is_boolean(e):
            return "a boolean"
        if isinstance(e, (nodes.List, nodes.Tuple)):
            return "a list"
        if isinstance(e, nodes.Dict):
            return "a mapping"
        if isinstance(e, nodes.Call) and isinstance(e.node, nodes.Name) and e.node.name == "range":
            return "a range (MNN: a JSON list)"
        if isinstance(e, nodes.CondExpr):
            return self.nonstring_kind(e.expr1) or (self.nonstring_kind(e.expr2) if e.expr2 else None)
        if isinstance(e, nodes.Filter) and e.name in ("safe", "list"):
            return self.nonstring_kind(e.node) if e.node is not None else None
        if isinstance(e, (nodes.Name, nodes.Getattr)):
            return self.var_kinds.get(target_key(e) or "")
        return None
