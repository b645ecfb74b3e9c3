"""The macros the rewrite's printer adds to a template (``tojson``, ``repr``, escaping, deep
``==``, title case, each as both engines render it), and the signatures of the template's own macros."""

from __future__ import annotations

import jinja2.nodes as nodes

from mtokspec.chat.rewrite.analysis import EQ, ESCAPE, REPR, TITLE, TOJSON, TOJSON_IND, str_lit
from mtokspec.chat.rewrite.names import ON_HF


def _constant(e: nodes.Expr) -> bool:
    if isinstance(e, nodes.Const):
        return True
    if isinstance(e, (nodes.List, nodes.Tuple)):
        return all(_constant(i) for i in e.items)
    if isinstance(e, nodes.Dict):
        return all(_constant(i.key) and _constant(i.value) for i in e.items)
    return False


def macro_signatures(ast: nodes.Template) -> dict[str, tuple[list[str], dict[str, nodes.Expr]] | None]:
    """Per macro name: its parameters and constant defaults (``None`` where a call cannot be
    completed from the definition: the name defined twice, a default that is not a constant)."""
    out: dict[str, tuple[list[str], dict[str, nodes.Expr]] | None] = {}
    for m in ast.find_all(nodes.Macro):
        names = [a.name for a in m.args]
        if m.name in out or not all(_constant(d) for d in m.defaults):
            out[m.name] = None
            continue
        out[m.name] = (names, dict(zip(names[len(names) - len(m.defaults):], m.defaults)))
    return out


TOJSON_MACRO = (
    "{% macro " + TOJSON + "(v) %}{% if v is string %}{{ v|tojson }}{% elif v is mapping %}{{ '{' }}"
    "{% for k, x in v|items %}{% if not loop.first %}{{ ', ' }}{% endif %}{{ k|tojson }}{{ ': ' }}{{ "
    + TOJSON + "(x) }}{% endfor %}{{ '}' }}{% elif v is sequence %}{{ '[' }}{% for x in v %}"
    "{% if not loop.first %}{{ ', ' }}{% endif %}{{ " + TOJSON + "(x) }}{% endfor %}{{ ']' }}"
    "{% else %}{{ v|tojson }}{% endif %}{% endmacro %}")


REPR_MACRO = (
    "{% macro " + REPR + "(v) %}{% if v is string %}{% set r = [v]|string %}{{ r.strip('[]') }}"
    "{% elif v is mapping %}{{ '{' }}{% for k, x in v|items %}{% if not loop.first %}{{ ', ' }}{% endif %}"
    "{{ " + REPR + "(k) }}{{ ': ' }}{{ " + REPR + "(x) }}{% endfor %}{{ '}' }}{% elif v is sequence %}{{ '[' }}"
    "{% for x in v %}{% if not loop.first %}{{ ', ' }}{% endif %}{{ " + REPR + "(x) }}{% endfor %}{{ ']' }}"
    "{% else %}{{ v|string }}{% endif %}{% endmacro %}")
TOJSON_IND_MACRO = (
    "{% macro " + TOJSON_IND + "(v, pad, cur) %}{% if v is string %}{{ v|tojson }}{% elif v is mapping %}"
    "{% if v|length == 0 %}{{ '{}' }}{% else %}{{ '{' }}{% for k, x in v|items %}{% if not loop.first %}{{ ',' }}"
    "{% endif %}{{ '\\n' ~ cur ~ pad }}{{ k|tojson }}{{ ': ' }}{{ " + TOJSON_IND + "(x, pad, cur ~ pad) }}{% endfor %}"
    "{{ '\\n' ~ cur ~ '}' }}{% endif %}{% elif v is sequence %}{% if v|length == 0 %}{{ '[]' }}{% else %}{{ '[' }}"
    "{% for x in v %}{% if not loop.first %}{{ ',' }}{% endif %}{{ '\\n' ~ cur ~ pad }}{{ " + TOJSON_IND
    + "(x, pad, cur ~ pad) }}{% endfor %}{{ '\\n' ~ cur ~ ']' }}{% endif %}{% else %}{{ v|tojson }}{% endif %}"
    "{% endmacro %}")


ESCAPE_MACRO = (
    "{% macro " + ESCAPE + "(s) %}{% set t = s + '' %}{{ t.replace('&', '&amp;').replace('<', '&lt;')"
    ".replace('>', '&gt;').replace('\"', '&#34;').replace(\"'\", '&#39;') }}{% endmacro %}")


EQ_MACRO = (
    "{% macro " + EQ + "(a, b) %}{% if a is mapping and b is mapping %}{% if a|length == b|length %}"
    "{% set ns = namespace(ok=true) %}{% for k, v in a|items %}{% if ns.ok and not (k in b and " + EQ
    + "(v, b[k]) == 'T') %}{% set ns.ok = false %}{% endif %}{% endfor %}{{ 'T' if ns.ok else '' }}{% endif %}"
    "{% elif a is mapping or b is mapping %}{% elif a is string or b is string %}{{ 'T' if a == b else '' }}"
    "{% elif a is sequence and b is sequence %}{% if a|length == b|length %}{% set ns = namespace(ok=true) %}"
    "{% for v in a %}{% if ns.ok and not (" + EQ + "(v, b[loop.index0]) == 'T') %}{% set ns.ok = false %}"
    "{% endif %}{% endfor %}{{ 'T' if ns.ok else '' }}{% endif %}{% elif a == b %}{{ 'T' }}{% endif %}"
    "{% endmacro %}")


def _title_macro(kind: str, seps: list[str]) -> str:
    """``name(v, s)``: on transformers ``v.title()`` (``v|title``); on MNN title case by words of the
    string ``s`` (``v`` itself when ``s`` is none): split on the first separator found (recursively),
    capitalize the words."""
    name = TITLE + "_" + kind
    hf = "v.title()" if kind == "method" else "v|title"
    return ("{% macro " + name + "(v, s) %}{% if " + ON_HF + " %}{{ " + hf + " }}{% else %}"
            "{% if s is none %}{% set s = v %}{% endif %}{% set ns = namespace(sep='') %}{% for c in ["
            + ", ".join(str_lit(c) for c in seps) + "] %}{% if not ns.sep and c in s %}{% set ns.sep = c %}"
            "{% endif %}{% endfor %}{% if ns.sep %}{% for w in s.split(ns.sep) %}{% if not loop.first %}"
            "{{ ns.sep }}{% endif %}{{ " + name + "(w, w) }}{% endfor %}{% else %}{{ s|capitalize }}{% endif %}"
            "{% endif %}{% endmacro %}")


#: str.title() starts a word after any character that is not a letter; jinja's |title after - ( { [ <
#: and white space.  (MNN's capitalize changes ASCII letters only: the ascii-string-ops loss.)
TITLE_MACROS = {
    "method": _title_macro("method", [chr(c) for c in range(1, 128) if not chr(c).isalpha()]),
    "filter": _title_macro("filter", ["-", " ", "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x1f",
                                      "(", "{", "[", "<"]),
}
