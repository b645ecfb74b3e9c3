"""The public modules pass ``mypy --strict`` (``python -m tools.typecheck``, also run by ``.ci/run``)."""

from __future__ import annotations

import pytest

from tools import typecheck


def test_public_modules_pass_mypy_strict(capsys):
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    status = typecheck.main([])
    out = capsys.readouterr().out
    assert status == 0, out
    assert out.startswith("Success: no issues found in ")
