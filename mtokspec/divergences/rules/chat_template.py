"""Where MNN's Jinja engine renders a chat template differently from transformers.

MNN renders chat templates with its own small engine (``tokenizer/jinja.hpp``, from
wangzhaode/jinja.cpp), called by ``Tokenizer::apply_chat_template`` (``tokenizer.cpp:1018``) with
``eos_token``, ``bos_token`` (only when non-empty), ``messages`` (role/content pairs),
``add_generation_prompt`` (only when true), no ``tools`` and the file's extra context.  Every
example below was rendered by MNN's own code (the ``mnn_tok`` driver at the commit the reference
files name) and by transformers' semantics (``mtokspec.chat.render``), with
``messages = [system "Sys", user "Hi", assistant "Yo"]`` unless it says otherwise.

``mtokspec.chat.lint`` finds these constructs in a template (one analysis of the whole template, keyed
by these codes); its severity depends on where the construct sits (see there).
"""

from __future__ import annotations

from collections.abc import Iterator

from mtokspec.divergences.rule import LintContext, Prediction, Rule
from mtokspec.divergences.rules import JINJA, TOK

_J, _T = JINJA, TOK


def _predict(code: str):
    """A chat rule's prediction: the template lint's findings with its code (the lint reads the
    whole template once per file; :class:`LintContext` keeps its findings)."""

    def predict(ctx: LintContext) -> Iterator[Prediction]:
        for f in ctx.chat_findings:
            if f.code == code:
                yield f.severity, f.path, f.message
    return predict


def _r(code: str, summary: str, example: str, ref: str) -> Rule:
    return Rule(code=code, component="chat_template", summary=summary, example=example, mnn_ref=ref,
                predict=_predict(code))


