"""The lint's checks of expressions: names, filters, tests, calls and macro calls, and the
values and truth of expressions as MNN would decide them on a role/content conversation."""

from __future__ import annotations

import jinja2.nodes as nodes

from mtokspec.chat.lint.engine import (
    CONTEXT_VARS,
    GLIBC_STRFTIME_FLAG,
    MESSAGE_KEYS_MNN_PASSES,
    OTHER_SPECIAL_TOKENS,
    PASS_THROUGH_HARMLESS,
    PASS_THROUGH_SOMETIMES,
    PLAIN_ROLES,
    SANDBOX_MAX_RANGE,
    TESTS_PARTLY,
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
    const_key,
    defaults_as_transformers,
    falsy_const,
    is_boolean,
    is_message_ref,
    is_role,
    is_stringish,
    op_name,
    operands,
    Scope,
    unparsable_inside,
)
from mtokspec.chat.lint.guards import TITLE


class ExprChecks:
    """The expression half of :class:`~mtokspec.chat.lint.checks.TemplateLint` (which holds the
    findings and walks the statements)."""

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
