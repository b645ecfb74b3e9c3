"""A SentencePiece character map (HF ``Precompiled``) looks a CR LF up as one grapheme: the key
``\\r`` replaces the pair whole.  ``--target mnn`` writes that as a literal Replace, so the ``mnn``
semantics gives HF's ids on texts with CR LF, lone CRs and LFs (a Unigram folder HF builds around
t5-small's map from the corpus, live)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dataclasses
import json

from mtokspec.convert import from_hf
from mtokspec.convert.mnn_target.variants import rows
from mtokspec.runtime.mnn import MnnTokenizer
from tests._support import corpus_path

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) is the reference")
from tests._support.variant_folders import folder_for  # noqa: E402


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    t5 = json.loads((corpus_path() / "tok" / "t5-small" / "tokenizer.json").read_text(encoding="utf-8"))
    node = t5["normalizer"]
    assert node["type"] == "Precompiled"
    row = next(v for v in rows() if v.key == "normalizer.Precompiled")
    folder = folder_for(dataclasses.replace(row, example=node, model="unigram"), tmp_path_factory.mktemp("crlf"))
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    return hf, MnnTokenizer.from_tree(from_hf(folder, target="mnn").tree)


def test_a_crlf_is_one_space(pair):
    hf, mnn = pair
    for text in ("a\r\nb", "copy\r\nof this\r\n", "\r\r\n\n", "x \r\n y"):
        assert mnn.encode(text) == hf.encode(text).ids, repr(text)


@settings(max_examples=80, database=None)
@given(st.lists(st.sampled_from(["\r", "\n", "\r\n", " ", "of", "the"]), max_size=10).map("".join))
def test_crlf_texts_give_hfs_ids(pair, text):
    hf, mnn = pair
    assert mnn.encode(text) == hf.encode(text).ids, repr(text)
