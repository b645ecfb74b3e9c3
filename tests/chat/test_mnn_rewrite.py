"""rewrite_for_mnn: the rewritten template, rendered by MNN's emulated engine, is transformers'
rendering of the original wherever its report lists no loss, never renders a case worse than the
original did on MNN, and still renders as the original under transformers."""

from __future__ import annotations

import functools
import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._support import CORPUS
from mtokspec.chat.mnn import render_mnn
from mtokspec.chat.lint import lint_chat_template
from mtokspec.chat.rewrite import (RAISED, device_raise, matches, mnn_prompt, rewrite_for_mnn,
                                   transformers_prompt)
from mtokspec.chat.render import render_chat_template

CHAT_DIR = CORPUS / "chat"
RULES_DATA = json.loads((Path(__file__).parent / "data" / "mnn_rules.json").read_text(encoding="utf-8"))
NOW = datetime(2024, 7, 26)


def _corpus_files() -> list:
    files = sorted(p for p in CHAT_DIR.glob("*.json") if not p.name.startswith("_")) if CHAT_DIR.is_dir() else []
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"reference corpus not found at {CHAT_DIR}"))]
    return [pytest.param(p, id=p.stem) for p in files]


@functools.lru_cache(maxsize=None)
def _rewritten(template: str, bos: str | None, eos: str | None):
    return rewrite_for_mnn(template, bos_token=bos, eos_token=eos)


def _expected(case: dict) -> str:
    """The corpus' transformers rendering in transformers_prompt's form."""
    if case["expected"] is not None:
        return case["expected"]
    err = case["error"]
    return "\0raise:" + err[len("TemplateError: "):] if err.startswith("TemplateError: ") else "\0error:" + err


@pytest.mark.parametrize("path", _corpus_files())
def test_dev_corpus_rewritten_renders_as_transformers(path):
    spec = json.loads(path.read_text(encoding="utf-8"))
    bos, eos = spec.get("bos_token"), spec.get("eos_token")
    now = datetime.fromisoformat(spec["strftime_now_frozen_to"])
    rw = _rewritten(spec["template"], bos, eos)
    for i, case in enumerate(spec["cases"]):
        want = _expected(case)
        msgs, agp = case["messages"], case["add_generation_prompt"]
        before = matches(want, mnn_prompt(spec["template"], msgs, agp, bos, eos, now))
        after = matches(want, mnn_prompt(rw.template, msgs, agp, bos, eos, now))
        assert after or not before, f"case {i}: the rewrite made it worse"
        assert after or rw.losses or want.startswith("\0error:"), f"case {i}: wrong on MNN and no loss reported"
        assert after, f"case {i}"  # measured: the rewrite reaches every dev case
        # transformers renders the rewritten template as the original
        assert transformers_prompt(rw.template, msgs, agp, bos, eos, now) == \
            transformers_prompt(spec["template"], msgs, agp, bos, eos, now), f"case {i}"


#: Rule templates the rewrite fully repairs (every recorded conversation renders as transformers).
REPAIRED = {"mnn-jinja-raise-noop", "mnn-jinja-missing-item-defined", "mnn-jinja-special-token-undefined",
            "mnn-jinja-undefined-concat", "mnn-jinja-literal-hang", "mnn-jinja-condexpr-no-else",
            "mnn-jinja-unsupported-test", "mnn-jinja-string-escape", "mnn-jinja-whitespace"}


@pytest.mark.parametrize("entry", RULES_DATA["templates"], ids=lambda t: t["rule"])
def test_rule_templates_rewrite(entry):
    rw = _rewritten(entry["template"], entry["bos_token"], entry["eos_token"])
    for name, msgs in RULES_DATA["conversations"].items():
        for agp in (True, False):
            want = transformers_prompt(entry["template"], msgs, agp, entry["bos_token"], entry["eos_token"], NOW)
            before = matches(want, mnn_prompt(entry["template"], msgs, agp, entry["bos_token"], entry["eos_token"], NOW))
            after = matches(want, mnn_prompt(rw.template, msgs, agp, entry["bos_token"], entry["eos_token"], NOW))
            assert after or not before, f"{name}/{agp}: worse after the rewrite"
            if entry["rule"] in REPAIRED and not entry["template"].startswith("{% for m in [] %}"):
                assert after, f"{name}/{agp}"


