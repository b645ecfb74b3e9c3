"""``--target mnn`` writes HF's BPE with a ``continuing_subword_prefix`` for MNN's BPE, which has
none (``rows.bpe_continuing_prefix``): a Metaspace mark before each word and renamed tokens.  The
folders are trained here with HF ``tokenizers`` and judged live against it."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mtokspec.convert import from_hf
from mtokspec.convert.mnn_target.rows import WORD_MARK
from mtokspec.format import tree as t
from mtokspec.format.validate import ERROR, validate
from mtokspec.tokenizer import load

tokenizers = pytest.importorskip("tokenizers")

TRAIN = ["the quick brown fox jumps over the lazy dog.", "hello world, hello there!", "a1 b22 c333 (x) [y]"] * 20
WORDS = ["the", "quick", "fox", "hello", "there", "world", "a1", "b22", "xyz", "dog", ".", ",", "!", "(", ")", "ab",
         "zzz", "hellothere", "中", "ｶa", "éthe", "x中y", "🙂🙂", "the🙂"]
"""Words of the trained characters, and of characters no token covers (HF's unknown id), first or inside."""


def _folder(root, pre: str = "BertPreTokenizer", decoder: str = "WordPiece"):
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##"))
    tok.pre_tokenizer = getattr(pre_tokenizers, pre)()
    tok.decoder = decoders.WordPiece(prefix="##") if decoder == "WordPiece" else decoders.BPEDecoder()
    tok.train_from_iterator(TRAIN, trainers.BpeTrainer(vocab_size=150, special_tokens=["[UNK]"], show_progress=False,
                                                       continuing_subword_prefix="##"))
    tok.add_special_tokens([AddedToken("[UNK]", special=True, normalized=False)])
    root.mkdir(parents=True, exist_ok=True)
    tok.save(str(root / "tokenizer.json"))
    return root, tokenizers.Tokenizer.from_file(str(root / "tokenizer.json"))


@pytest.fixture(scope="module", params=["BertPreTokenizer", "Whitespace", "WhitespaceSplit"])
def pair(request, tmp_path_factory):
    folder, hf = _folder(tmp_path_factory.mktemp("prefix"), request.param)
    return hf, from_hf(folder, target="mnn").tree


def test_the_file_marks_words_and_renames_tokens(pair):
    hf, tree = pair
    texts = {row[0] for row in tree.model.vocab}
    assert WORD_MARK.encode() in texts and (WORD_MARK + "the").encode() in texts and b"##e" not in texts
    assert isinstance(tree.pre_tokenizer, t.SequencePreTokenizer)
    assert isinstance(tree.pre_tokenizer.pretokenizers[-1], t.MetaspacePreTokenizer)
    assert isinstance(tree.decoder, t.MetaspaceDecoder)
    assert not [f for f in validate(tree) if f.severity == ERROR]


def _within(hf, text: str) -> bool:
    """The bound: no later character of a word is one HF has only as a first piece (HF's unknown
    id there, a new id on MNN); a character no token covers is HF's unknown id anywhere."""
    vocab = hf.get_vocab()
    words = [w for w, _ in hf.pre_tokenizer.pre_tokenize_str(text)]
    return all("##" + c in vocab or c not in vocab for w in words for c in w[1:])


def test_a_word_starting_with_a_character_no_token_covers_is_hfs_unknown_id(pair):
    """MNN merges the word's mark into the unknown id its rows give such a character (the mark's
    text is U+2581 U+0001, so the rows its merges look up sort before each id's own text)."""
    hf, tree = pair
    texts = [x for x in ["中", "ｶ b", "the 🙂🙂 fox", "éé", "中 hello", "ｶe"] if _within(hf, x)]
    assert len(texts) >= 5
    for semantics in ("mnn", "hf"):
        tok = load(tree, semantics=semantics)
        for text in texts:
            assert tok.encode(text, add_special_tokens=False) == hf.encode(text, add_special_tokens=False).ids, (
                semantics, text)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join))
def test_words_of_known_characters_encode_as_hf_on_both_semantics(pair, text):
    hf, tree = pair
    assume(_within(hf, text))
    want = hf.encode(text, add_special_tokens=False).ids
    for semantics in ("mnn", "hf"):
        assert load(tree, semantics=semantics).encode(text, add_special_tokens=False) == want, semantics


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([w for w in WORDS if w.isalnum()]), min_size=1, max_size=8).map(" ".join))
def test_words_without_punctuation_decode_as_hf(pair, text):
    """The stream with the engine's first space (a named rule), the decode as HF's: no clean-up
    applies to text without . , ? !"""
    hf, tree = pair
    assume(_within(hf, text))
    mnn = load(tree, semantics="mnn")
    ids = hf.encode(text, add_special_tokens=False).ids
    want = hf.decode(ids, skip_special_tokens=False)
    assert mnn.decode_bytes(ids).decode() == want
    assert mnn.decode_bytes(ids, stream=True).decode() in (want, " " + want)


def test_another_decoder_keeps_the_plain_bpe(tmp_path):
    folder, _ = _folder(tmp_path, decoder="BPEDecoder")
    tree = from_hf(folder, target="mnn").tree
    assert not isinstance(tree.decoder, t.MetaspaceDecoder)
    assert WORD_MARK.encode() not in {row[0] for row in tree.model.vocab}


def test_a_token_that_would_meet_the_marks_rows_keeps_the_plain_bpe(tmp_path):
    """The mark's merges look up U+2581 U+0001 + a character; a token of HF's spelled so (a first
    piece starting with U+0001) would be found instead: the lever is not applied."""
    import json

    folder, _ = _folder(tmp_path)
    doc = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    doc["model"]["vocab"]["\x01t"] = len(doc["model"]["vocab"])
    (folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    tree = from_hf(folder, target="mnn").tree
    assert not isinstance(tree.decoder, t.MetaspaceDecoder)
    assert WORD_MARK.encode() not in {row[0] for row in tree.model.vocab}
