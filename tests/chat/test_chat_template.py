"""Tests for mtokspec.chat.render: corpus fidelity, sandbox escapes, ordinary behaviour."""

from __future__ import annotations

import json
import time
import tracemalloc
from datetime import datetime
from pathlib import Path

import jinja2
import jinja2.ext
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jinja2.sandbox import ImmutableSandboxedEnvironment

from mtokspec.chat.render import ChatTemplateError, render_chat_template
from tests._support import CORPUS

CHAT_DIR = CORPUS / "chat"
MISSING = f"reference corpus not found at {CHAT_DIR} (../shared/corpus is optional)"

# keys of a corpus case that are metadata, not template variables
CASE_META = {"conversation", "expected", "error", "messages", "add_generation_prompt"}


def _chat_files() -> list[Path]:
    if not CHAT_DIR.is_dir():
        return []
    return sorted(p for p in CHAT_DIR.glob("*.json") if p.name != "_conversations.json")


def _corpus_params():
    files = _chat_files()
    if not files:
        return [pytest.param(None, None, id="corpus-missing", marks=pytest.mark.skip(reason=MISSING))]
    params = []
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        for i, case in enumerate(data["cases"]):
            kind = "error" if case.get("error") else "render"
            params.append(pytest.param(path, i, id=f"{path.stem}[{i}-{case.get('conversation', '')}-{kind}]"))
    return params


def _render_args(data: dict, case: dict) -> dict:
    kwargs = dict(data.get("template_kwargs") or {})
    # template_kwargs already carries bos/eos when the tokenizer has them; the file-level
    # values are the same (None = the tokenizer has no such token, so the variable is undefined)
    bos = kwargs.pop("bos_token", data.get("bos_token"))
    eos = kwargs.pop("eos_token", data.get("eos_token"))
    kwargs.update({k: v for k, v in case.items() if k not in CASE_META})  # tools, documents, ...
    return dict(
        add_generation_prompt=case["add_generation_prompt"],
        bos_token=bos,
        eos_token=eos,
        strftime_now=data.get("strftime_now_frozen_to"),
        **kwargs,
    )


@pytest.mark.parametrize("path,index", _corpus_params())
def test_corpus_case(path: Path, index: int) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    case = data["cases"][index]
    args = _render_args(data, case)
    if case.get("error"):
        with pytest.raises(ChatTemplateError) as info:
            render_chat_template(data["template"], case["messages"], **args)
        prefix = "TemplateError: "
        if case["error"].startswith(prefix):  # raise_exception(...) message must be kept
            assert case["error"][len(prefix):] in str(info.value)
    else:
        assert render_chat_template(data["template"], case["messages"], **args) == case["expected"]


# --- differential test against an upstream-configured jinja sandbox --------------------------


def _reference_render(template: str, messages: list, **kw) -> str:
    """transformers' configuration, built independently of the module under test."""

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    frozen = datetime(2024, 7, 26)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: frozen.strftime(fmt)
    kw.setdefault("tools", None)
    kw.setdefault("documents", None)
    kw.setdefault("add_generation_prompt", False)
    return env.from_string(template).render(messages=messages, **kw)


_content = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40
)


@pytest.mark.parametrize(
    "path", _chat_files() or [pytest.param(None, marks=pytest.mark.skip(reason=MISSING))],
    ids=lambda p: p.stem if p else "corpus-missing",
)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contents=st.lists(_content, min_size=4, max_size=4), agp=st.booleans())
def test_corpus_templates_match_plain_sandbox(path: Path, contents: list, agp: bool) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    roles = ["user", "assistant", "user", "assistant"]
    messages = [{"role": r, "content": c} for r, c in zip(roles, contents)]
    kw = {k: v for k, v in (data.get("template_kwargs") or {}).items()}
    try:
        expected = _reference_render(data["template"], messages, add_generation_prompt=agp, **kw)
    except Exception:
        with pytest.raises(ChatTemplateError):
            render_chat_template(data["template"], messages, add_generation_prompt=agp,
                                 strftime_now="2024-07-26T00:00:00", **kw)
        return
    got = render_chat_template(data["template"], messages, add_generation_prompt=agp,
                               strftime_now="2024-07-26T00:00:00", **kw)
    assert got == expected


