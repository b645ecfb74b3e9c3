"""The device prompt through the API and the CLI: Tokenizer(semantics="mnn").apply_chat_template,
``mtokspec chat --runtime mnn`` and ``mtokspec compare FILE --chat``."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from tests._support import ROOT
import mtokspec
from mtokspec.chat.compare import compare_chat, format_comparison, load_conversations
from mtokspec.cli import main
from mtokspec.tokenizer import Tokenizer

EXAMPLE = ROOT / "examples" / "tiny.mtok"
GEMMA = ("{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
         "{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
         "{{ raise_exception('Conversation roles must alternate') }}{% endif %}<{{ message['role'] }}>"
         "{{ message['content'] | trim }}\n{% endfor %}{% if add_generation_prompt %}<model>{% endif %}")
SYS = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
USER = [{"role": "user", "content": " U "}]


@pytest.fixture
def gemma_file(tmp_path) -> Path:
    tree = mtokspec.parse(EXAMPLE.read_bytes())
    tree.chat_template, tree.bos_token, tree.eos_token = GEMMA, "<bos>", "<eos>"
    path = tmp_path / "gemma.mtok"
    path.write_bytes(mtokspec.build(tree))
    return path


def test_tokenizer_mnn_semantics_renders_as_mnn(gemma_file):
    hf = Tokenizer.from_file(gemma_file)
    mnn = Tokenizer.from_file(gemma_file, semantics="mnn")
    assert mnn.apply_chat_template(USER) == hf.apply_chat_template(USER) == "<bos><user>U\n<model>"
    assert mnn.apply_chat_template(SYS, add_generation_prompt=False) == "<bos><system>S\n<user>U\n"
    with pytest.raises(mtokspec.Error, match="System role"):
        hf.apply_chat_template(SYS)
    # template variables and tools reach MNN only as its jinja context does
    assert mnn.apply_chat_template([], template="{{ tools|length }}{{ x }}", tools=[1, 2], x="X") == "2X"
    assert mnn.apply_chat_template([], template="{{ strftime_now('%Y') }}", strftime_now=datetime(1999, 1, 1)) == "1999"


def test_chat_command_runtime_mnn(gemma_file, tmp_path, capsys):
    conv = tmp_path / "c.json"
    conv.write_text(json.dumps(SYS))
    assert main(["chat", str(gemma_file), "--messages", str(conv), "--runtime", "mnn"]) == 0
    assert capsys.readouterr().out == "<bos><system>S\n<user>U\n<model>"
    assert main(["chat", str(gemma_file), "--messages", str(conv)]) == 1
    assert "System role" in capsys.readouterr().err


def test_compare_chat_command(gemma_file, tmp_path, capsys):
    conv = tmp_path / "convs.json"
    conv.write_text(json.dumps({"with_system": SYS, "plain": {"messages": USER, "add_generation_prompt": False}}))
    assert main(["compare", str(gemma_file), "--chat", str(conv)]) == 1
    out = capsys.readouterr().out
    assert "== plain (add_generation_prompt=false): same prompt" in out
    assert "== with_system (add_generation_prompt=true): DIFFERENT" in out
    assert "explained by: mnn-jinja-raise-noop" in out
    assert "1/2 conversations" in out
    assert main(["compare", str(gemma_file), "--chat", str(conv), "--json"]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert [r["same"] for r in rows] == [False, True] and rows[0]["first_difference"] == 0
    conv.write_text("{")
    assert main(["compare", str(gemma_file), "--chat", str(conv)]) == 2


def test_compare_names_the_rule_and_the_first_difference():
    tpl = "{% for m in messages %}{{ m.role }}:{% if m['name'] is defined %}{{ m['name'] }}{% endif %};{% endfor %}"
    (c,) = compare_chat(tpl, load_conversations([{"role": "user", "content": "x"}]), strftime_now=datetime(2024, 1, 1))
    assert (c.transformers, c.mnn, c.first_difference) == ("user:;", "user:;", None) and c.same
    (c,) = compare_chat("{{ 7 % 3 }}|{{ [1 * 2] }}", load_conversations([[{"role": "user", "content": "x"}]]))
    assert c.mnn_error and c.rules == ["mnn-jinja-literal-hang"]
    (c,) = compare_chat("{{ 7 % 3 }}|{{ 'x' if false }}", load_conversations([[{"role": "user", "content": "x"}]]))
    assert (c.transformers, c.mnn, c.first_difference) == ("1|", "7|x", 0)
    assert set(c.rules) == {"mnn-jinja-unparsed-operator", "mnn-jinja-condexpr-no-else"}
    text = format_comparison(c, width=20)
    assert "first difference at character 0 (line 1, column 1)" in text


def test_load_conversations_shapes():
    m = [{"role": "user", "content": "x"}]
    assert load_conversations(m) == [("conversation", m, None)]
    assert load_conversations([m, {"messages": m, "name": "n", "add_generation_prompt": False}]) == [
        ("#0", m, None), ("n", m, False)]
    with pytest.raises(ValueError):
        load_conversations({"a": "not messages"})


def test_chat_runtime_mnn_raise_contract(tmp_path, capsys):
    """A template rewritten for MNN, where transformers raises: the device's marker on stdout, one
    line on stderr, exit 1; a prompt that merely starts with the marker's words exits 0; lint --all
    states the contract."""
    from mtokspec.chat.rewrite import RAISED, rewrite_for_mnn

    tree = mtokspec.parse(EXAMPLE.read_bytes())
    tree.chat_template = rewrite_for_mnn(GEMMA, bos_token="<bos>", eos_token="<eos>").template
    tree.bos_token, tree.eos_token = "<bos>", "<eos>"
    path = tmp_path / "rewritten.mtok"
    path.write_bytes(mtokspec.build(tree))
    conv = tmp_path / "c.json"
    conv.write_text(json.dumps(SYS))
    assert main(["chat", str(path), "--messages", str(conv), "--runtime", "mnn"]) == 1
    got = capsys.readouterr()
    assert got.out == RAISED + "System role not supported"
    assert got.err.count("\n") == 1 and "raise_exception(System role not supported)" in got.err
    assert main(["chat", str(path), "--messages", str(conv)]) == 1  # transformers raises
    assert "System role not supported" in capsys.readouterr().err
    conv.write_text(json.dumps([{"role": "user", "content": RAISED + "hi"}]))
    assert main(["chat", str(path), "--messages", str(conv), "--runtime", "mnn"]) == 0
    assert capsys.readouterr().out == "<bos><user>" + RAISED + "hi\n<model>"
    main(["lint", "--all", str(path)])
    out = capsys.readouterr().out
    assert "info: chat_template:1: raise_exception('System role not supported')" in out
    assert not [line for line in out.splitlines() if "[mnn-jinja-raise-noop]" in line and ": info: " not in line]
    assert "[mnn-jinja-ascii-string-ops]" in out  # |trim: the loss left (Unicode white space)
