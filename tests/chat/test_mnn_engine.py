"""MNN's Jinja engine emulated (mtokspec.chat.mnn) against MNN's own renderings.

Two references, both recorded by MNN's code (``mnn_tok chat``): the dev corpus' ``chat/_mnn/``
(every case of every template, 256) and ``data/mnn_rules.json`` (written by
``tools/record_mnn_chat.py``: at least one minimal template per chat rule of
``mtokspec/divergences/rules/chat_template.py``, each rendered for three conversations with and without
the generation prompt).  A recorded error (MNN never returned, ran out of memory or crashed) must
be an error of the emulation.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._support import CORPUS
from mtokspec.chat.mnn import MnnEngineFailure, render_mnn
from mtokspec.chat.mnn.builtins import strftime
from mtokspec.chat.mnn.values import format_double, json_str
from mtokspec.divergences.rules.chat_template import RULES as CHAT_TEMPLATE_RULES
from mtokspec.errors import ArgumentTypeError, ChatTemplateError

CHAT_DIR = CORPUS / "chat"
RULES_DATA = json.loads((Path(__file__).parent / "data" / "mnn_rules.json").read_text(encoding="utf-8"))
RULES_NOW = datetime.fromisoformat(RULES_DATA["recorded_on"])


def _corpus_files() -> list:
    files = sorted(p for p in CHAT_DIR.glob("*.json") if not p.name.startswith("_")) if CHAT_DIR.is_dir() else []
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"reference corpus not found at {CHAT_DIR}"))]
    return [pytest.param(p, id=p.stem) for p in files]


def _render(template: str, messages, agp: bool, bos, eos, now):
    try:
        return render_mnn(template, messages, add_generation_prompt=agp, bos_token=bos, eos_token=eos,
                          strftime_now=now), None
    except ChatTemplateError as e:
        return None, e


@pytest.mark.parametrize("path", _corpus_files())
def test_dev_corpus_equals_mnn_recordings(path):
    spec = json.loads(path.read_text(encoding="utf-8"))
    rec = json.loads((path.parent / "_mnn" / path.name).read_text(encoding="utf-8"))
    now = datetime.fromisoformat(rec["recorded_on"])
    assert len(rec["cases"]) == len(spec["cases"])
    for i, (case, want) in enumerate(zip(spec["cases"], rec["cases"])):
        got, err = _render(spec["template"], case["messages"], case["add_generation_prompt"],
                           spec.get("bos_token"), spec.get("eos_token"), now)
        if "error" in want:
            assert err is not None, f"case {i}: MNN failed ({want['error']}) but the emulation rendered"
        else:
            assert err is None, f"case {i}: {err}"
            assert got == want["text"], f"case {i}"


def _rule_cases():
    for t_i, t in enumerate(RULES_DATA["templates"]):
        for key in t["mnn"]:
            yield pytest.param(t, key, id=f"{t_i}-{t['rule']}-{key}")


@pytest.mark.parametrize("entry,key", list(_rule_cases()))
def test_rule_templates_equal_mnn_recordings(entry, key):
    conv, gen = key.split("/")
    want = entry["mnn"][key]
    got, err = _render(entry["template"], RULES_DATA["conversations"][conv], gen == "gen",
                       entry["bos_token"], entry["eos_token"], RULES_NOW)
    if "error" in want:
        assert isinstance(err, MnnEngineFailure), f"MNN failed ({want['error']}); emulation: {got!r} {err!r}"
        assert err.rule == entry["rule"]
    else:
        assert "hex" not in want
        assert err is None, err
        assert got == want["text"]


def test_every_chat_rule_has_a_recorded_template():
    covered = {t["rule"] for t in RULES_DATA["templates"]}
    assert {r.code for r in CHAT_TEMPLATE_RULES} <= covered


# --- corners the recordings name but cannot hold ---------------------------------------------------

def test_rapidjson_double_printing():
    assert [format_double(x) for x in (1.0, 0.5, 1e21, 1e20, 1.5e-7, 0.001, -0.0, 123.456, 1e300)] == [
        b"1.0", b"0.5", b"1e21", b"100000000000000000000.0", b"1.5e-7", b"0.001", b"-0.0", b"123.456", b"1e300"]
    assert render_mnn("{{ messages[0].x }}|{{ messages[0] }}", [{"role": "u", "x": 2.5}]) == '2.5|{"role":"u","x":2.5}'


def test_tojson_keys_unescaped_and_sorted():
    assert json_str({b'k"': 1, b"name": b"n", b"type": 2}) == b'{"type": 2, "name": "n", "k"": 1}'
    assert json_str([], 2) == b"[]" and json_str({b"a": [1]}, 0) == b'{\n"a": [\n1\n]\n}'


def test_put_time_copies_what_it_does_not_know():
    now = datetime(2024, 7, 6, 9, 5)
    assert strftime(b"%-d|%d|%e|%b|%Q|%Ey|%", now) == b"%-d|06| 6|Jul|%Q|24|"


def test_engine_failures_name_their_rule():
    with pytest.raises(MnnEngineFailure) as e:
        render_mnn("{% set s = 'a b' %}{{ s.split('') }}", [])
    assert e.value.rule == "mnn-jinja-method-arguments"
    with pytest.raises(MnnEngineFailure) as e:
        render_mnn("{{ range(3000000)|length }}", [])
    assert e.value.rule == "mnn-jinja-large-range"
    with pytest.raises(MnnEngineFailure) as e:
        render_mnn("{% for x in [1, 2 %}{% endfor %}", [])
    assert e.value.rule == "mnn-jinja-literal-hang"


def test_bounded_where_mnn_takes_forever():
    slow = "{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}x{% endfor %}{% endfor %}{% endfor %}"
    with pytest.raises(ChatTemplateError):
        render_mnn(slow, [], timeout_seconds=0.2, max_output_chars=10**9)
    with pytest.raises(ChatTemplateError, match="output"):
        render_mnn(slow, [], max_output_chars=1000)
    grow = "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}"
    with pytest.raises(ChatTemplateError):
        render_mnn(grow, [])
    big = "{% set s = 'ab' %}{% set t = messages[0].content %}"
    with pytest.raises(ChatTemplateError, match="replace"):
        render_mnn(big + "{{ t.replace('a', t) }}", [{"role": "u", "content": "a" * 2000}])
    with pytest.raises(ChatTemplateError, match="tojson"):
        render_mnn("{{ messages|tojson(indent=100000) }}", [{"role": "u", "content": "x"}] * 20)
    with pytest.raises(ChatTemplateError, match="recursion"):
        render_mnn("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", [])


def test_messages_reach_the_engine_as_mnn_callers_pass_them():
    # role/content pairs keep role first; any other message goes whole, in its own key order
    tpl = "{% for m in messages %}{{ m }};{% endfor %}"
    msgs = [{"content": "c", "role": "r"}, {"content": "c", "role": "r", "name": "n"}]
    assert render_mnn(tpl, msgs) == '{"role":"r","content":"c"};{"content":"c","role":"r","name":"n"};'
    assert render_mnn("{{ tools|length }}|{{ x }}", [], context={"tools": [1, 2], "x": "X"}) == "2|X"


def test_messages_that_are_not_json_objects_are_refused():
    for messages in ({"role": "u"}, ["text"]):  # not a list of dicts: the type (as in the hf semantics)
        with pytest.raises(ArgumentTypeError, match="^messages: "):
            render_mnn("{{ messages }}", messages)
    for messages in ([{"role": "u", "content": object()}], [{1: "x"}], [{"role": "u", "content": "\ud800"}]):
        with pytest.raises(ChatTemplateError):
            render_mnn("{{ messages }}", messages)


def test_frozen_clock_and_default_clock():
    assert render_mnn("{{ strftime_now('%Y') }}", [], strftime_now=datetime(1999, 1, 2)) == "1999"
    assert render_mnn("{{ strftime_now('%Y') }}", [], strftime_now="2001-05-06T00:00:00") == "2001"
    assert render_mnn("{{ strftime_now('%Y') }}", []) == str(datetime.now().year)


_PIECES = ["{{", "}}", "{%", "%}", "{#", "#}", "-", " ", "\n", "if", "elif", "else", "endif", "for", "endfor", "in",
           "x", "messages", "loop.index", "'a'", '"b\\n"', "|", "(", ")", "[", "]", ",", ":", "*", "%", "=", "==",
           "set", "macro", "endmacro", "f", "not", "is", "defined", "none", "1", "-1", "+", "~", "{", "}", "ns",
           "namespace(a=1)", "ns.a", "range(3)", "trim", "tojson", "m.content", "m['role']", ".", "\u00e9", "raw"]


@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
@settings(max_examples=300, deadline=None)
def test_any_template_renders_or_names_its_failure(template):
    """MNN's parser never fails: any text renders, or the emulation says why MNN would not return."""
    try:
        out = render_mnn(template, [{"role": "user", "content": "x"}], timeout_seconds=5)
    except MnnEngineFailure as e:
        assert e.rule in {r.code for r in CHAT_TEMPLATE_RULES}
    else:
        assert isinstance(out, str)