# --- generated conversations -----------------------------------------------------------------------

_TEXT = st.text(alphabet=st.sampled_from(list("ab Z\n\t'\"\\{}%#\u00e9\u4e16\U0001F600\u3000<|>")), max_size=10)
_CALL = st.fixed_dictionaries({"type": st.just("function"), "function": st.fixed_dictionaries(
    {"name": st.sampled_from(["f", "get_x"]),
     "arguments": st.dictionaries(st.sampled_from(["b", "a", "type"]), st.integers(0, 9) | _TEXT, max_size=2)})})
_MESSAGE = (st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant", "tool"]), "content": _TEXT})
            | st.fixed_dictionaries({"role": st.just("assistant"), "content": _TEXT,
                                     "tool_calls": st.lists(_CALL, min_size=1, max_size=2)}))
CONVERSATIONS = st.lists(_MESSAGE, min_size=1, max_size=5)

_HYPOTHESIS_TEMPLATES = ["llamacpp-google-gemma-2-2b-it", "llamacpp-meta-llama-Llama-3.3-70B-Instruct",
                         "llamacpp-test-ChatGLM4", "ortx-qwen2.5", "llamacpp-mistralai-Mistral-Nemo-Instruct-2407"]


_HYPOTHESIS_COLLECTED = ["openchat-openchat-3.5-0106", "meetkai-functionary-medium-v3.2", "mistralai-Mistral-Nemo-Instruct-2407"]


def _hypothesis_params() -> list:
    params = [pytest.param((t["template"], t["bos_token"], t["eos_token"], False), id=f"rules-{i}")
              for i, t in enumerate(RULES_DATA["templates"]) if t["rule"] in ("engine", "mnn-jinja-raise-noop")]
    for name in _HYPOTHESIS_TEMPLATES:
        p = CHAT_DIR / f"{name}.json"
        if p.is_file():
            spec = json.loads(p.read_text(encoding="utf-8"))
            params.append(pytest.param((spec["template"], spec.get("bos_token"), spec.get("eos_token"), True), id=name))
    collected = Path(__file__).parent / "data" / "collected"
    sources = json.loads((collected / "SOURCES.json").read_text(encoding="utf-8"))
    for name in _HYPOTHESIS_COLLECTED:
        src = sources[name]
        params.append(pytest.param(((collected / src["file"]).read_text(encoding="utf-8"), src["bos_token"],
                                    src["eos_token"], True), id=name))
    return params


@pytest.mark.parametrize("source", _hypothesis_params())
def test_generated_conversations(source):
    template, bos, eos, real = source
    rw = _rewritten(template, bos, eos)

    @settings(max_examples=25, deadline=None)
    @given(CONVERSATIONS, st.booleans())
    def check(messages, agp):
        want = transformers_prompt(template, messages, agp, bos, eos, NOW)
        before = matches(want, mnn_prompt(template, messages, agp, bos, eos, NOW))
        after = matches(want, mnn_prompt(rw.template, messages, agp, bos, eos, NOW))
        assert after or not before
        # the lint's rules cover real templates' constructs (the engine corners of the rule data
        # include a mapping iterated in MNN's sorted key order, which no rule names)
        assert after or rw.losses or want.startswith("\0error:") or not real
        assert transformers_prompt(rw.template, messages, agp, bos, eos, NOW) == want

    check()


# --- the rewrites, one by one ----------------------------------------------------------------------

def _both(template: str, messages=(), agp: bool = True, **kw) -> tuple[str, str]:
    """(transformers of the original, MNN of the rewrite)."""
    rw = rewrite_for_mnn(template, **kw)
    return (render_chat_template(template, list(messages), add_generation_prompt=agp, strftime_now=NOW, **kw),
            render_mnn(rw.template, list(messages), add_generation_prompt=agp, strftime_now=NOW, **kw))


MSGS = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}, {"role": "assistant", "content": "A"}]


