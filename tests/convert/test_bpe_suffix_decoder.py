"""``--target mnn`` writes HF's ``BPEDecoder`` (a word-end suffix such as ``</w>``: openai-gpt,
HerBERT, CLIP-like BPE) as a Replace of the suffix by a space, a Fuse and a Strip of the last space:
MNN's decode of HF's ids is HF's, and so is the file's HF reading.  (MNN's BPE cannot encode with the suffix: that row stays impossible.)
The folder is trained here with HF ``tokenizers`` and judged live against it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtokspec.convert import from_hf
from mtokspec.format import tree as t
from mtokspec.tokenizer import load

tokenizers = pytest.importorskip("tokenizers")

TRAIN = ["the quick brown fox jumps over the lazy dog.", "hello world, hello there!", "a1 b22 c333 (x) [y]"] * 20
WORDS = ["the", "quick", "fox", "hello", "there", "world", "a1", "b22", "dog", ".", ",", "!", "(x)", "zzz", "中"]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    tok.train_from_iterator(TRAIN, trainers.BpeTrainer(vocab_size=150, special_tokens=["<unk>"], show_progress=False,
                                                       end_of_word_suffix="</w>"))
    tok.add_special_tokens([AddedToken("<unk>", special=True, normalized=False)])
    root = tmp_path_factory.mktemp("suffix")
    tok.save(str(root / "tokenizer.json"))
    return tokenizers.Tokenizer.from_file(str(root / "tokenizer.json")), from_hf(root, target="mnn").tree


def test_the_decoder_is_a_replace_and_a_strip(pair):
    _, tree = pair
    assert tree.decoder == t.SequenceDecoder([t.ReplaceDecoder("</w>", " "), t.FuseDecoder(), t.StripDecoder(" ", 0, 1)])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join))
def test_mnn_decodes_hfs_ids_as_hf(pair, text):
    hf, tree = pair
    ids = hf.encode(text, add_special_tokens=False).ids
    for semantics in ("mnn", "hf"):
        got = load(tree, semantics=semantics).decode_bytes(ids).decode("utf-8")
        assert got == hf.decode(ids, skip_special_tokens=False), (semantics, text)
