"""Runtime vs HF ``tokenizers`` on tokenizers trained inside the test session.

The fixtures (:mod:`tests._support.trained_fixtures`) cover every model, normalizer, pre-tokenizer,
decoder and split behaviour the exporter writes; each is compared with HF on its training text and
on hypothesis-generated text.

Generated characters are those assigned in Unicode 3.2 plus explicit emoji: HF's Rust crates, the
``regex`` module and Python's ``unicodedata`` ship different Unicode versions, so a character
assigned (or re-categorised) recently can be classified differently (documented in
``runtime/normalizers.py``); the version-independent behaviour is what is compared here.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from mtokspec.format import tree as t
# the fixtures are trained with HF tokenizers: without it (a test dependency) this module skips
from tests._support.trained_fixtures import ADDED_TEXT, FIXTURES, TRAIN_TEXT, pair, texts

# every test here runs on both paths of the models: compiled and pure (conftest.runtime_path)
pytestmark = pytest.mark.usefixtures("runtime_path")


def check(name: str, text: str):
    hf, ours = pair(name)
    expected = hf.encode(text, add_special_tokens=False).ids
    assert ours.encode(text) == expected, (name, text)
    assert ours.encode(text, add_special_tokens=True) == hf.encode(text).ids, (name, text)
    assert ours.decode(expected) == hf.decode(expected, skip_special_tokens=False), (name, text)
    assert ours.decode(expected, skip_special_tokens=True) == hf.decode(expected), (name, text)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixture_training_text(name):
    for line in TRAIN_TEXT.split("\n")[:11]:
        check(name, line)
    check(name, TRAIN_TEXT)
    check(name, " ".join(ADDED_TEXT) + "  x<mask>  [TOOL]   y <<both>>  z")


@pytest.mark.parametrize("name", sorted(FIXTURES))
@settings(max_examples=250, deadline=None)
@given(text=texts)
def test_fixture_hypothesis(name, text):
    check(name, text)


def test_fixture_tree_shapes():
    """The fixtures exercise the variants they claim to (guards the helper converter)."""
    _, tok = pair("wordpiece-bert-lower")
    assert isinstance(tok.tree.normalizer, t.BertNFDNormalizer) and tok.tree.normalizer.nfd_table
    _, tok = pair("wordpiece-bert-strip-no-table")
    assert isinstance(tok.tree.normalizer, t.BertNormalizer) and tok.tree.normalizer.strip_accents
    _, tok = pair("split-merged-previous-invert")
    sp = tok.tree.pre_tokenizer.pretokenizers[0]
    assert (sp.behavior, sp.invert) == (2, True)
    assert tok.tree.model.byte_level is False
    _, tok = pair("unigram-nfc-byte-fallback")
    assert tok.tree.model.byte_fallback and isinstance(tok.tree.normalizer, t.TableNormalizer)
    _, tok = pair("sp-bpe-byte-fallback")
    assert tok.tree.model.byte_fallback and isinstance(tok.tree.pre_tokenizer, t.NoPreTokenizer)
    assert any(a.lstrip for a in tok.tree.added_tokens) and any(a.rstrip for a in tok.tree.added_tokens)
