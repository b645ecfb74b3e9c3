"""The walk over a template's AST that finds each construct MNN renders differently."""

from __future__ import annotations

import jinja2
import jinja2.ext
import jinja2.nodes as nodes

from mtokspec.chat.lint.engine import (
    CAP,
    CONTEXT_VARS,
    GLIBC_STRFTIME_FLAG,
    MESSAGE_KEYS_MNN_PASSES,
    OTHER_SPECIAL_TOKENS,
    PASS_THROUGH_HARMLESS,
    PASS_THROUGH_SOMETIMES,
    PLAIN_ROLES,
    SANDBOX_MAX_RANGE,
    SEVERITY_RANK,
    TESTS_PARTLY,
    VALUE_RULES,
    WHERE,
    CALLER,
    EXTRA,
    MNN_FILTERS,
    MNN_FUNCTIONS,
    MNN_LOOP_ATTRS,
    MNN_METHODS,
    MNN_TESTS,
    PLAIN,
)
from mtokspec.chat.lint.expressions import (
    EMPTY,
    NONE,
    STR,
    UNDEF,
    UNKNOWN,
    bad_escapes,
    const_key,
    defaults_as_transformers,
    falsy_const,
    is_boolean,
    is_indexed_in,
    is_message_item,
    is_message_ref,
    is_messages,
    is_role,
    is_stringish,
    normalises,
    only_raises,
    op_name,
    operands,
    Scope,
    short,
    target_key,
    unparsable_inside,
)
from mtokspec.chat.lint.guards import TITLE
from mtokspec.chat.lint.whitespace import jinja_segments, mnn_segments
from mtokspec.format.validate import Finding


