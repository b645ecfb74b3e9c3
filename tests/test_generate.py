"""generated/ is what the spec gives, and the run-time path does not touch construct."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT

from mtokspec._generated.tree import CLASSES, UNIONS
from tools import generate


def test_generated_is_fresh():
    assert generate.main(["--check"]) == 0


def test_check_detects_staleness(tmp_path, monkeypatch):
    for name, text in generate.outputs().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(generate, "OUT", tmp_path)
    assert generate.main(["--check"]) == 0
    (tmp_path / "codec.py").write_text("# edited by hand\n", encoding="utf-8")
    assert generate.main(["--check"]) == 1


def test_format_md_documents_every_class_and_union():
    text = (ROOT / "generated" / "FORMAT.md").read_text(encoding="utf-8")
    for name in [*CLASSES, *UNIONS]:
        assert f"## {name}" in text, name


def test_parse_and_build_do_not_import_construct():
    code = (
        "import sys, mtokspec\n"
        "from mtokspec import tree as t\n"
        "data = mtokspec.build(t.MtokFile(model=t.BPEModel(vocab=[(b'a', 0)])))\n"
        "mtokspec.parse(data); mtokspec.validate(data)\n"
        "print('construct' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_package_is_installed():
    """pyproject lists packages explicitly (spec/ and generated/ are mapped into mtokspec)."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "mtokspec").rglob("__init__.py")}
    assert found <= listed, found - listed


def test_diagram_was_rendered_from_the_current_ksy():
    from tools import diagram

    assert diagram.main(["--check"]) == 0
