"""Both semantics on tokenizers trained by HF ``tokenizers`` in the test session (the fixtures of
``tests._support.trained_fixtures``: every model, normalizer, pre-tokenizer, decoder and split behaviour the
exporter writes).  Wherever the ``mnn`` semantics differs from the ``hf`` one, a divergence rule
must explain it."""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import given, settings

from mtokspec.runtime.mnn import MnnTokenizer
from tests._support.divergence import assert_differences_explained
from tests._support.trained_fixtures import ADDED_TEXT, FIXTURES, TRAIN_TEXT, pair, texts


@lru_cache(maxsize=None)
def both(name: str):
    _, hf = pair(name)
    return hf, MnnTokenizer.from_tree(hf.tree)


def check(name: str, text: str) -> None:
    assert_differences_explained(*both(name), text, name)


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
