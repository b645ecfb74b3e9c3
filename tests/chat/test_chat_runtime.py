"""Tokenizer.apply_chat_template and the chat command, with the template embedded in a .mtok."""

from __future__ import annotations

import json

import pytest

from mtokspec.chat.render import ChatTemplateError
from mtokspec.cli import main
from mtokspec import Tokenizer
from tests._support import ROOT


def test_embedded_template_renders_like_transformers(corpus):
    """phi-3-mini's .mtok embeds the same template as the corpus chat file ortx-phi-3-mini."""
    tok = Tokenizer.from_file(corpus / "tok" / "phi-3-mini" / "mnn.mtok")
    cases = json.loads((corpus / "chat" / "ortx-phi-3-mini.json").read_text(encoding="utf-8"))
    assert cases["template"] == tok.chat_template
    for case in cases["cases"]:
        extra = {k: v for k, v in case.items() if k not in ("messages", "add_generation_prompt", "expected",
                                                          "error", "conversation")}
        if "error" in case:
            with pytest.raises(ChatTemplateError):
                tok.apply_chat_template(case["messages"], add_generation_prompt=case["add_generation_prompt"],
                                        **extra)
            continue
        got = tok.apply_chat_template(case["messages"], add_generation_prompt=case["add_generation_prompt"],
                                      **extra)
        assert got == case["expected"]


def test_template_argument_and_missing_template(tmp_path):
    tok = Tokenizer.from_file(ROOT / "examples" / "tiny.mtok")
    assert tok.apply_chat_template([{"role": "user", "content": "x"}], template="{{ messages[0].content }}!") == "x!"
    tok.chat_template = ""
    with pytest.raises(ChatTemplateError, match="no chat template"):
        tok.apply_chat_template([{"role": "user", "content": "x"}])


def test_chat_command(tmp_path, capsys):
    msgs = tmp_path / "m.json"
    msgs.write_text(json.dumps([{"role": "user", "content": "Hello"}]), encoding="utf-8")
    example = str(ROOT / "examples" / "tiny.mtok")
    assert main(["chat", example, "--messages", str(msgs)]) == 0
    out = capsys.readouterr().out
    assert out == "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"
    assert main(["chat", example, "--messages", str(msgs), "--no-generation-prompt", "--tokens"]) == 0
    prompt, ids = capsys.readouterr().out.rsplit("\n", 2)[:2]
    tok = Tokenizer.from_file(example)
    assert prompt.endswith("<|im_end|>\n") and [int(x) for x in ids.split()] == tok.encode(prompt)
    evil = tmp_path / "evil.jinja"
    evil.write_text("{{ ''.__class__.__mro__ }}", encoding="utf-8")
    assert main(["chat", example, "--messages", str(msgs), "--template", str(evil)]) == 1
    assert "chat template" in capsys.readouterr().err
