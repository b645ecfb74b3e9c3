"""Issue 31, item 7: `lint --target mnn` reports no error on what `convert --target mnn` rewrote.

The rewrite prints every context name MNN may leave undefined as ``X if X is defined else D`` with
D transformers' value (``tools``/``documents``: none, ``add_generation_prompt``: false,
``bos_token``: ''), and both engines render that as transformers does: the lint knows the guard
(``defaults_as_transformers``) instead of reporting its ``is defined`` test.  Checked by rendering:
MNN's engine (the emulation, and MNN's own ``mnn_tok chat`` where built) on the rewritten template
against transformers on the original, with and without tools and the generation prompt.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from datetime import datetime

import pytest
from tests._support import CORPUS, ROOT

import mtokspec
from mtokspec.chat.lint import lint_chat_template
from mtokspec.chat.mnn import render_mnn
from mtokspec.chat.render import render_chat_template
from mtokspec.chat.rewrite import PROBE_CONVERSATIONS, rewrite_for_mnn
from mtokspec.cli import main
from mtokspec.convert.mnn_target.chat import with_chat_template_for_mnn
from mtokspec.errors import ChatTemplateError

NOW = datetime(2024, 7, 26)
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "the city"}},
                   "required": ["city"]}}}]

# ChatGLM-like templates written for this test (the GLM-4 family's shape: [gMASK]<sop>, role tags,
# a tool block from the global tools or from a message's tools, the generation prompt)
GLM_GLOBAL_TOOLS = (
    "[gMASK]<sop>{%- if tools -%}<|system|>\n# Tools{% for tool in tools %}\n\n## {{ tool['function']['name'] }}\n\n"
    "{{ tool['function'] | tojson(indent=4) }}{% endfor %}{%- endif -%}"
    "{%- for msg in messages %}{%- if msg.role == 'system' %}<|system|>\n{{ msg.content }}"
    "{%- elif msg.role == 'user' %}<|user|>\n{{ msg.content }}"
    "{%- elif msg.role == 'assistant' %}<|assistant|>\n{{ msg.content }}"
    "{%- elif msg.role == 'tool' %}<|observation|>\n{{ msg.content }}{%- endif %}{%- endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
GLM_TESTS_CONTEXT = (
    "[gMASK]<sop>{% if tools is not none and tools|length > 0 %}<|system|>\ntools: {{ tools|length }}{% endif %}"
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}{% endfor %}"
    "{% if add_generation_prompt is defined and add_generation_prompt %}<|assistant|>{% endif %}"
    "{% if documents is none %}{% else %}docs{% endif %}")


def _conversations() -> list[list[dict]]:
    out = [list(m) for m in PROBE_CONVERSATIONS]
    path = CORPUS / "chat" / "_conversations.json"
    if path.is_file():
        out += [v if isinstance(v, list) else v["messages"] for v in json.loads(path.read_text("utf-8")).values()]
    return out


def _hf(template, messages, agp, tools, bos, eos) -> str | None:
    try:
        return render_chat_template(template, messages, add_generation_prompt=agp, tools=tools, bos_token=bos,
                                    eos_token=eos, strftime_now=NOW)
    except ChatTemplateError:
        return None  # input transformers refuses: nothing to compare


def _mnn(template, messages, agp, tools, bos, eos) -> str:
    try:
        return render_mnn(template, messages, add_generation_prompt=agp, bos_token=bos, eos_token=eos,
                          strftime_now=NOW, context=None if tools is None else {"tools": tools})
    except ChatTemplateError as e:
        return "\0mnn-error:" + str(e)


def _agreement(original: str, rewritten: str, bos, eos) -> tuple[int, int]:
    """(renders where MNN on ``rewritten`` gives transformers' prompt of ``original``, renders)."""
    same = total = 0
    for messages in _conversations():
        for tools in (None, TOOLS):
            for agp in (False, True):
                want = _hf(original, messages, agp, tools, bos, eos)
                if want is None:
                    continue
                total += 1
                same += _mnn(rewritten, messages, agp, tools, bos, eos) == want
    return same, total


def _errors(template: str, bos) -> list:
    return [f for f in lint_chat_template(template, bos_token=bos) if f.severity == "error"]


def _corpus_templates() -> list:
    if not (CORPUS / "chat").is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"reference corpus not found at {CORPUS}"))]
    return [pytest.param(p, id=p.stem) for p in sorted((CORPUS / "chat").glob("*.json"))
            if not p.name.startswith("_")]


