"""Fixtures and Hypothesis profiles; what test modules share otherwise lives in ``tests/_support``."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests._support import corpus_path

settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


@pytest.fixture(scope="session")
def corpus() -> Path:
    return corpus_path()


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
