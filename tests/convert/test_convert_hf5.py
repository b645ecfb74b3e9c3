"""The header rules S1-S8 against MNN's exporter under transformers 5 (fixture folder per rule).

``tests/fixtures/hf5/<name>/`` holds the model files (written by ``python -m tools.hf5_fixtures``),
``RULE.txt`` the rule it exercises, and ``expected.json`` what MNN's exporter wrote from it under
transformers 5.24.0 (``--record``): the header and the SHA-256 of the whole ``.mtok``.
"""

from __future__ import annotations

import hashlib
import json

import pytest

import mtokspec
from mtokspec.format import tree as t
from mtokspec.convert import from_hf
from tools import hf5_fixtures
from tests._support import TESTS

FIXTURES = TESTS / "fixtures" / "hf5"
NAMES = sorted(hf5_fixtures.FOLDERS)


def _expected(name: str) -> dict:
    return json.loads((FIXTURES / name / "expected.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", NAMES)
def test_header_and_bytes_match_the_exporter_under_transformers_5(name):
    expected = _expected(name)
    assert expected["transformers_version"] == "5.24.0"
    data = mtokspec.build(from_hf(FIXTURES / name).tree)
    header = mtokspec.parse(data).header
    flat = {k: expected[k] for k in ("special_count", "stop_count", "prefix_count", "ids")}  # the flat layout
    assert header == t.from_dict({"header": flat}).header
    assert hashlib.sha256(data).hexdigest() == expected["mtok_sha256"]


def test_fixture_folders_are_what_the_generator_writes(tmp_path):
    hf5_fixtures.write_folders(tmp_path)
    for name in NAMES:
        for f in (tmp_path / name).iterdir():
            assert f.read_bytes() == (FIXTURES / name / f.name).read_bytes(), (name, f.name)