@pytest.mark.parametrize("template", [
    "{% for m in messages %}{{ loop.revindex }}{{ loop.revindex0 }}{% endfor %}",
    "{% for m in messages %}{{ loop.index0 % 2 }}{{ loop.index // 2 }}{{ loop.index * 3 }}{% endfor %}|{{ 7 % 3 }}{{ 2 ** 5 }}",
    "{% for m in messages %}{% if m['tool_calls'] is defined %}T{% else %}N{% endif %}{% endfor %}",
    "{{ x|default('D') }}{{ messages|first|tojson }}{{ messages|last|tojson }}{{ messages|count }}",
    "{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby(3) }}{{ x is mapping }}{{ {} is iterable }}",
    "{{ messages[0].get('role') }}{{ messages[0].get('x', 'D') }}{% for k, v in messages[0].items() %}{{ k }}{% endfor %}",
    "{{ 'x' if false }}|{{ 'a' or 'b' }}|{{ '' or 'b' }}|{{ 'a' and 'b' }}|{{ true }}|{{ none }}|{{ [1, 'a'] }}",
    "{{ {'b': 1, 'a': {'d': [1, 'x'], 'c': none}, 'type': true}|tojson }}",
    "{{ '\\u00e9\\x41' }}|{{ dict(a=1, b='c') }}",
    "{% macro f(a, b='B') %}{{ a }}{{ b }}{% endmacro %}{{ f('A') }}|{{ f('A', 'C') }}",
    "{% for m in [] %}x{% else %}empty{% endfor %}",
    "A\n  {# c #}\nB {{ 'x' }}  {% if true %}\n  y{% endif %}\n{{ '{{' }}{ {%raw%}{%{% endraw %}\n",
    "{{ tools is none }}{{ tools is defined }}{{ documents is none }}{{ add_generation_prompt is defined }}",
    "{% for m in messages %}{{ m.role ~ m.name }}|{% endfor %}",
    "{% for k in {'b': 1, 'a': 2} %}{{ k }}{% endfor %}",
    "{% for m in messages %}{% if loop.index0 == 1 %}{% break %}{% endif %}{{ m.role }}{% endfor %}",
    "{% for m in messages %}{% for c in ['a', 'b'] %}{% if m.role == 'user' %}{% continue %}{% endif %}{{ c }}{% endfor %}"
    "{% if m.role == 'system' %}{% continue %}{% else %}<{% endif %}{{ m.role }}>{% endfor %}",
    "{% set u = messages|selectattr('role', 'equalto', 'user')|list %}{{ u|length }}{{ u[0].content }}|"
    "{{ messages|rejectattr('role', 'in', ['system'])|list|length }}|{{ messages|selectattr('role')|list|length }}",
    "{{ messages[0]|tojson(indent=2) }}|{{ {'b': [], 'a': {}, 'c': [1, {'x': none}]}|tojson(indent=0) }}",
    "{% for m in messages %}{% set x %}<{{ m.role }}>{% endset %}{{ x }}{% if not loop.first %}{{ loop.previtem.role }}"
    "{% endif %}{% if loop.nextitem is defined %}{{ loop.nextitem['role'] }}{% endif %};{% endfor %}",
    # str.title() and |title by words; |safe's Markup escapes what '+' joins to it
    "{% for m in messages %}{{ m['role'].title() }}|{{ (m.role ~ ' x-y_z it\\'s a1b')|title }}|"
    "{{ (m.role ~ ' x-y_z it\\'s a1b').title() }};{% endfor %}",
    "{% for m in messages %}{{ 'a'|safe + m.content + '<\"&\\'>' }}{{ '<'|safe + ('x' ~ '<') }}"
    "{{ ('<'|safe + m.role)|trim + '>' }}{{ 'q' + '&'|safe }}{{ '<'|e + '<' }}{% endfor %}",
    # macro defaults passed by every call (MNN binds none; namespace is MNN's function there)
    "{% macro f(x, namespace='N', range=2) %}{{ x }}{{ namespace }}{{ range }}{% endmacro %}{{ f('a') }}"
    "{{ f('b', range=3) }}{% set v = 'V' %}{% macro g(v='D') %}{{ v }}{% endmacro %}{{ g() }}{{ g('E') }}",
    "{{ none|trim }}|{{ x|upper }}|{{ messages[0].nothing|lower }}|{{ 3|capitalize }}|{{ messages[0]|trim }}",
    "{{ messages|tojson(ensure_ascii=False) }}|{{ messages[0]|tojson(indent=2, ensure_ascii=False) }}",
    # MNN's == holds for any two mappings of one size (Mistral's message == user_messages[-1])
    "{% set a = messages[0] %}{% for m in messages %}{{ m == a }}{{ m != messages[-1] }}"
    "{% if m == messages[1] %}U{% endif %}|{% endfor %}",
])
def test_rewrite_renders_as_transformers(template):
    hf, mnn = _both(template, MSGS)
    assert mnn == hf


