"""examples/ is what tools/make_example.py makes, and the README's first command works on it."""

from __future__ import annotations

import pytest

import mtokspec
from mtokspec.cli import main
from tests._support import ROOT


def test_example_is_fresh():
    pytest.importorskip("tokenizers", reason="training the example needs HF tokenizers (a test dependency)")
    from tools import make_example

    assert make_example.main(["--check"]) == 0


def test_inspect_example(capsys):
    assert main(["inspect", str(ROOT / "examples" / "tiny.mtok")]) == 0
    out = capsys.readouterr().out
    assert "BPE: 420 tokens" in out and "ByteLevel" in out and "chat_template" in out
    tree = mtokspec.parse((ROOT / "examples" / "tiny.mtok").read_bytes())
    assert [f for f in mtokspec.validate(tree) if f.severity != "info"] == []
