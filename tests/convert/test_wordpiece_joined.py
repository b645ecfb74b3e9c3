"""``--target mnn`` spells the tokens HF's WordPiece clean-up joins (``. , ? !``) so that MNN prints
them without a space, token by token (``rows.joined_wordpiece_tokens``).  The folders are built
here with HF ``tokenizers`` (a trained BERT vocabulary, with and without the ``##.`` continuations
real BERT vocabularies carry; after BERT's pre-tokenizer, Punctuation, and HF quicktour's Whitespace,
which leaves punctuation runs and ``##`` inside words) and judged live against HF's ``DecodeStream``
and ``decode``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtokspec.convert import from_hf
from mtokspec.convert.mnn_target.rows import JOINED_PREFIX, JOINED_PREFIXES
from mtokspec.format import tree as t
from mtokspec.format.validate import ERROR, validate
from mtokspec.tokenizer import load
from tests._support.variant_folders import _base, _train

tokenizers = pytest.importorskip("tokenizers")

TEXTS = ["Hello, world. How are you? Fine!", "a.b,c?d!e", "Wait... what?!", "x .y , z", ". starts", "end.",
         "don't stop, it's fine.", "1,000.5 and 2.5?", "日本, 中文。", "[UNK] ,", "### Title: ##a ## ,.",
         "(s), f(x). ?! ,, .?"]


PUNCTUATION_AFTER_SPACES = {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                                                  {"type": "Punctuation", "behavior": "Isolated"}]}


def _folder(root: Path, continuations: bool, cleanup: bool = True, pre: dict | None = None) -> Path:
    doc, trainer = _base("wordpiece")
    if pre is not None:
        doc["pre_tokenizer"] = pre
    doc = _train(doc, trainer)
    vocab = doc["model"]["vocab"]
    if continuations:  # as bert-base's vocabulary: a continuation of each joined punctuation mark
        for mark in ".,?!":
            vocab.setdefault("##" + mark, len(vocab))
    doc["decoder"]["cleanup"] = cleanup
    root.mkdir(parents=True, exist_ok=True)
    (root / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def _hf_stream(tok, ids: list[int]) -> str:
    from tokenizers.decoders import DecodeStream

    stream, out = DecodeStream(skip_special_tokens=False), ""
    for i in ids:
        out += stream.step(tok, i) or ""
    return out


def _converted(folder: Path):
    return from_hf(folder, target="mnn").tree


WHITESPACE = {"type": "Whitespace"}
PUNCTUATION_IN_WORDS = {  # (continuations, pre-tokenizer): punctuation may follow inside a word
    "whitespace": (False, WHITESPACE),
    "whitespace-with-continuations": (True, WHITESPACE),
    "whitespace-split": (False, {"type": "WhitespaceSplit"}),
    "char-delimiter": (False, {"type": "CharDelimiterSplit", "delimiter": " "}),
    "whitespace-digits": (False, {"type": "Sequence", "pretokenizers": [WHITESPACE, {"type": "Digits",
                                                                                    "individual_digits": True}]}),
    "punctuation-contiguous": (False, {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "Contiguous"}]}),
    "punctuation-merged-with-previous": (True, {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "MergedWithPrevious"}]}),
}
PIPELINES = {"trained": (False, None), "with-continuations": (True, None),
             "punctuation-isolated": (True, PUNCTUATION_AFTER_SPACES), **PUNCTUATION_IN_WORDS}


@pytest.fixture(scope="module", params=list(PIPELINES), ids=list(PIPELINES))
def pair(request, tmp_path_factory):
    continuations, pre = PIPELINES[request.param]
    folder = _folder(tmp_path_factory.mktemp("wp"), continuations, pre=pre)
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    hf.isolated = request.param not in PUNCTUATION_IN_WORDS  # (read by the look-up test)
    return hf, _converted(folder)


def test_the_file_holds_the_joined_rows_and_validates(pair):
    hf, tree = pair
    m = tree.model
    prefix = m.continuing_subword_prefix
    assert isinstance(m, t.WordPieceModel) and prefix in JOINED_PREFIXES
    assert tree.decoder.prefix == prefix
    texts = {row[0] for row in m.vocab}
    for mark in ".,?!":
        assert mark.encode() in texts and (prefix + mark).encode() in texts
    assert not [f for f in validate(tree) if f.severity == ERROR]


def _check(hf, tree, text: str) -> None:
    """MNN encodes ``text`` as HF, prints HF's stream (with the engine's first space, a named rule)
    and decodes as HF."""
    mnn = load(tree, semantics="mnn")
    ids = hf.encode(text, add_special_tokens=False).ids
    assert mnn.encode(text, add_special_tokens=False) == ids
    assert load(tree, semantics="hf").encode(text, add_special_tokens=False) == ids  # the file's own reading
    # HF keeps a first token's prefix, MNN removes it (mnn-decoder-chain, named)
    kept = 2 if ids and hf.id_to_token(ids[0]).startswith("##") else 0
    want = _hf_stream(hf, ids)[kept:]
    got = mnn.decode_bytes(ids, stream=True).decode("utf-8", "replace")
    assert got in (want, " " + want), (text, want, got)
    assert mnn.decode_bytes(ids).decode("utf-8", "replace") == hf.decode(ids, skip_special_tokens=False)[kept:]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "hello", "world", ".", ",", "?", "!", " ", "...", "x1", "é", "##",
                                 "#", "(", ")", "'", "n't", "[UNK]"]),
                max_size=10).map("".join))
def test_mnn_prints_hf_stream_and_decode(pair, text):
    _check(*pair, text)


@pytest.mark.parametrize("text", TEXTS)
def test_fixed_texts(pair, text):
    _check(*pair, text)


def test_every_id_decodes_in_both_semantics(pair):
    hf, tree = pair
    for semantics in ("hf", "mnn"):
        tok = load(tree, semantics=semantics)
        for i in range(hf.get_vocab_size()):
            tok.decode([5, i])  # no id is lost by the renamed rows


def test_the_continuation_is_what_the_lookup_finds(pair):
    """MNN's look-up of prefix + mark finds HF's ``##mark``; where HF has none, the joined mark (no
    word holds it after the first character) or, after Whitespace, the unknown id MNN passes over."""
    hf, tree = pair
    from mtokspec.runtime.mnn.models import Vocab

    vocab = Vocab(tree.model.vocab, "model.vocab")
    prefix = tree.model.continuing_subword_prefix
    isolated = hf.isolated
    for mark in ".,?!":
        cont = hf.token_to_id("##" + mark)
        found = vocab.token_to_id((prefix + mark).encode())
        if cont is not None:
            assert found == cont
            assert vocab.token_to_id(("##" + mark).encode()) == cont or isolated  # a word "##." finds it too
        else:
            assert found == (hf.token_to_id(mark) if isolated else hf.token_to_id("[UNK]"))
        assert vocab.token_to_id(mark.encode()) == hf.token_to_id(mark)
    assert vocab.token(hf.token_to_id("[UNK]")) == b"[UNK]"  # the unknown id's text stays its own


def test_cleanup_off_keeps_the_vocabulary(tmp_path):
    assert _converted(_folder(tmp_path / "off", True, cleanup=False)).model.continuing_subword_prefix == "##"


def test_an_unknown_token_sorting_first_joins_only_what_no_continuation_look_up_meets(tmp_path):
    """After Whitespace, a joined mark with no ``##mark`` needs a row of the unknown id before it:
    with ``<unk>`` (sorting before every new prefix) it stays spaced, the rest still matches HF."""
    folder = _folder(tmp_path, False, pre=WHITESPACE)
    doc = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = doc["model"]["vocab"]
    vocab["<unk>"] = vocab.pop("[UNK]")
    doc["model"]["unk_token"] = "<unk>"
    for added in doc["added_tokens"]:
        added["content"] = "<unk>" if added["content"] == "[UNK]" else added["content"]
    vocab["##."] = len(vocab)  # one mark with its continuation: that one is joined
    (folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tree = _converted(folder)
    texts = {row[0] for row in tree.model.vocab}
    prefix = tree.model.continuing_subword_prefix
    assert prefix in JOINED_PREFIXES and (prefix + ".").encode() in texts
    assert not {(prefix + mark).encode() for mark in ",?!"} & texts
    mnn = load(tree, semantics="mnn")
    for text in TEXTS:
        ids = hf.encode(text, add_special_tokens=False).ids
        assert mnn.encode(text, add_special_tokens=False) == ids
        assert mnn.decode_bytes(ids).decode("utf-8", "replace") == hf.decode(ids, skip_special_tokens=False)


def test_fix_of_a_file_that_leaves_punctuation_in_words(tmp_path):
    """``fix`` of the exporter's file of a Whitespace pipeline (the exporter drops Whitespace: the
    file's words are runs without space): MNN on the fixed file gives what the file means."""
    from mtokspec.convert.mnn_target.fix import fix

    original = from_hf(_folder(tmp_path, False, pre=WHITESPACE), target="exporter").tree
    fixed = fix(original)
    assert fixed.tree.model.continuing_subword_prefix in JOINED_PREFIXES
    meant, mnn = load(original, semantics="hf"), load(fixed.tree, semantics="mnn")
    for text in [*TEXTS, "a.", "a. b", "x?! y...", "##. ###"]:
        ids = meant.encode(text, add_special_tokens=False)
        assert mnn.encode(text, add_special_tokens=False) == ids, text
        cut = 2 if ids and meant.decode([ids[0]]).startswith("##") else 0  # (mnn-decoder-chain, named)
        want, got = meant.decode_bytes(ids)[cut:], mnn.decode_bytes(ids, stream=True)
        assert got in (want, b" " + want) and mnn.decode_bytes(ids) == meant.decode_bytes(ids)[cut:], text