class TemplateLint:
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

    def expr(self, e: nodes.Node, reach: int, scope: Scope) -> None:
        if isinstance(e, nodes.CondExpr) and defaults_as_transformers(e):
            return  # X if X is defined else transformers' value: the same on both engines
        line = e.lineno
        if isinstance(e, (nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Pow)):
            self.add("mnn-jinja-unparsed-operator", "error", line,
                     f"MNN cannot parse the operator '{e.operator}': the expression ends before it", reach)
        elif isinstance(e, nodes.Const) and isinstance(e.value, float):
            self.add("mnn-jinja-unparsed-operator", "error", line,
                     f"MNN cannot parse the float {e.value!r}: it reads the integer part only", reach)
        elif isinstance(e, nodes.CondExpr) and e.expr2 is None:
            self.add("mnn-jinja-condexpr-no-else", "error", line,
                     "'a if b' without else: MNN yields a even when b is false", reach)
        elif isinstance(e, (nodes.List, nodes.Dict)):
            bad = unparsable_inside(e)
            if bad:
                self.add("mnn-jinja-literal-hang", "error", line,
                         f"a {'list' if isinstance(e, nodes.List) else 'dict'} literal holding {bad}: "
                         "MNN's parser loops forever appending items and runs out of memory", reach)
        elif isinstance(e, nodes.Tuple) and e.ctx == "load":
            self.add("mnn-jinja-unparsed-operator", "error", line,
                     "MNN cannot parse a tuple: it reads the first item only", reach)
        elif isinstance(e, nodes.Filter):
            self.filter_(e, reach, scope)
        elif isinstance(e, nodes.Test):
            self.test_(e, reach, scope)
        elif isinstance(e, nodes.Call):
            self.call(e, reach, scope)
        elif isinstance(e, nodes.Getattr):
            if isinstance(e.node, nodes.Name) and e.node.name == "loop" and e.attr not in MNN_LOOP_ATTRS:
                self.add("mnn-jinja-loop-attribute", "error", line,
                         f"loop.{e.attr} is undefined on MNN", reach)
            elif isinstance(e.node, nodes.Const) and isinstance(e.node.value, str):
                self.add("mnn-jinja-string-subscript", "error", line,
                         "an attribute of a string literal: MNN skips it", reach)
        elif isinstance(e, nodes.Getitem):
            if is_stringish(e.node, scope):
                self.add("mnn-jinja-string-subscript", "error", line,
                         "indexing or slicing a string: MNN gives '' (the literal itself for a literal)", reach)
        elif isinstance(e, nodes.Name):
            self.name(e, reach)
        elif isinstance(e, (nodes.Add, nodes.Concat, nodes.Compare)):
            how = {nodes.Add: "'+' with", nodes.Concat: "'~' with", nodes.Compare: "comparing"}[type(e)]
            for operand in operands(e):
                if isinstance(operand, nodes.Name):
                    self.use_of_context_var(operand, how, reach, scope)
                if isinstance(e, nodes.Concat) and self.value(operand, scope)[0] is UNDEF and not (
                        isinstance(operand, nodes.Name) and operand.name in {*CONTEXT_VARS, "bos_token"}):
                    self.add("mnn-jinja-undefined-concat", "error", operand.lineno,
                             "'~' with an undefined value: MNN writes its marker {'__jinja_undefined__': True} "
                             "(transformers: nothing)", reach)
        for child in e.iter_child_nodes():
            if isinstance(child, nodes.Expr):
                self.expr(child, reach, scope)
        if isinstance(e, nodes.Concat):
            for operand in e.nodes:
                if self.nonstring_kind(operand) == "a range (MNN: a JSON list)":
                    self.add("mnn-jinja-print-non-string", "error", operand.lineno,
                             "'~' with a range: MNN writes the list, transformers 'range(...)'", reach)
        if isinstance(e, (nodes.Add, nodes.Concat, nodes.Filter)) or (isinstance(e, nodes.Call) and e.args):
            for operand in operands(e):
                if isinstance(operand, (nodes.And, nodes.Or)) and not is_boolean(operand):
                    self.add("mnn-jinja-print-non-string", "error", operand.lineno,
                             f"'{op_name(operand)}' as a value: MNN gives a boolean, not the operand", reach)

    def name(self, e: nodes.Name, reach: int) -> None:
        n = e.name
        if n in OTHER_SPECIAL_TOKENS:
            self.add("mnn-jinja-special-token-undefined", "error", e.lineno,
                     f"{n} is not passed by MNN (only eos_token and a non-empty bos_token)", reach)

    def use_of_context_var(self, e: nodes.Name, how: str, reach: int, scope: Scope,
                           severity: str = "error") -> None:
        """``e`` is used in a way where undefined differs from transformers' value."""
        n = e.name
        if n in CONTEXT_VARS and scope.values.get(n, UNDEF) is UNDEF:
            self.add("mnn-jinja-context-undefined", severity, e.lineno,
                     f"{how} {n}: MNN leaves {n} undefined where transformers passes {CONTEXT_VARS[n]}", reach)
        elif n == "bos_token" and self.bos_token != "" and self.bos_token is not None:
            return
        elif n == "bos_token":
            sev = "error" if self.bos_token == "" else "warning"
            self.add("mnn-jinja-special-token-undefined", sev, e.lineno,
                     f"{how} bos_token: MNN leaves bos_token undefined when the file's is empty "
                     "(transformers: '')" + ("" if self.bos_token == "" else "; the file's BOS is not known"), reach)

    def filter_(self, e: nodes.Filter, reach: int, scope: Scope) -> None:
        f, line = e.name, e.lineno
        if isinstance(e.node, nodes.Name):
            if f in ("length", "count", "tojson", "string", "join", "items", "list", "first", "last",
                     "default", "d") or f not in MNN_FILTERS:
                if not (f in ("default", "d") and e.node.name == "bos_token"):
                    self.use_of_context_var(e.node, f"|{f} of", reach, scope)
        if f in PASS_THROUGH_HARMLESS:
            return
        if f in PASS_THROUGH_SOMETIMES:
            self.add("mnn-jinja-unsupported-filter", "warning", line,
                     f"MNN has no filter '{f}' and passes the value through: {PASS_THROUGH_SOMETIMES[f]}", reach)
        elif f not in MNN_FILTERS:
            self.add("mnn-jinja-unsupported-filter", "error", line,
                     f"MNN has no filter '{f}' and passes the value through unchanged", reach)
        elif f == "map" and (e.args or any(k.key not in ("attribute",) for k in e.kwargs)):
            self.add("mnn-jinja-unsupported-filter", "error", line,
                     "map(...) other than map(attribute=...): MNN reads the first argument as an attribute name", reach)
        elif f == "join" and (is_stringish(e.node, scope) or (
                isinstance(e.node, nodes.Call) and isinstance(e.node.node, nodes.Getattr)
                and e.node.node.attr in ("replace", "strip", "lstrip", "rstrip"))):
            self.add("mnn-jinja-unsupported-filter", "error", line,
                     "join of a string: MNN passes it through, transformers joins its characters", reach)
        elif f == "join" and any(k.key == "attribute" for k in e.kwargs):
            self.add("mnn-jinja-unsupported-filter", "error", line,
                     "join(attribute=...): MNN takes the attribute name as the separator", reach)
        elif f == "string" and e.node is not None and self.nonstring_kind(e.node) == "a mapping":
            self.add("mnn-jinja-print-non-string", "error", line,
                     "|string of a mapping: MNN sorts its keys (transformers keeps their order)", reach)
        elif f == "tojson":
            if any(k.key != "indent" for k in e.kwargs) or e.args:
                self.add("mnn-jinja-tojson-order", "error", line,
                         "tojson arguments other than indent= are ignored by MNN", reach)
            if not is_stringish(e.node, scope):  # a string serialises alike
                self.add("mnn-jinja-tojson-order", "warning", line,
                         "MNN's tojson sorts mapping keys (type, function, name, description, parameters, "
                         "properties, required, enum, then alphabetically): differs for mappings in another order",
                         reach)
        elif f == "trim":
            self.add("mnn-jinja-ascii-string-ops", "warning", line,
                     "MNN's trim strips only ' \\n\\r\\t' (Python: all Unicode white space, e.g. U+3000, "
                     "U+00A0)" + ("; its argument is ignored" if e.args else ""), reach)
        elif f in ("upper", "lower", "capitalize") and not is_role(e.node, scope):  # roles are ASCII
            self.add("mnn-jinja-ascii-string-ops", "warning", line,
                     f"MNN's {f} changes only ASCII letters: differs for other scripts", reach)
        elif f == "length" and is_stringish(e.node, scope):
            self.add("mnn-jinja-ascii-string-ops", "warning", line,
                     "MNN's length of a string counts UTF-8 bytes: differs for non-ASCII text", reach)

    def test_(self, e: nodes.Test, reach: int, scope: Scope) -> None:
        t, line = e.name, e.lineno
        if id(e) in self.exact_tests:
            return
        if isinstance(e.node, nodes.Name):
            self.use_of_context_var(e.node, f"'is {t}' of", reach, scope)
        elif t in ("defined", "undefined") and isinstance(e.node, nodes.Getitem) and not (
                const_key(e.node) in MESSAGE_KEYS_MNN_PASSES and is_message_ref(e.node.node, scope)):
            self.add("mnn-jinja-missing-item-defined", "error", line,
                     f"x[...] is {t}: MNN reads a missing key as '' (defined), so the test is always "
                     f"{'true' if t == 'defined' else 'false'}; x.key would work", reach)
        if t not in MNN_TESTS:
            self.add("mnn-jinja-unsupported-test", "error", line,
                     f"MNN has no test '{t}': it is always false" + (" and its arguments break the parse" if e.args else ""), reach)
        elif t in TESTS_PARTLY:
            self.add("mnn-jinja-unsupported-test", "warning", line, f"MNN's '{t}' test is {TESTS_PARTLY[t]}", reach)

    def call(self, e: nodes.Call, reach: int, scope: Scope) -> None:
        line = e.lineno
        if isinstance(e.node, nodes.Name):
            fn = e.node.name
            if fn == "raise_exception":
                self.add("mnn-jinja-raise-noop", "warning", line,
                         "raise_exception is a no-op on MNN: input transformers rejects renders anyway", reach)
            elif fn in (TITLE + "_method", TITLE + "_filter") and e.args and not is_role(e.args[0], scope):
                self.add("mnn-jinja-ascii-string-ops", "warning", line,
                         "title case on MNN (the rewrite's words capitalized) changes ASCII letters only and "
                         "starts words after ASCII characters only: differs for other scripts", reach)
            elif fn in self.macros:
                self.macro_reach[fn] = max(self.macro_reach.get(fn, -1), reach)
                self.macro_call(e, self.macros[fn], reach)
            elif fn == "range":
                for a in e.args:
                    if isinstance(a, nodes.Const) and isinstance(a.value, int) and abs(a.value) > SANDBOX_MAX_RANGE:
                        self.add("mnn-jinja-large-range", "error", line,
                                 f"range of {a.value} items: MNN builds it (memory), transformers refuses it", reach)
            elif fn == "strftime_now":
                for a in e.args:
                    if isinstance(a, nodes.Const) and isinstance(a.value, str) and GLIBC_STRFTIME_FLAG.search(a.value):
                        self.add("mnn-jinja-strftime-flag", "error", line,
                                 f"strftime_now({a.value!r}): std::put_time has no glibc flags, MNN prints them as is", reach)
            elif fn not in MNN_FUNCTIONS and fn != "caller":
                self.add("mnn-jinja-unknown-function", "error", line, f"{fn}() is not a function on MNN: it gives ''", reach)
        elif isinstance(e.node, nodes.Getattr):
            method = e.node.attr
            if isinstance(e.node.node, nodes.Const) and isinstance(e.node.node.value, str):
                self.add("mnn-jinja-unsupported-method", "error", line,
                         f"'...'.{method}(): MNN skips methods called on a string literal", reach)
            elif method not in MNN_METHODS:
                if method == "get" and (len(e.args) < 2 or falsy_const(e.args[1])):
                    self.add("mnn-jinja-unsupported-method", "warning", line,
                             ".get(key) is '' on MNN: same as transformers' None only where the key is "
                             "missing and the result is only tested for truth", reach)
                elif method == "append":
                    self.add("mnn-jinja-unsupported-method", "warning", line,
                             ".append() is refused by transformers' sandbox and a no-op on MNN", reach)
                else:
                    self.add("mnn-jinja-unsupported-method", "error", line,
                             f".{method}() is not a method on MNN: it gives ''", reach)
            elif method == "split" and (not e.args or len(e.args) > 1 or e.kwargs):
                self.add("mnn-jinja-method-arguments", "warning" if not e.args else "error", line,
                         "split() without a separator splits on single spaces on MNN" if not e.args
                         else "MNN ignores split's maxsplit", reach)
            elif method in ("strip", "lstrip", "rstrip") and not e.args:
                self.add("mnn-jinja-ascii-string-ops", "warning", line,
                         f"MNN's {method}() strips only ' \\n\\r\\t' (Python: all Unicode white space)", reach)
            elif method == "replace" and len(e.args) > 2:
                self.add("mnn-jinja-method-arguments", "error", line, "MNN ignores replace's count", reach)

    def macro_call(self, e: nodes.Call, m: nodes.Macro, reach: int) -> None:
        given = {a.name for a in m.args[:len(e.args)]} | {k.key for k in e.kwargs}
        first_default = len(m.args) - len(m.defaults)
        for arg, default in zip(m.args[first_default:], m.defaults):
            if arg.name in given:
                continue
            falsy = falsy_const(default)
            self.add("mnn-jinja-macro-default", "warning" if falsy else "error", e.lineno,
                     f"{m.name}() called without {arg.name}: MNN ignores its default and leaves it undefined"
                     + (" (differs where it is printed or tested other than for truth)" if falsy else ""), reach)

    # -- abstract evaluation -----------------------------------------------------------------
    def value(self, e: nodes.Expr, scope: Scope) -> tuple[object, int]:
        """(abstract value on MNN, reach of inputs for which it differs) for a role/content
        conversation; UNKNOWN when it depends on the data."""
        if isinstance(e, nodes.Name):
            if e.name in ("tools", "documents"):
                v = scope.values.get(e.name, UNDEF)
                return v, CALLER
            if e.name in OTHER_SPECIAL_TOKENS:
                return UNDEF, EXTRA
            if e.name in self.free_names:
                return scope.values.get(e.name, UNDEF), CALLER
            return UNKNOWN, PLAIN
        guarded = defaults_as_transformers(e)
        if guarded in ("tools", "documents"):  # transformers' None where MNN leaves it undefined
            v, c = self.value(nodes.Name(guarded, "load"), scope)
            return (NONE if v is UNDEF else v), c
        key = const_key(e)
        if key is not None and isinstance(e, (nodes.Getitem, nodes.Getattr)) and is_message_ref(e.node, scope):
            if key in MESSAGE_KEYS_MNN_PASSES:
                return STR, EXTRA
            return (EMPTY if isinstance(e, nodes.Getitem) else UNDEF), EXTRA
        if isinstance(e, nodes.Call) and isinstance(e.node, nodes.Getattr) and e.node.attr == "get":
            return EMPTY, EXTRA  # MNN has no dict.get
        if isinstance(e, nodes.Const):
            return (NONE if e.value is None else e.value), PLAIN
        if isinstance(e, (nodes.Getitem, nodes.Getattr)):
            inner, cause = self.value(e.node, scope)
            if inner in (UNDEF, EMPTY, NONE):
                return (EMPTY if isinstance(e, nodes.Getitem) else UNDEF), cause
        if isinstance(e, nodes.Filter) and e.name in ("list", "selectattr", "rejectattr", "select", "reject",
                                                      "safe", "items", "dictsort"):
            return self.value(e.node, scope)
        return UNKNOWN, PLAIN

    def truth(self, e: nodes.Expr, scope: Scope) -> tuple[bool | None, int]:
        """(truth on MNN or None when data decides, reach of inputs where it is otherwise)."""
        if isinstance(e, nodes.Not):
            v, c = self.truth(e.node, scope)
            return (None if v is None else not v), c
        if isinstance(e, (nodes.And, nodes.Or)):
            lv, lc = self.truth(e.left, scope)
            rv, rc = self.truth(e.right, scope)
            if isinstance(e, nodes.And):
                if lv is False:
                    return False, lc
                if rv is False:
                    return False, rc
                if lv is True and rv is True:
                    return True, min(lc, rc)
                return None, PLAIN
            if lv is True:
                return True, lc
            if rv is True:
                return True, rc
            if lv is False and rv is False:
                return False, min(lc, rc)
            return None, PLAIN
        if isinstance(e, nodes.Test) and e.name in ("defined", "undefined", "none", "string", "mapping",
                                                    "sequence", "iterable"):
            v, c = self.value(e.node, scope)
            if v is UNKNOWN or (v is not STR and e.name in ("string", "mapping", "sequence", "iterable")):
                return None, PLAIN
            res = {"defined": v is not UNDEF, "undefined": v is UNDEF, "none": v is NONE,
                   "string": True, "mapping": False, "sequence": True, "iterable": True}[e.name]
            return res, c
        if isinstance(e, nodes.Compare) and len(e.ops) == 1 and is_role(e.expr, scope):
            op, other = e.ops[0].op, e.ops[0].expr
            consts = ([other.value] if isinstance(other, nodes.Const) else
                      [i.value for i in other.items if isinstance(i, nodes.Const)]
                      if isinstance(other, (nodes.List, nodes.Tuple)) and all(
                          isinstance(i, nodes.Const) for i in other.items) else None)
            if consts is not None and all(isinstance(c, str) and c not in PLAIN_ROLES for c in consts):
                if op in ("eq", "in"):
                    return False, EXTRA
                if op in ("ne", "notin"):
                    return True, EXTRA
            return None, PLAIN
        if isinstance(e, nodes.Compare) and len(e.ops) == 1 and e.ops[0].op in ("in", "notin"):
            key = e.expr.value if isinstance(e.expr, nodes.Const) else None
            if isinstance(key, str) and is_message_ref(e.ops[0].expr, scope):
                present = key in MESSAGE_KEYS_MNN_PASSES
                return (present if e.ops[0].op == "in" else not present), EXTRA
            return None, PLAIN
        v, c = self.value(e, scope)
        if v in (UNDEF, EMPTY, NONE):
            return False, c
        if v is UNKNOWN or not isinstance(v, (bool, int, str)):
            return None, PLAIN
        return bool(v), PLAIN
