"""Both semantics on tokenizers trained by HF ``tokenizers`` in the test session (the fixtures of
``test_runtime_fixtures``: every model, normalizer, pre-tokenizer, decoder and split behaviour the
exporter writes).  Wherever the ``mnn`` semantics differs from the ``hf`` one, a divergence rule
must explain it."""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import given, settings
from test_runtime_fixtures import ADDED_TEXT, FIXTURES, TRAIN_TEXT, pair, texts

from mtokspec.divergences import RULES
from mtokspec.runtime.mnn import MnnTokenizer
from mtokspec.divergences.explain import explain_decode, explain_encode


@lru_cache(maxsize=None)
def both(name: str):
    _, hf = pair(name)
    return hf, MnnTokenizer.from_tree(hf.tree)


def check(name: str, text: str) -> None:
    hf, mnn = both(name)
    for special in (False, True):
        if hf.encode(text, special) != mnn.encode(text, special):
            rules = explain_encode(hf, mnn, text, special)
            assert rules and set(rules) <= set(RULES), (name, text, special)
    ids = hf.encode(text)
    for stream in (False, True):
        if hf.decode_bytes(ids) != mnn.decode_bytes(ids, stream=stream):
            rules = explain_decode(hf, mnn, ids, stream)
            assert rules and set(rules) <= set(RULES), (name, ids, stream)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_training_text(name):
    for line in TRAIN_TEXT.split("\n")[:11]:
        check(name, line)
    check(name, " ".join(ADDED_TEXT) + "  x<mask>  [TOOL]\u3000  y <<both>>  z")


@pytest.mark.parametrize("name", sorted(FIXTURES))
@settings(max_examples=40, deadline=None)
@given(text=texts)
def test_hypothesis_text(name, text):
    check(name, text)
