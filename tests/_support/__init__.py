"""What the test modules share: the repository's paths and the reference corpus.

Test modules import from this package (and its modules), never from one another; ``conftest.py``
holds only fixtures and Hypothesis profiles.
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["ROOT", "TESTS", "CORPUS", "corpus_path", "corpus_mtok_files", "corpus_folder_param"]

ROOT = Path(__file__).resolve().parents[2]
"""The repository's top folder (``spec/``, ``tools/``, ``examples/``, ``README.md``)."""
TESTS = ROOT / "tests"
"""The test folder, with its data folders ``fixtures/`` and ``golden/``."""
CORPUS = ROOT.parent / "shared" / "corpus"
"""The reference corpus, read in place from ``../shared/corpus`` and never copied here."""


def corpus_path() -> Path:
    """:data:`CORPUS`, or a skip naming where it was looked for."""
    if not CORPUS.is_dir():
        pytest.skip(f"reference corpus not found at {CORPUS} (it lives in ../shared/corpus)")
    return CORPUS


def corpus_mtok_files() -> list[Path]:
    """The exporter-written .mtok files (empty when the corpus is absent; tests then skip)."""
    return sorted(CORPUS.glob("tok/*/mnn.mtok")) if CORPUS.is_dir() else []


corpus_folder_param = pytest.mark.parametrize(
    "folder", [p.parent for p in corpus_mtok_files()] or [pytest.param(None, marks=pytest.mark.skip(
        reason=f"reference corpus not found at {CORPUS} (it lives in ../shared/corpus)"))],
    ids=[p.parent.name for p in corpus_mtok_files()] or None)
"""Parametrizes a test's ``folder`` over the corpus folders that hold an exporter-written .mtok."""
