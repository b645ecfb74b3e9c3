"""The fixture the mnn semantics' speed-up tests share: one function run on both paths."""

from __future__ import annotations

import pytest

from mtokspec import speedups
from mtokspec.errors import Error
from mtokspec.runtime.mnn import regex as R
from mtokspec.runtime.mnn._compiled import stages

COMPILED = speedups.module()


@pytest.fixture
def paths(monkeypatch):
    """``run(fn)``: fn() on the pure path, then on the compiled one (compiled patterns dropped
    between; stages built inside fn pick their path at construction); each outcome, a value
    ``("ok", value)`` or an error ``("refused", class name, message)``."""
    def run(fn):
        out = []
        for module in (None, COMPILED):
            monkeypatch.setattr(speedups, "_module", module)
            R._programs.clear()
            try:
                out.append(("ok", fn()))
            except Error as e:
                out.append(("refused", type(e).__name__, str(e)))
            assert (stages() is None) == (module is None)
        return out

    return run
