"""generated/ is what the spec gives, and the run-time path does not touch construct."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mtokspec._generated.tree import CLASSES, UNIONS
from tools import generate
from tests._support import ROOT


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
        "from mtokspec.format import tree as t\n"
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


MNN_MIRROR = ROOT.parent / ".mirror" / "alibaba+MNN" / "repo"


def test_source_links_are_pinned_and_point_at_lines_that_exist():
    """Every ref= of the spec links MNN at the pinned commit; with a local MNN clone, the lines exist."""
    from spec import mtok
    from tools.generate.spec_walk import collect

    m = collect(mtok.MtokFile)
    refs = [url for info in [*m.records.values(), *m.unions.values()] for url in info.ref]
    assert len(refs) >= 10
    prefix = f"https://github.com/alibaba/MNN/blob/{mtok.MNN_COMMIT}/"
    for url in refs:
        assert url.startswith(prefix), url
        path, _, lines = url[len(prefix):].partition("#")
        first, last = (int(x) for x in lines.replace("L", "").split("-"))
        assert 0 < first <= last, url
        if MNN_MIRROR.is_dir():
            text = subprocess.run(["git", "-C", str(MNN_MIRROR), "show", f"{prefix.split('/')[-2]}:{path}"],
                                  capture_output=True, text=True, check=True).stdout
            assert last <= len(text.splitlines()), url