# --- sandbox escapes and resource exhaustion -------------------------------------------------

PAYLOADS = [
    "{{ ''.__class__.__mro__ }}",
    "{{ ''.__class__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ [].__class__.__base__.__subclasses__() }}",
    "{{ cycler.__init__.__globals__ }}",
    "{{ joiner.__init__.__globals__.os }}",
    "{{ namespace.__init__.__globals__ }}",
    "{{ lipsum.__globals__ }}",
    "{{ lipsum.__globals__['os'].popen('id').read() }}",
    "{{ self._TemplateReference__context }}",
    "{{ self.__init__.__globals__ }}",
    "{{ raise_exception.__globals__ }}",
    "{{ messages.__class__ }}",
    "{{ messages['__class__'] }}",
    "{{ messages|attr('__class__') }}",
    "{{ messages.append(1) }}",
    "{{ messages[0].update({'role': 'x'}) }}",
    '{{ "{0.__class__}".format(messages) }}',
    '{{ "{0.__class__.__mro__}".format_map({"0": messages}) }}',
    "{{ __import__('os').system('id') }}",
    "{{ __builtins__ }}",
    "{{ config }}",
    "{{ config.items() }}",
    "{{ request.application }}",
    "{{ range(10**12)|list }}",
    "{{ range(100001)|list }}",
    "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
    "{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}",
    "{% for i in range(10**7) %}{% for j in range(10**7) %}x{% endfor %}{% endfor %}",
    "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    '{{ "x" * 10**9 }}',
    '{{ "x" * 1000000000 }}',
    "{{ [0] * 10**9 }}",
    "{{ (2**1000) ** (2**1000) }}",
    "{% set ns = namespace(x=3) %}{% for i in range(40) %}{% set ns.x = ns.x * ns.x %}{% endfor %}",
    "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
    "{% set ns = namespace(l=['x']) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}"
    "{{ ns.l }}",
    "{% set ns = namespace(l=['x']) %}{% for i in range(60) %}"
    "{% set ns.l = [none, none]|map('default', ns.l, true)|list %}{% endfor %}{{ ns.l }}",
    "{{ 'x'|center(10**9) }}",
    "{{ 'x'.ljust(10**9) }}",
    "{{ 'x'.zfill(10**9) }}",
    "{{ 'ab'|indent(10**9) }}",
    "{{ '{:>1000000000}'.format(1) }}",
    "{{ '{:>{}}'.format(1, 10**9) }}",
    "{{ '%1000000000d' % 1 }}",
    "{{ '%*d' % (10**9, 1) }}",
    "{{ '%.1000000000f'|format(1.0) }}",
    "{{ ('x' * 100000).replace('x', 'y' * 100) }}",
    "{{ range(100000)|map('string')|join('x' * 100000) }}",
    "{{ [1, 2]|batch(10**9, 'x')|list }}",
    "{{ range(10)|slice(10**9)|list }}",
    "{{ messages|tojson(indent=10**9) }}",
    "{{ lipsum(10**9) }}",
    "{{ {}.fromkeys(range(100000), 'x' * 1000)|string }}",
    "{% include 'anything' %}",
    "{% extends 'base' %}",
    "{% import 'macros' as m %}",
    "{{ raise_exception('refused') }}",
    "{% if %}",
]


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_payload_refused(payload: str) -> None:
    messages = [{"role": "user", "content": "hi"}]
    t0 = time.monotonic()
    with pytest.raises(ChatTemplateError):
        render_chat_template(payload, messages, timeout_seconds=1.0)
    assert time.monotonic() - t0 < 4.0


def test_str_multiplication_does_not_allocate() -> None:
    tracemalloc.start()
    try:
        with pytest.raises(ChatTemplateError):
            render_chat_template('{{ "x" * 10**9 }}', [])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50_000_000