@pytest.mark.parametrize("continuations", [False, True], ids=["trained", "with-continuations"])
def test_fix_without_a_folder_joins_them_too(continuations, tmp_path):
    """``fix`` of the exporter's file (no tokenizer.json): the same rows, and a report against what
    the file means (its own HF semantics before the fix) naming only the engine's first space."""
    from mtokspec.convert.mnn_target.fix import fix

    folder = _folder(tmp_path, continuations)
    fixed = fix(from_hf(folder, target="exporter").tree)
    assert fixed.tree.model.continuing_subword_prefix == JOINED_PREFIX
    decoded = {loss.rule for loss in fixed.losses if getattr(loss, "output", "") in ("seq", "stream")}
    assert decoded <= {"mnn-stream-decode"}, decoded
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    for text in TEXTS:
        _check(hf, fixed.tree, text)


def test_a_special_token_the_clean_up_joins_is_joined_too(tmp_path):
    """splinter's '.' is a special added token of the vocabulary's id: HF's decode (specials kept)
    runs it through the WordPiece decoder and its clean-up like any token."""
    from tokenizers import AddedToken

    folder = _folder(tmp_path, False)
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    hf.add_special_tokens([AddedToken(".", special=True, normalized=False)])
    hf.save(str(folder / "tokenizer.json"))
    tree = _converted(folder)
    assert (JOINED_PREFIX + ".").encode() in {row[0] for row in tree.model.vocab}
    for text in TEXTS:
        _check(hf, tree, text)