def test_string_filters_of_a_none_content():
    """A tool-call message's content is None: transformers' trim gives 'None', MNN's passes null."""
    msgs = [{"role": "user", "content": "q"}, {"role": "assistant", "content": None}]
    hf, mnn = _both("{% for m in messages %}{{ '<' + m['role'] + '>' + m['content']|trim + '|' }}{% endfor %}", msgs)
    assert mnn == hf == "<user>q|<assistant>None|"


def test_title_on_mnn_is_python_title_for_ascii_words():
    rw = rewrite_for_mnn("{{ messages[0].content.title() }}|{{ messages[0].content|title }}")
    text = "hello wOrld-x y_z 1a a1b it's (paren [b {c <d"
    assert render_mnn(rw.template, [{"role": "user", "content": text}]) == text.title() + "|" + \
        render_chat_template("{{ t|title }}", [], t=text)


def test_raise_exception_stops_the_prompt():
    tpl = "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system role') }}{% endif %}{{ m.content }}{% endfor %}"
    rw = rewrite_for_mnn(tpl)
    assert render_mnn(rw.template, MSGS) == RAISED + "no system role"
    assert render_mnn(rw.template, MSGS[1:]) == "UA"
    with pytest.raises(Exception, match="no system role"):
        render_chat_template(rw.template, MSGS)
    # the contract: device_raise tells the marker from a prompt that merely starts with its words
    def on_mnn(msgs):
        return lambda t: render_mnn(t, msgs)
    assert device_raise(rw.template, RAISED + "no system role", on_mnn(MSGS)) == "no system role"
    spoof = [{"role": "user", "content": RAISED + "x"}]
    assert render_mnn(rw.template, spoof) == RAISED + "x"
    assert device_raise(rw.template, RAISED + "x", on_mnn(spoof)) is None
    assert device_raise(tpl, RAISED + "no system role", on_mnn(MSGS)) is None  # not a rewritten template
    # the lint: a warning on the original, the contract (info) on the rewrite, which has no other loss
    assert [(f.code, f.severity) for f in lint_chat_template(tpl)] == [("mnn-jinja-raise-noop", "warning")]
    assert [(loss.code, loss.severity) for loss in rw.losses] == [("mnn-jinja-raise-noop", "info")]
    assert "'no system role'" in rw.losses[0].message and RAISED in rw.losses[0].message


def test_bos_token_left_undefined_by_mnn():
    hf, mnn = _both("{{ bos_token + 'X' }}", bos_token="")
    assert mnn == hf == "X"


def test_strftime_glibc_flags():
    tpl = "{{ strftime_now('%-d %B %Y') }}|{{ strftime_now('%-m/%d') }}"
    rw = rewrite_for_mnn(tpl)
    assert render_mnn(rw.template, [], strftime_now=datetime(2024, 7, 6)) == "6 July 2024|7/06"


def test_losses_name_the_rules_and_unpack():
    template, losses = rewrite_for_mnn("{% for m in messages %}{% with x = 1 %}{{ x }}{% endwith %}"
                                       "{{ m.content[1:] }}{% endfor %}")
    codes = {loss.code for loss in losses}
    assert {"mnn-jinja-unsupported-statement", "mnn-jinja-string-subscript"} <= codes
    assert template.startswith("{% for m in messages %}{% with")


def test_unparsable_template_is_kept():
    rw = rewrite_for_mnn("{{ 'a' }}{% endif %}")
    assert rw.template == "{{ 'a' }}{% endif %}" and not rw.applied
    assert [loss.code for loss in rw.losses] == ["mnn-jinja-lenient-parser"]