def test_output_limit_stops_streaming() -> None:
    tpl = "{% for i in range(100000) %}{% for j in range(100000) %}xxxxxxxxxx{% endfor %}{% endfor %}"
    t0 = time.monotonic()
    with pytest.raises(ChatTemplateError, match="max_output_chars"):
        render_chat_template(tpl, [], max_output_chars=10_000, timeout_seconds=30)
    assert time.monotonic() - t0 < 2.0


def test_timeout_without_output() -> None:
    tpl = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    t0 = time.monotonic()
    with pytest.raises(ChatTemplateError, match="time limit"):
        render_chat_template(tpl, [], timeout_seconds=0.3)
    assert time.monotonic() - t0 < 1.5


def test_error_keeps_cause_and_message() -> None:
    with pytest.raises(ChatTemplateError) as info:
        render_chat_template("{{ raise_exception('System role not supported') }}", [])
    assert str(info.value) == "System role not supported"
    with pytest.raises(ChatTemplateError) as info:
        render_chat_template("{{ messages[5] + 1 }}", [])
    assert "UndefinedError" in str(info.value)
    assert isinstance(info.value.__cause__, jinja2.exceptions.UndefinedError)
    with pytest.raises(ChatTemplateError, match="line 2"):
        render_chat_template("ok\n{% for %}", [])


def test_unsafe_attribute_in_test_is_refused() -> None:
    # jinja would silently render an "unsafe undefined" as "" here; we refuse
    with pytest.raises(ChatTemplateError, match="unsafe"):
        render_chat_template("{% if ''.__class__ is defined %}y{% endif %}", [])


# --- ordinary behaviour ------------------------------------------------------------------------

MSGS = [{"role": "user", "content": "héllo 😈 <b>&"}, {"role": "assistant", "content": "ok"}]


def test_tojson_keeps_non_ascii_and_html() -> None:
    out = render_chat_template("{{ messages[0]|tojson }}", MSGS)
    assert out == '{"role": "user", "content": "héllo 😈 <b>&"}'
    assert render_chat_template("{{ messages[0]|tojson(ensure_ascii=true) }}", MSGS) == json.dumps(MSGS[0])


def test_tojson_options() -> None:
    tpl = "{{ {'b': 1, 'a': [1, 2]}|tojson(indent=2, sort_keys=true) }}|{{ [1, 2]|tojson(separators=(',', ':')) }}"
    assert render_chat_template(tpl, []) == json.dumps({"b": 1, "a": [1, 2]}, indent=2, sort_keys=True) + "|[1,2]"


def test_loop_controls() -> None:
    tpl = "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}"
    assert render_chat_template(tpl, []) == "0134"


def test_loop_variables_and_else() -> None:
    tpl = (
        "{% for m in messages %}{{ loop.index }}/{{ loop.length }}{{ '.' if loop.last }}{{ loop.revindex0 }} {% endfor %}"
        "{% for x in [] %}x{% else %}empty{% endfor %}"
        "{% for k, v in {'a': 1}.items() %}{{ k }}={{ v }}{% endfor %}"
        "{% for m in messages if m.role == 'assistant' %}{{ loop.first }}{{ m.content }}{% endfor %}"
    )
    assert render_chat_template(tpl, MSGS) == _reference_render(tpl, MSGS)
    assert render_chat_template(tpl, MSGS) == "1/21 2/2.0 emptya=1Trueok"


def test_recursive_loop_and_macros_like_upstream() -> None:
    tpl = (
        "{% macro show(x, sep=[', ']) %}{{ x ~ sep[0] }}{% endmacro %}"
        "{% for item in tree recursive %}{{ show(item.name) }}{% if item.children %}[{{ loop(item.children) }}]{% endif %}{% endfor %}"
        "{% set a, b = 1, (2, 3) %}{{ a }}{{ b }}{{ (1, 2) }}{{ [1, 'x'] }}{{ {'k': none} }}"
        "{{ 'a' ~ undefined_thing ~ 1 }}{{ messages|map(attribute='role')|join('+') }}"
        "{{ messages|selectattr('role', 'equalto', 'user')|list|length }}{{ '%s-%d'|format('x', 3) }}"
        "{{ '{}/{}'.format(1, 2) }}{{ 'ab'|center(6) }}|{{ 'a\nb'|indent(2, true) }}{{ [[1], [2]]|sum(start=[]) }}"
        "{{ range(5)|batch(2, 0)|list }}{{ range(5)|slice(2)|list }}{{ 'aXb'.replace('X', '--') }}{{ 2 ** 10 }}{{ 7 % 3 }}"
    )
    tree = [{"name": "a", "children": [{"name": "b"}, {"name": "c", "children": [{"name": "d"}]}]}]
    assert render_chat_template(tpl, MSGS, tree=tree) == _reference_render(tpl, MSGS, tree=tree)


