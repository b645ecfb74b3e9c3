"""Shared fixtures.  The reference corpus is read from ../shared/corpus and never copied here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
if str(ROOT) not in sys.path:  # the construct reference codec lives in spec/ at the top
    sys.path.insert(0, str(ROOT))

settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


def corpus_path() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"reference corpus not found at {CORPUS} (it lives in ../shared/corpus)")
    return CORPUS


@pytest.fixture(scope="session")
def corpus() -> Path:
    return corpus_path()


def corpus_mtok_files() -> list[Path]:
    """The exporter-written .mtok files (empty when the corpus is absent; tests then skip)."""
    return sorted(CORPUS.glob("tok/*/mnn.mtok")) if CORPUS.is_dir() else []


@pytest.fixture(params=["compiled", "pure"])
def runtime_path(request, monkeypatch) -> str:
    """Run a test on both paths of the hf runtime's models: the compiled cores
    (``mtokspec._speedups``; skipped when it is not built or ``MTOKSPEC_PURE`` is set) and the
    pure-Python reference.  Tokenizers pick their path at their first encode, so a test (or a cache
    of tokenizers keyed by :func:`mtokspec.speedups.enabled`) sees the one asked for."""
    from mtokspec import speedups

    if request.param == "compiled":
        if not speedups.enabled():
            pytest.skip("the compiled module mtokspec._speedups is not built here (or MTOKSPEC_PURE is set)")
    else:
        monkeypatch.setattr(speedups, "_module", None)
    return request.param
