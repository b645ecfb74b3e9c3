"""from_hf on folders trained here with HF tokenizers, then our runtime against HF itself."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.convert import from_hf
from mtokspec import Tokenizer
from tests._support.convert_trainers import TRAIN_TEXT, TRAINERS
from tests._support.unicode_stable import STABLE_CHARS

# every test here runs on both paths of the models: compiled and pure (conftest.runtime_path)
pytestmark = pytest.mark.usefixtures("runtime_path")

pytest.importorskip("tokenizers", reason="HF tokenizers is the oracle (a test dependency)")
_CACHE: dict[str, tuple] = {}
# as test_convert_roundtrip_hf's text, with characters both Unicode versions agree on (unicode_stable)
_TEXT = st.lists(st.one_of(st.sampled_from(TRAIN_TEXT.split()), st.text(STABLE_CHARS, max_size=6),
                           st.sampled_from([" ", "  ", "\n", "\t", "<s>", "[CLS]", "</s>"])),
                 max_size=12).map("".join)


def _pair(kind: str, tmp_path_factory):
    if kind not in _CACHE:
        original = TRAINERS[kind]()
        folder = tmp_path_factory.mktemp(f"runtime-{kind}")
        original.save(str(folder / "tokenizer.json"))
        result = from_hf(folder)
        assert [loss for loss in result.losses if loss.may_change_tokenization] == []
        ours = Tokenizer.from_bytes(mtokspec.build(result.tree))
        _CACHE[kind] = (original, ours)
    return _CACHE[kind]


@pytest.mark.parametrize("kind", sorted(TRAINERS))
def test_runtime_of_converted_folder_matches_hf(kind, tmp_path_factory):
    original, ours = _pair(kind, tmp_path_factory)

    @settings(max_examples=150, deadline=None, database=None)
    @given(_TEXT)
    def check(text):
        for special in (False, True):
            expected = original.encode(text, add_special_tokens=special).ids
            assert ours.encode(text, add_special_tokens=special) == expected, (text, special)
        ids = original.encode(text, add_special_tokens=True).ids
        assert ours.decode(ids) == original.decode(ids, skip_special_tokens=False), text

    check()
    for line in TRAIN_TEXT.splitlines():
        assert ours.encode(line) == original.encode(line, add_special_tokens=False).ids
