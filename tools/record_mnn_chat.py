"""Record MNN's renderings of the chat-rule templates for the emulation's tests.

    MNN_TOK_BIN=/path/mnn_tok python -m tools.record_mnn_chat > tests/chat/data/mnn_rules.json

Each template below exercises one rule of ``mtokspec/divergences/rules/chat_template.py`` (at least one
per rule) or one corner of MNN's engine; each is rendered by MNN's own code (``mnn_tok chat``, a
copy of the corpus' phi-3-mini ``.mtok`` carrying the template) for every conversation of
:data:`CONVERSATIONS` with and without the generation prompt, under a 2 GiB address-space limit
and a time limit (a render that exceeds them is recorded as an error).  The tests compare
:func:`mtokspec.chat.mnn.render_mnn` with these recordings; they do not need ``mnn_tok``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT.parent / "shared" / "corpus" / "tok" / "phi-3-mini" / "mnn.mtok"

CONVERSATIONS = {
    "plain": [{"role": "system", "content": "Sys"}, {"role": "user", "content": "Hi"},
              {"role": "assistant", "content": "Yo"}],
    "tools": [{"role": "user", "content": "h\u00e9llo \u4e16\u754c \U0001F600 \u3000"},
              {"role": "assistant", "content": "",
               "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"b": 1, "a": "x"}}}]},
              {"role": "tool", "name": "f", "content": "42"},
              {"role": "user", "content": "  Upper \u00c9 caf\u00e9 \"q\" 'a' \\ \n"}],
    "empty": [{"role": "user", "content": ""}],
}

#: (rule, template, bos_token, eos_token)
TEMPLATES: list[tuple[str, str, str, str]] = [
    ("mnn-jinja-raise-noop",
     "{% if messages[0]['role'] == 'system' %}{{ raise_exception('bad') }}{% endif %}after", "", ""),
    ("mnn-jinja-missing-item-defined",
     "{% for m in messages %}{% if m['tool_calls'] is defined %}T{% else %}N{% endif %}"
     "{{ m['name'] }}|{{ m.name is defined }}{% endfor %}", "", ""),
    ("mnn-jinja-special-token-undefined", "{{ bos_token + 'X' }}|{{ pad_token }}|{{ eos_token }}|{{ bos_token ~ 'Y' }}",
     "", "</s>"),
    ("mnn-jinja-special-token-undefined", "{{ bos_token + 'X' }}|{{ eos_token is defined }}", "<s>", ""),
    ("mnn-jinja-undefined-concat", "{% for m in messages %}{{ m.role ~ m.name }}|{% endfor %}{{ x|string }}", "", ""),
    ("mnn-jinja-context-undefined",
     "{{ tools is none }}|{{ tools is defined }}|{{ tools|length }}|{{ add_generation_prompt }}|"
     "{{ add_generation_prompt is defined }}|{{ documents }}|{% if tools %}T{% endif %}", "", ""),
    ("mnn-jinja-unparsed-operator",
     "{{ 7 % 3 }}|{{ 2 * 3 }}|{{ 7 // 2 }}|{{ 2 ** 3 }}|{{ 1.5 }}|{{ 8 / 2 }}|"
     "{% for m in messages %}{% if loop.index0 % 2 == 0 %}E{% else %}O{% endif %}{% endfor %}", "", ""),
    ("mnn-jinja-literal-hang", "{{ [1 * 2] }}", "", ""),
    ("mnn-jinja-literal-hang", "{% for a, b in [(1, 2)] %}{{ a }}{% endfor %}", "", ""),
    ("mnn-jinja-literal-hang", "{{ {'a': 1}}}", "", ""),
    ("mnn-jinja-literal-hang", "{{ [1, 2] }}|{{ {'a': [1, {'b': 2}]} }}|{{ [] }}|{{ {} }}", "", ""),
    ("mnn-jinja-condexpr-no-else", "{{ 'x' if false }}|{{ 'y' if true }}|{{ 'a' if messages else 'b' }}", "", ""),
    ("mnn-jinja-loop-attribute",
     "{% for m in messages %}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.index }}{{ loop.index0 }}"
     "{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}|{% endfor %}", "", ""),
    ("mnn-jinja-unsupported-statement",
     "{% for m in messages %}{% if loop.index0 == 1 %}{% break %}{% endif %}{{ m.role }}{% endfor %}", "", ""),
    ("mnn-jinja-unsupported-statement", "{% set x %}blk{% endset %}[{{ x }}]", "", ""),
    ("mnn-jinja-unsupported-statement", "{% for m in [] %}a{% else %}empty{% endfor %}|{%+ if false %}no{% endif %}", "", ""),
    ("mnn-jinja-unsupported-statement", "{% set a, b = 1, 2 %}{{ a }}{{ b }}|{% with x = 1 %}{{ x }}{% endwith %}", "", ""),
    ("mnn-jinja-unsupported-filter",
     "{{ messages|first }}|{{ x|default('D') }}|{{ messages|map(attribute='role')|join(',') }}|{{ 'ab cd'|title }}|"
     "{{ messages|selectattr('role', 'equalto', 'user')|list|length }}|{{ messages|last }}", "", ""),
    ("mnn-jinja-unsupported-test",
     "{{ 3 is odd }}|{{ {} is iterable }}|{{ x is mapping }}|{{ 'a' is string }}|{{ 4 is divisibleby(2) }}|"
     "{{ messages is sequence }}|{{ none is none }}|{{ 1 is number }}|{{ true is boolean }}", "", ""),
    ("mnn-jinja-unsupported-method",
     "{{ messages[0].get('role') }}|{{ messages[0].get('x', 'D') }}|{{ 'Ab'.upper() }}|"
     "{{ messages[0].content.upper() }}|{{ messages[0].items() }}|{{ messages[0].content.startswith('H') }}", "", ""),
    ("mnn-jinja-method-arguments",
     "{% set s = 'a  b c' %}{{ s.split()|join(',') }}|{{ s.split(' ', 1)|join(',') }}|{{ s.replace(' ', '_', 1) }}|"
     "{{ '--x--'.strip('-') }}|{{ s.lstrip('a') }}|{{ s.rstrip() }}|{{ 'abc'.endswith('bc') }}", "", ""),
    ("mnn-jinja-ascii-string-ops",
     "{{ ' a\u3000'|trim }}|{{ '\u00e9'|upper }}|{{ '\u00e9'|length }}|{% for m in messages %}{{ m.content|upper }}/"
     "{{ m.content|lower }}/{{ m.content|capitalize }}/{{ m.content|trim }}/{{ m.content|length }};{% endfor %}", "", ""),
    ("mnn-jinja-tojson-order",
     "{{ {'b': 1, 'a': 2, 'type': 3}|tojson }}|{{ messages|tojson }}|{{ messages[0]|tojson(indent=2) }}|"
     "{{ 'q\"\\\\'|tojson }}|{{ none|tojson }}", "", ""),
    ("mnn-jinja-print-non-string",
     "{{ true }}|{{ none }}|{{ [1,'a'] }}|{% set y = 'a' or 'b' %}{{ y }}|{{ messages[0] }}|{{ messages|length }}|"
     "{{ messages[0]|string }}|{{ [1, none, true]|join(',') }}|{{ -3 }}|{{ 1 + 2 }}|{{ 5 - 7 }}", "", ""),
    ("mnn-jinja-macro-default",
     "{% macro f(a, b='B') %}{{ a }}{{ b }}{% endmacro %}{{ f('A') }}|{{ f('A', 'C') }}|{{ f(b='X', a='Y') }}|{{ g() }}",
     "", ""),
    ("mnn-jinja-unknown-function", "{{ dict(a=1) }}|{{ cycler('a') }}|{{ lipsum(1) }}|{{ range(3) }}|{{ range }}", "", ""),
    ("mnn-jinja-large-range", "{{ range(300000)|length }}|{{ range(1, 10, 3)|join(',') }}|{{ range(5, 0, -2)|join(',') }}",
     "", ""),
    ("mnn-jinja-string-subscript",
     "{{ messages[0].content[1:] }}|{{ messages[0].content[0] }}|{{ 'abc'[1] }}|{{ 'abc'[1:] }}|"
     "{{ messages[-1].role }}|{{ messages[1:]|length }}|{{ messages[::-1][0].role }}|{{ messages[5] }}", "", ""),
    ("mnn-jinja-string-escape", "{{ '\\u00e9' }}|{{ 'a\\x41' }}|{{ 'tab\\tq\\'' }}|{{ \"d\\\"q\" }}|{{ 'n\\nl' }}",
     "", ""),
    ("mnn-jinja-strftime-flag", "{{ strftime_now('%-d %B') }}|{{ strftime_now('%d %b %Y') }}|{{ strftime_now() }}|"
     "{{ strftime_now('%A %j %%') }}", "", ""),
    ("mnn-jinja-typed-content",
     "{% for m in messages %}{% for p in m['content'] %}{{ p['text'] }}{% endfor %}{% endfor %}", "", ""),
    ("mnn-jinja-typed-content",
     "{% for m in messages %}{% if m.content is string %}S:{{ m.content }}{% else %}{% for p in m.content %}"
     "P:{{ p.text }}{% endfor %}{% endif %};{% endfor %}", "", ""),
    ("mnn-jinja-lenient-parser", "{{ 'a' }}{% endif %}b", "", ""),
    ("mnn-jinja-lenient-parser", "{{ 'a' + }}x{% if %}y{% endif %}{% for %}z{% endfor %}{{ )( }}w", "", ""),
    ("mnn-jinja-whitespace", "{{ 'a' }}  {% if true %}b{% endif %}", "", ""),
    ("mnn-jinja-whitespace", "A\n  {# c #}\nB\n  {#- d -#}  \nC", "", ""),
    ("mnn-jinja-whitespace", "  {%- if true -%}  x  {%- endif -%}  \n{{- ' y ' -}}\n z\n{% if true %}\n  w\n{% endif %}\n",
     "", ""),
    ("engine", "{% set ns = namespace(c=0, s='') %}{% for m in messages %}{% set ns.c = ns.c + 1 %}"
               "{% set ns.s = ns.s ~ m.role[:1] %}{% set local = 1 %}{% endfor %}{{ ns.c }}|{{ ns.s }}|{{ local }}|{{ ns }}",
     "", ""),
    ("engine", "{% for k, v in {'b': 1, 'a': 2}|items %}{{ k }}={{ v }};{% endfor %}|{% for k in {'b': 1, 'a': 2} %}{{ k }}"
               "{% endfor %}|{% for m in messages if m.role != 'system' %}{{ loop.index }}{{ m.role }}{% endfor %}", "", ""),
    ("engine", "{{ 1 == 1 }}|{{ 'a' < 'b' }}|{{ 1 == true }}|{{ {'a': 1} == {'b': 2} }}|{{ 'a' in 'cat' }}|"
               "{{ 'x' not in ['x'] }}|{{ 'role' in messages[0] }}|{{ none == none }}|{{ x == y }}|{{ 2 > 1 and 1 }}|"
               "{{ not messages }}|{{ - 'a' }}|{{ + [1] }}|{{ [1] + 2 }}", "", ""),
    ("engine", "{% if messages[0].role == 'system' %}{% set sys = messages[0].content %}{% set rest = messages[1:] %}"
               "{% else %}{% set sys = '' %}{% set rest = messages %}{% endif %}<{{ sys }}>{% for m in rest %}"
               "{% if m.role == 'user' %}U:{{ m.content }}{% elif m.role == 'assistant' %}A:{{ m.content }}{% else %}"
               "?{{ m.role }}{% endif %}{% endfor %}{% if add_generation_prompt %}GEN{% endif %}{{ eos_token }}",
     "", "<eos>"),
    ("engine", "{% macro show(m) %}[{{ m.role }}{% if m.tool_calls %}:{{ m.tool_calls[0].function.name }}"
               "({{ m.tool_calls[0].function.arguments|tojson }}){% endif %}]{% endmacro %}"
               "{% for m in messages %}{{ show(m) }}{{ show(m=m)|length }}{% endfor %}", "", ""),
    ("engine", "{% set x = 'str' %}{% set x.a = 1 %}{{ x }}|{% set u.k = 2 %}{{ u.k }}|{{ u is defined }}|"
               "{% set n = none %}{% set n.k = 1 %}{{ n }}", "", ""),
    ("mnn-jinja-for-string", "{% for c in 'xy' %}{{ c }}{% endfor %}|{% for c in messages[0].role ~ '!' %}{{ c }}{% endfor %}",
     "", ""),
    ("mnn-jinja-for-mapping-sorted", "{% for k in {'b': 1, 'a': 2, 'B': 3} %}{{ k }}{% endfor %}", "", ""),
]


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def main() -> None:
    sys.path.insert(0, str(ROOT))
    import mtokspec

    binary = os.environ.get("MNN_TOK_BIN", "mnn_tok")
    tree = mtokspec.parse(BASE.read_bytes())
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chat.mtok"
        for rule, template, bos, eos in TEMPLATES:
            tree.chat_template, tree.bos_token, tree.eos_token = template, bos, eos
            path.write_bytes(mtokspec.build(tree))
            results = {}
            for name, messages in CONVERSATIONS.items():
                for agp in (True, False):
                    line = json.dumps({"messages": messages, "add_generation_prompt": agp}, ensure_ascii=True) + "\n"
                    try:
                        p = subprocess.run([binary, "chat", str(path)], input=line.encode(), stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, timeout=5, preexec_fn=_limited)
                        got = [json.loads(x) for x in p.stdout.decode("utf-8", "surrogateescape").splitlines()
                               if x.strip()]
                        row = {"error": f"exit {p.returncode}"} if p.returncode != 0 and not got else got[0]
                    except subprocess.TimeoutExpired:
                        row = {"error": "timeout 5 s"}
                    results[f"{name}/{'gen' if agp else 'nogen'}"] = row
            out.append({"rule": rule, "template": template, "bos_token": bos, "eos_token": eos, "mnn": results})
    json.dump({"mnn_tok": "MNN's jinja.hpp through mnn_tok chat (../shared/tools/mnn-reference)",
               "recorded_on": dt.date.today().isoformat(), "conversations": CONVERSATIONS,
               "templates": out}, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
