"""Real chat templates collected from public model folders (``data/collected/``: the templates, their
sources and licenses in ``SOURCES.json``/``LICENSES.md``; ``cases.json`` recorded by
``tools/record_collected_chat.py``): transformers' renderings of conversations with system
prompts, tools, tool calls and several turns, and MNN's own renderings (``mnn_tok chat``) of each
template and of its rewrite for MNN.

Checked here: the emulation renders what MNN rendered (original and rewritten templates); after
``rewrite_for_mnn`` MNN renders what transformers renders on every case transformers renders, never
worse than the original; where the template raises, the device renders the contract's marker
(``docs/design/chat-mnn.md``); transformers renders the rewrite as the original.
"""

from __future__ import annotations

import functools
import hashlib
import json
from datetime import datetime
from pathlib import Path

import pytest

from mtokspec.chat.lint import lint_chat_template
from mtokspec.chat.mnn import render_mnn
from mtokspec.chat.rewrite import RAISED, device_raise, matches, mnn_prompt, rewrite_for_mnn
from mtokspec.errors import ChatTemplateError

DATA = Path(__file__).parent / "data" / "collected"
SOURCES = json.loads((DATA / "SOURCES.json").read_text(encoding="utf-8"))
CASES = json.loads((DATA / "cases.json").read_text(encoding="utf-8"))
FROZEN = datetime.fromisoformat(CASES["strftime_now_frozen_to"])
RECORDED = datetime.fromisoformat(CASES["recorded_on"])
BY_NAME = {t["name"]: t for t in CASES["templates"]}


def _cases():
    for key in BY_NAME[next(iter(BY_NAME))]["expected"]:
        name, gen = key.split("/")
        yield key, CASES["conversations"][name], gen == "gen"


def _template(name: str) -> str:
    return (DATA / SOURCES[name]["file"]).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def _rewritten(name: str):
    src = SOURCES[name]
    return rewrite_for_mnn(_template(name), bos_token=src["bos_token"], eos_token=src["eos_token"])


def _hf_form(want) -> str:
    """A recorded transformers rendering in transformers_prompt's form."""
    if isinstance(want, str):
        return want
    return "\0raise:" + want["raise"] if "raise" in want else "\0error:" + want["error"]


def _mnn(template: str, conv: dict, agp: bool, src: dict, now: datetime) -> str:
    return mnn_prompt_with_tools(template, conv, agp, src["bos_token"], src["eos_token"], now)


def mnn_prompt_with_tools(template: str, conv: dict, agp: bool, bos, eos, now) -> str:
    """mnn_prompt, with the conversation's tools as MNN's jinja.context."""
    if "tools" not in conv:
        return mnn_prompt(template, conv["messages"], agp, bos, eos, now)
    try:
        return render_mnn(template, conv["messages"], add_generation_prompt=agp, bos_token=bos, eos_token=eos,
                          context={"tools": conv["tools"]}, strftime_now=now)
    except ChatTemplateError as e:
        return "\0mnn-error:" + str(e)


def _hf(template: str, conv: dict, agp: bool, src: dict) -> str:
    from mtokspec.chat.render import render_chat_template
    from mtokspec.chat.rewrite import _Raised, _raise

    try:
        return render_chat_template(template, conv["messages"], add_generation_prompt=agp, tools=conv.get("tools"),
                                    bos_token=src["bos_token"], eos_token=src["eos_token"], strftime_now=FROZEN,
                                    raise_exception=_raise)
    except _Raised as e:
        return "\0raise:" + str(e)
    except ChatTemplateError as e:
        return "\0error:" + str(e)


def test_sources_name_a_license_and_a_commit():
    assert set(SOURCES) == set(BY_NAME)
    for name, src in SOURCES.items():
        assert src["license"] and len(src["commit"]) == 40 and src["repository"], name
        assert (DATA / src["file"]).is_file(), name
    licenses = (DATA / "LICENSES.md").read_text(encoding="utf-8")
    for src in SOURCES.values():
        assert src["license"].split(" (")[0] in licenses


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_emulation_equals_mnn_recordings(name):
    """render_mnn on the original and the recorded rewrite = MNN's own renderings (SHA-256)."""
    entry, src = BY_NAME[name], SOURCES[name]
    for template, recorded in ((_template(name), entry["mnn"]), (entry["rewritten"], entry["mnn_rewritten"])):
        for key, conv, agp in _cases():
            want = recorded[key]
            got = _mnn(template, conv, agp, src, RECORDED)
            if isinstance(want, dict):
                assert got.startswith("\0mnn-error:"), f"{key}: MNN failed ({want['error']}), the emulation rendered"
            else:
                assert not got.startswith("\0mnn-error:"), f"{key}: {got}"
                assert hashlib.sha256(got.encode("utf-8", "surrogateescape")).hexdigest() == want, key


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_rewritten_renders_as_transformers(name):
    entry, src = BY_NAME[name], SOURCES[name]
    template, rw = _template(name), _rewritten(name)
    for key, conv, agp in _cases():
        want = _hf_form(entry["expected"][key])
        # mtokspec's transformers renderer is transformers' (recorded with transformers itself)
        mine = _hf(template, conv, agp, src)
        assert mine == want if not want.startswith("\0") else mine.split(":")[0] == want.split(":")[0], key
        # transformers renders the rewrite as the original
        again = _hf(rw.template, conv, agp, src)
        assert again == want or (again.startswith("\0error:") and want.startswith("\0error:")), key
        before = matches(want, _mnn(template, conv, agp, src, FROZEN))
        after = matches(want, _mnn(rw.template, conv, agp, src, FROZEN))
        assert after or not before, f"{key}: worse after the rewrite"
        if not want.startswith("\0error:"):
            assert after, f"{key}: MNN differs after the rewrite (losses: {[str(x) for x in rw.losses]})"


def _raising():
    for name in sorted(BY_NAME):
        for key, conv, agp in _cases():
            want = BY_NAME[name]["expected"][key]
            if isinstance(want, dict) and "raise" in want:
                yield pytest.param(name, key, conv, agp, want["raise"], id=f"{name}-{key}")


@pytest.mark.parametrize("name,key,conv,agp,message", list(_raising()))
def test_raising_cases_follow_the_contract(name, key, conv, agp, message):
    """Where transformers raises: the device renders RAISED + the message, device_raise names it,
    the lint states it (info), and transformers still raises on the rewrite."""
    src, rw = SOURCES[name], _rewritten(name)
    prompt = _mnn(rw.template, conv, agp, src, FROZEN)
    assert prompt == RAISED + message

    def render(t: str) -> str:
        return _mnn(t, conv, agp, src, FROZEN)

    assert device_raise(rw.template, prompt, render) == message
    assert device_raise(_template(name), prompt, render) is None  # only a rewritten template has the marker
    infos = [f for f in lint_chat_template(rw.template, bos_token=src["bos_token"] or "")
             if f.code == "mnn-jinja-raise-noop"]
    assert infos and all(f.severity == "info" and RAISED in f.message for f in infos)
    assert _hf(rw.template, conv, agp, src) == "\0raise:" + message