@pytest.mark.parametrize("path", _corpus_templates())
def test_no_error_on_a_rewritten_corpus_template_that_renders_as_transformers(path):
    doc = json.loads(path.read_text("utf-8"))
    bos, eos = doc.get("bos_token"), doc.get("eos_token")
    done = rewrite_for_mnn(doc["template"], bos_token=bos, eos_token=eos)
    same, total = _agreement(doc["template"], done.template, bos, eos)
    assert total
    if same == total:  # every render agrees: an error-level finding would be contradicted
        assert _errors(done.template, bos) == []
    # the rewrite's losses are the lint's findings on its output for the guards' codes
    guard_codes = {"mnn-jinja-context-undefined", "mnn-jinja-special-token-undefined"}
    lint_codes = {f.code for f in lint_chat_template(done.template, bos_token=bos)} & guard_codes
    assert {x.code for x in done.losses} & guard_codes == lint_codes


@pytest.mark.parametrize("template", [GLM_GLOBAL_TOOLS, GLM_TESTS_CONTEXT], ids=["global-tools", "context-tests"])
def test_a_chatglm_like_template_rewritten_lints_without_error_and_renders_as_transformers(template):
    bos, eos = "", "<|endoftext|>"
    done = rewrite_for_mnn(template, bos_token=bos, eos_token=eos)
    assert "mnn-jinja-context-undefined" in done.applied and done.losses == []
    same, total = _agreement(template, done.template, bos, eos)
    assert same == total > 0
    assert _errors(done.template, bos) == []
    if template is GLM_TESTS_CONTEXT:  # the original's tests of context names are real differences
        assert {f.code for f in _errors(template, bos)} == {"mnn-jinja-context-undefined"}
        assert _agreement(template, template, bos, eos)[0] == 0


def test_the_guard_is_known_only_with_transformers_value_as_its_default():
    ok = [
        "{% if (add_generation_prompt if add_generation_prompt is defined else false) %}G{% endif %}",
        "{% if (tools if tools is defined else none) is none %}N{% endif %}",
        "{% if (none if tools is undefined else tools) is none %}N{% endif %}",
        "{% if (false if add_generation_prompt is not defined else add_generation_prompt) %}G{% endif %}",
        "{{ (bos_token if bos_token is defined else '') + 'x' }}",
    ]
    for template in ok:
        assert _errors(template, "") == [], template
        assert _agreement(template, template, "", "e")[0] == _agreement(template, template, "", "e")[1], template
    wrong = [  # a default other than transformers' value: a real difference, still an error
        ("{% if (tools if tools is defined else []) is none %}N{% endif %}", "mnn-jinja-context-undefined"),
        ("{% if (add_generation_prompt if add_generation_prompt is defined else none) is none %}N{% endif %}",
         "mnn-jinja-context-undefined"),
        ("{{ (bos_token if bos_token is defined else 'B') + 'x' }}", "mnn-jinja-special-token-undefined"),
    ]
    for template, code in wrong:
        assert code in {f.code for f in _errors(template, "")}, template
        same, total = _agreement(template, template, "", "e")
        assert same < total, template


MNN_TOK = os.environ.get("MNN_TOK_BIN", str(ROOT.parent / "mnnbuild" / "tok" / "mnn_tok"))  # as ../shared/corpus


def test_lint_target_mnn_of_a_converted_chatglm_file_has_no_error_and_mnn_renders_it(tmp_path, capsys):
    path = CORPUS / "chat" / "llamacpp-test-ChatGLM4.json"
    if not path.is_file():
        pytest.skip(f"reference corpus not found at {CORPUS}")
    template = json.loads(path.read_text("utf-8"))["template"]
    tree = replace(mtokspec.parse((ROOT / "examples" / "tiny.mtok").read_bytes()), chat_template=template)
    converted, losses = with_chat_template_for_mnn(tree)  # what convert --target mnn and fix write
    assert losses == []
    out = tmp_path / "glm.mtok"
    out.write_bytes(mtokspec.build(converted))
    assert main(["lint", "--target", "mnn", "--json", str(out)]) in (0, 1)
    findings = _flatten(json.loads(capsys.readouterr().out))
    assert findings and not [f for f in findings if f["code"] == "mnn-jinja-context-undefined"]
    assert not [f for f in findings if f["severity"] == "error"]
    if not os.access(MNN_TOK, os.X_OK):
        pytest.skip(f"MNN's driver not found at {MNN_TOK} (MNN_TOK_BIN)")
    cases = [(m, agp) for m in PROBE_CONVERSATIONS for agp in (False, True)]
    lines = "".join(json.dumps({"messages": m, "add_generation_prompt": agp}) + "\n" for m, agp in cases)
    got = subprocess.run([MNN_TOK, "chat", str(out)], input=lines, capture_output=True, text=True, timeout=120,
                         check=True).stdout.splitlines()
    want = [_hf(template, m, agp, None, tree.bos_token or None, tree.eos_token or None) for m, agp in cases]
    assert [json.loads(x).get("text") for x in got] == want


def _flatten(doc) -> list[dict]:
    if isinstance(doc, dict):
        if "code" in doc and "severity" in doc:
            return [doc]
        return [f for v in doc.values() for f in _flatten(v)]
    if isinstance(doc, list):
        return [f for v in doc for f in _flatten(v)]
    return []