RULES: tuple[Rule, ...] = (
    _r("mnn-jinja-raise-noop",
       "raise_exception(...) is not defined: the call renders '' and rendering goes on, so input "
       "transformers rejects renders anyway",
       "{{ raise_exception('bad') }}after -> transformers: error 'bad'; MNN: 'after'",
       f"{_J}:1297"),
    _r("mnn-jinja-for-string",
       "a for loop over a string iterates nothing (transformers: its characters)",
       "{% for c in 'xy' %}{{ c }}{% endfor %} -> transformers: 'xy'; MNN: ''",
       f"{_J}:1372"),
    _r("mnn-jinja-for-mapping-sorted",
       "a for loop over a mapping visits its keys sorted bytewise (transformers: in insertion order)",
       "{% for k in {'b': 1, 'a': 2, 'B': 3} %}{{ k }}{% endfor %} -> transformers: 'baB'; MNN: 'Bab'",
       f"{_J}:1372"),
    _r("mnn-jinja-missing-item-defined",
       "x['key'] of a missing key (or index out of range) is '' rather than undefined, so "
       "'x[\"key\"] is defined' is always true (x.key is right)",
       "{% for m in messages %}{% if m['tool_calls'] is defined %}T{% else %}N{% endif %}{% endfor %}"
       " -> transformers: 'NNN'; MNN: 'TTT'",
       f"{_J}:813"),
    _r("mnn-jinja-special-token-undefined",
       "MNN defines only eos_token and, when the file's bos_token is non-empty, bos_token; other "
       "special tokens (pad_token, unk_token, ...) and an empty bos_token are undefined, and "
       "undefined + 'x' is '' while undefined ~ 'x' prints the undefined marker",
       "bos_token '': {{ bos_token + 'X' }} -> transformers: 'X'; MNN: ''",
       f"{_T}:1029"),
    _r("mnn-jinja-undefined-concat",
       "MNN's undefined is a mapping with one key: '~' (and |string) write it as "
       "{'__jinja_undefined__': True} where transformers writes nothing",
       "{% for m in messages %}{{ m.role ~ m.name }}|{% endfor %} -> transformers: 'system|user|assistant|'; "
       "MNN: \"system{'__jinja_undefined__': True}|...\"",
       f"{_J}:1141"),
    _r("mnn-jinja-context-undefined",
       "tools, documents (never passed) and add_generation_prompt (when false) are undefined on "
       "MNN where transformers passes None/False: 'is none', 'is defined', printing, |length (1!) "
       "and 'in' differ; only truthiness agrees",
       "{{ tools is none }}|{{ tools is defined }}|{{ tools|length }} -> transformers: error (len of "
       "None); MNN: 'false|false|1'",
       f"{_J}:2236"),
    _r("mnn-jinja-unparsed-operator",
       "MNN's parser has no *, /, //, % or ** (nor float literals): the expression is cut before "
       "the operator and the rest of the tag is skipped",
       "{{ 7 % 3 }}|{{ 2 * 3 }}|{{ 7 // 2 }}|{{ 2 ** 3 }}|{{ 1.5 }} -> transformers: '1|6|3|8|1.5'; "
       "MNN: '7|2|7|2|1'",
       f"{_J}:1846"),
    _r("mnn-jinja-literal-hang",
       "a list or dict literal holding anything MNN cannot parse (an operator above, a float, a "
       "tuple, a test with arguments), or a dict closed by '}}' inside {{ }} (the lexer ends the tag "
       "there), makes its parser loop forever: memory runs out or it never returns",
       "{{ [1 * 2] }} -> transformers: '[2]'; MNN: std::bad_alloc (2 GiB limit); "
       "{% for a, b in [(1, 2)] %} likewise; {{ {'a': 1}}} -> \"{'a': 1}\" vs no answer",
       f"{_J}:1903"),
    _r("mnn-jinja-condexpr-no-else",
       "'a if b' without else yields a whatever b is (transformers: undefined when b is false)",
       "{{ 'x' if false }} -> transformers: ''; MNN: 'x'",
       f"{_J}:1767"),
    _r("mnn-jinja-loop-attribute",
       "loop.revindex, revindex0, previtem, nextitem, cycle, depth, changed are undefined "
       "(only index, index0, first, last, length exist)",
       "{% for m in messages %}{{ loop.revindex }}{% endfor %} -> transformers: '321'; MNN: ''",
       f"{_J}:1437"),
    _r("mnn-jinja-unsupported-statement",
       "tags MNN does not know (break, continue, for-else, recursive loops, set blocks, tuple "
       "assignment, with, filter and call blocks, include/import, any tag opened with {%+) are skipped: "
       "their body renders unconditionally or nothing happens",
       "{% for m in messages %}{% if loop.index0 == 1 %}{% break %}{% endif %}{{ m.role }}{% endfor %}"
       " -> transformers: 'system'; MNN: 'systemuserassistant'; {% set x %}blk{% endset %}[{{ x }}] -> "
       "'[blk]' vs 'blk[]'",
       f"{_J}:1513"),
    _r("mnn-jinja-unsupported-filter",
       "a filter MNN lacks passes its input through unchanged (first, sort, selectattr, "
       "dictsort, default, title, ...); map('filter') is read as map(attribute=...)",
       "{{ messages|first }} -> transformers: \"{'role': 'system', 'content': 'Sys'}\"; MNN: the "
       "whole list as JSON; {{ x|default('D') }} -> 'D' vs ''",
       f"{_J}:1032"),
    _r("mnn-jinja-unsupported-test",
       "a test MNN lacks (divisibleby, odd, even, in, equalto, ...) is false; mapping is true "
       "for undefined, iterable/sequence are false for mappings",
       "{{ 3 is odd }}|{{ {} is iterable }}|{{ x is mapping }} -> transformers: 'True|True|False'; "
       "MNN: 'false|false|true'",
       f"{_J}:1165"),
    _r("mnn-jinja-unsupported-method",
       "only the string methods startswith, endswith, split, lstrip, rstrip, strip, replace exist; "
       "any other method (dict.get, items, keys, upper, format, append ...) gives '', and "
       "methods on a string literal are skipped",
       "{{ messages[0].get('role') }}|{{ messages[0].get('x', 'D') }} -> transformers: 'system|D'; "
       "MNN: '|'",
       f"{_J}:906"),
    _r("mnn-jinja-method-arguments",
       "split() without a separator splits on single spaces (Python: runs of any whitespace); "
       "split's maxsplit and replace's count are ignored",
       "{% set s = 'a  b' %}{{ s.split()|join(',') }} -> transformers: 'a,b'; MNN: 'a,,b'",
       f"{_J}:857"),
    _r("mnn-jinja-ascii-string-ops",
       "trim/strip() strip only ' \\n\\r\\t' (Python: all Unicode white space); upper, lower, "
       "capitalize change only ASCII letters; length of a string counts UTF-8 bytes",
       "{{ ' a\\u3000'|trim }}|{{ 'é'|upper }}|{{ 'é'|length }} -> transformers: 'a|É|1'; "
       "MNN: 'a\\u3000|é|2'",
       f"{_J}:950"),
    _r("mnn-jinja-tojson-order",
       "tojson sorts mapping keys (type, function, name, description, parameters, properties, "
       "required, enum first, the rest alphabetically); transformers keeps their order; only "
       "indent= is read",
       "{{ {'b': 1, 'a': 2, 'type': 3}|tojson }} -> transformers: '{\"b\": 1, \"a\": 2, \"type\": 3}';"
       " MNN: '{\"type\": 3, \"a\": 2, \"b\": 1}'",
       f"{_J}:920"),
    _r("mnn-jinja-print-non-string",
       "printing a value that is not a string or integer gives JSON (true, null, [1,\"a\"]) where "
       "Python prints True, None, [1, 'a']; and/or yield a boolean, not the operand",
       "{{ true }}|{{ none }}|{{ [1,'a'] }}|{% set y = 'a' or 'b' %}{{ y }} -> transformers: "
       "\"True|None|[1, 'a']|a\"; MNN: 'true|null|[1,\"a\"]|true'",
       f"{_J}:1316"),
    _r("mnn-jinja-macro-default",
       "macro parameter defaults are ignored: an omitted argument is undefined",
       "{% macro f(a, b='B') %}{{ a }}{{ b }}{% endmacro %}{{ f('A') }} -> transformers: 'AB'; MNN: 'A'",
       f"{_J}:1529"),
    _r("mnn-jinja-unknown-function",
       "calling a name that is neither a macro of the template nor range, namespace or "
       "strftime_now (e.g. dict(), cycler(), joiner()) gives ''",
       "{{ dict(a=1) }} -> transformers: \"{'a': 1}\"; MNN: ''",
       f"{_J}:1297"),
    _r("mnn-jinja-large-range",
       "range() has no size limit: MNN builds the whole list (memory) where transformers' sandbox "
       "refuses ranges over 100000",
       "{{ range(3000000)|length }} -> transformers: OverflowError; MNN: '3000000'",
       f"{_J}:2106"),
    _r("mnn-jinja-string-subscript",
       "indexing or slicing a string gives '' (or, on a string literal, the literal unchanged); "
       "MNN only indexes lists and mappings",
       "{{ messages[0].content[1:] }} -> transformers: 'ys'; MNN: '[]' (content turned into parts)",
       f"{_J}:757"),
    _r("mnn-jinja-string-escape",
       "string literals know only the escapes \\n \\r \\t \\\\ \\\" \\' \\b \\f; any other "
       "(\\u, \\x, \\0 ...) keeps only the character after the backslash",
       "{{ '\\u00e9' }}|{{ 'a\\x41' }} -> transformers: 'é|aA'; MNN: 'u00e9|ax41'",
       f"{_J}:536"),
    _r("mnn-jinja-strftime-flag",
       "strftime_now formats with C++ std::put_time, which has no glibc flags (%-d, %_d, %^b ...)",
       "{{ strftime_now('%-d %B') }} -> transformers: '1 December'; MNN: '%-d December'",
       f"{_J}:2147"),
    _r("mnn-jinja-typed-content",
       "MNN renders the template with a probe message twice, content as a string and as "
       "[{type: text, text}]; when only the second shows the probe, it turns every string content "
       "into such parts",
       "{% for m in messages %}{% for p in m['content'] %}{{ p['text'] }}{% endfor %}{% endfor %} -> "
       "transformers: ''; MNN: 'SysHiYo'",
       f"{_J}:2185"),
    _r("mnn-jinja-lenient-parser",
       "MNN's parser never fails: a template transformers rejects as a syntax error renders on MNN, "
       "stray tokens skipped",
       "{{ 'a' }}{% endif %}b -> transformers: TemplateSyntaxError; MNN: 'ab'",
       f"{_J}:1513"),
    _r("mnn-jinja-whitespace",
       "MNN's lexer controls white space differently: lstrip_blocks strips spaces before {% "
       "even mid-line, comments get neither lstrip_blocks nor trim_blocks, {%+ is unknown",
       "{{ 'a' }}  {% if true %}b{% endif %} -> transformers: 'a  b'; MNN: 'ab'; "
       "'A\\n  {# c #}\\nB' -> 'A\\nB' vs 'A\\n  \\nB'",
       f"{_J}:372"),
)
