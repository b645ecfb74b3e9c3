"""The README's tables of numbers come from the recorded runs, never typed by hand."""

from __future__ import annotations

import json

import pytest

from mtokspec.runtime.mnn import MNN_COMMIT
from tools import mnn_report, readme_tables
from tests._support import CORPUS, ROOT


def test_readme_tables_are_generated_from_the_records():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_tables.render(text) == text, "run python -m tools.readme_tables"


def test_the_agreement_record_is_this_corpus_and_this_mnn():
    """The record names the MNN commit the semantics models and covers every recorded file and output
    with every case of the corpus (the corpus tests check each case on every run)."""
    if not CORPUS.is_dir():
        pytest.skip(f"reference corpus not found at {CORPUS}")
    record = json.loads((ROOT / "benchmarks" / "records" / "mnn_agreement.json").read_text(encoding="utf-8"))
    assert record["mnn_commit"] == MNN_COMMIT
    cases = sum(len(json.loads((CORPUS / "text" / f"{name}.json").read_text(encoding="utf-8")))
                for name in mnn_report.TEXT_SETS)
    files = {f"{d.name}/{fn}" for d in (CORPUS / "tok").iterdir() if (d / "ref_mnn.json").is_file()
             for fn in json.loads((d / "ref_mnn.json").read_text(encoding="utf-8"))["files"]}
    rows = record["rows"]
    assert {r["file"] for r in rows} == files
    assert {(r["file"], r["output"]) for r in rows} == {(f, o) for f in files for o in readme_tables.OUTPUTS}
    assert all(r["cases"] == cases and r["mnn_semantics_equals_mnn"] == cases for r in rows)
