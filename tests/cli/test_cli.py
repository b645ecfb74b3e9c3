"""The file-format commands: inspect, validate, dump, build."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import mtokspec
from mtokspec.format import tree as t
from mtokspec.cli import main
from tests._support import CORPUS, ROOT, corpus_mtok_files

EXAMPLE = ROOT / "examples" / "tiny.mtok"


def run(*argv: str) -> int:
    return main(list(argv))


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        run("--help")
    out = capsys.readouterr().out
    for name in ("inspect", "validate", "dump", "build", "convert", "export-hf"):
        assert name in out
    assert run() == 2  # no command: help and a usage error


def test_python_m_entry_point():
    out = subprocess.run([sys.executable, "-m", "mtokspec", "inspect", str(EXAMPLE)],
                         capture_output=True, text=True, check=True)
    assert "BPE" in out.stdout


def test_inspect_json(capsys):
    assert run("inspect", str(EXAMPLE), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "mtok" and doc["size"] == EXAMPLE.stat().st_size
    assert sum(s["size"] or 0 for s in doc["sections"]) == doc["size"]


def test_validate_exit_codes(tmp_path, capsys):
    assert run("validate", str(EXAMPLE)) == 0
    bad = tmp_path / "bad.mtok"
    tree = mtokspec.parse(EXAMPLE.read_bytes())
    tree.model.vocab = list(reversed(tree.model.vocab))
    bad.write_bytes(mtokspec.build(tree))
    assert run("validate", str(EXAMPLE), str(bad)) == 1
    assert "vocab-order" in capsys.readouterr().out
    broken = tmp_path / "broken.mtok"
    broken.write_bytes(EXAMPLE.read_bytes()[:100])
    assert run("validate", str(EXAMPLE), str(broken), str(bad)) == 2
    err = capsys.readouterr().err
    assert "broken.mtok" in err and "at byte" in err
    assert run("validate", str(tmp_path / "missing.mtok")) == 2


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_dump_then_build_reproduces_bytes(tmp_path, fmt):
    files = [EXAMPLE, *corpus_mtok_files()[:1], *sorted(CORPUS.glob("tok/*/mnn.txt"))[:1]]
    for src in files:
        dumped = tmp_path / f"tree.{fmt}"
        out = tmp_path / "out.bin"
        assert run("dump", str(src), "--format", fmt, "-o", str(dumped)) == 0
        assert run("build", str(dumped), "-o", str(out)) == 0
        assert out.read_bytes() == src.read_bytes(), src


def test_build_failure_writes_nothing(tmp_path, capsys):
    doc = mtokspec.to_dict(mtokspec.parse(EXAMPLE.read_bytes()))
    doc["model"]["vocab"][0][1] = "not an id"
    src = tmp_path / "tree.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "out.mtok"
    assert run("build", str(src), "-o", str(out)) == 2
    assert "model.vocab[0]" in capsys.readouterr().err
    assert not out.exists() and os.listdir(tmp_path) == ["tree.json"]
    # a tree that builds but breaks MNN's binary search is refused unless asked
    doc = mtokspec.to_dict(t.MtokFile(model=t.BPEModel(vocab=[(b"b", 0), (b"a", 1)])))
    src.write_text(json.dumps(doc), encoding="utf-8")
    assert run("build", str(src), "-o", str(out)) == 2 and not out.exists()
    assert "not written: 1 error-level finding(s) (vocab-order); --force" in capsys.readouterr().err
    assert run("build", str(src), "-o", str(out), "--force") == 0 and out.exists()
    assert "1 error(s) written with --force (vocab-order)" in capsys.readouterr().err


def test_existing_output_survives_a_failed_build(tmp_path):
    out = tmp_path / "out.mtok"
    out.write_bytes(b"previous")
    src = tmp_path / "tree.yaml"
    src.write_text("format: mtok\nmodel: {type: NoSuchModel}\n", encoding="utf-8")
    assert run("build", str(src), "-o", str(out)) == 2
    assert out.read_bytes() == b"previous"
    assert sorted(os.listdir(tmp_path)) == ["out.mtok", "tree.yaml"]


def test_stdin_input(monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(EXAMPLE.read_bytes())))
    assert run("inspect", "-") == 0
    assert "tiny" not in capsys.readouterr().err


def test_written_files_get_ordinary_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        out = tmp_path / "out.yaml"
        assert run("dump", str(EXAMPLE), "-o", str(out)) == 0
        assert out.stat().st_mode & 0o777 == 0o644
        out.chmod(0o600)
        assert run("dump", str(EXAMPLE), "-o", str(out)) == 0
        assert out.stat().st_mode & 0o777 == 0o600  # an existing file keeps its mode
    finally:
        os.umask(old)


def test_encode_text_after_a_flag(capsys):
    assert run("encode", str(EXAMPLE), "--json", "Hello") == 0
    after = capsys.readouterr().out
    assert run("encode", "--json", str(EXAMPLE), "Hello") == 0
    assert capsys.readouterr().out == after and json.loads(after)
    with pytest.raises(SystemExit):
        run("inspect", str(EXAMPLE), "unexpected")


def test_export_hf_of_a_legacy_file(tmp_path, capsys):
    src = CORPUS / "tok" / "roberta-base" / "mnn.txt"
    if not src.exists():
        pytest.skip("../shared/corpus is absent")
    out = tmp_path / "tokenizer.json"
    assert run("export-hf", str(src), "-o", str(out)) == 0
    assert "upgraded from a legacy tokenizer.txt" in capsys.readouterr().err
    tokenizers = pytest.importorskip("tokenizers")
    ref = json.loads((src.parent / "ref_en.json").read_text(encoding="utf-8"))
    text = json.loads((CORPUS / "text" / "en.json").read_text(encoding="utf-8"))[0]
    assert tokenizers.Tokenizer.from_file(str(out)).encode(text, add_special_tokens=False).ids == ref["no_special"][0]