def test_kwargs_passed_through() -> None:
    tpl = "{{ bos_token }}{% if enable_thinking %}<think>{% endif %}{{ custom.name }}{{ eos_token }}"
    assert render_chat_template(tpl, [], bos_token="<s>", eos_token="</s>", enable_thinking=True,
                                custom={"name": "n"}) == "<s><think>n</s>"


def test_special_tokens_undefined_when_none() -> None:
    tpl = "[{{ bos_token }}]{{ bos_token is defined }}{{ eos_token is defined }}"
    assert render_chat_template(tpl, []) == "[]FalseFalse"
    assert render_chat_template(tpl, [], bos_token="") == "[]TrueFalse"


def test_standard_variables() -> None:
    tpl = "{{ add_generation_prompt }}{{ tools }}{{ documents }}{{ messages|length }}"
    assert render_chat_template(tpl, MSGS) == "TrueNoneNone2"
    tools = [{"type": "function", "function": {"name": "f"}}]
    tpl2 = "{{ add_generation_prompt }}{{ tools|tojson }}{{ documents[0].title }}"
    out = render_chat_template(tpl2, [], add_generation_prompt=False, tools=tools, documents=[{"title": "T", "text": "x"}])
    assert out == "False" + json.dumps(tools) + "T"
    with pytest.raises(TypeError):
        render_chat_template(tpl2, [], tools=[len])


def test_strftime_now_frozen() -> None:
    tpl = "{{ strftime_now('%d %b %Y %H:%M') }}"
    assert render_chat_template(tpl, [], strftime_now=datetime(2024, 7, 26, 13, 5)) == "26 Jul 2024 13:05"
    assert render_chat_template(tpl, [], strftime_now="2024-07-26T00:00:00") == "26 Jul 2024 00:00"
    year = render_chat_template("{{ strftime_now('%Y') }}", [])
    assert year == str(datetime.now().year) or int(year) == datetime.now().year - 1


def test_generation_tag() -> None:
    tpl = "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}|{% endfor %}"
    assert render_chat_template(tpl, MSGS) == "héllo 😈 <b>&|ok|"


def test_trim_and_lstrip_blocks() -> None:
    tpl = "  {% if true %}\nA\n  {% endif %}\nB\n"
    assert render_chat_template(tpl, []) == _reference_render(tpl, []) == "A\nB"


def test_continue_final_message() -> None:
    tpl = "{% for m in messages %}<{{ m.role }}>{{ m.content }}</s>{% endfor %}"
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "The answer is"}]
    out = render_chat_template(tpl, msgs, continue_final_message=True, add_generation_prompt=False)
    assert out == "<user>hi</s><assistant>The answer is"
    assert msgs[-1]["content"] == "The answer is"  # caller's messages untouched


def test_large_but_legitimate_output() -> None:
    msgs = [{"role": "user", "content": "y" * 1000} for _ in range(500)]
    tpl = "{% for m in messages %}{{ m.role ~ ':' ~ m.content }}\n{% endfor %}"
    out = render_chat_template(tpl, msgs)
    assert len(out) == 500 * (5 + 1000 + 1)
    with pytest.raises(ChatTemplateError, match="max_output_chars"):
        render_chat_template(tpl, msgs, max_output_chars=100_000)


def test_compiled_template_cache_does_not_leak_state() -> None:
    tpl = "{{ strftime_now('%Y') }}-{{ x }}"
    assert render_chat_template(tpl, [], strftime_now="2001-01-01T00:00:00", x=1) == "2001-1"
    assert render_chat_template(tpl, [], strftime_now="2002-01-01T00:00:00", x=2) == "2002-2"
