"""The legacy ``tokenizer.txt`` types 0, 2 and 3 compiled (``_csrc/mnn_legacy.c``: type 0's tables,
score merge and byte fallback; type 2's splitter and WordPiece; type 3's interned merges, heap merge
and split loop) give what the
pure classes of ``runtime/mnn/legacy.py`` give: the same tables, ids and refusals (the same
``UndefinedInMnn`` where MNN throws or reads out of bounds) on the corpus files and texts and on
generated files and texts."""

from __future__ import annotations

import itertools
import json
import math
import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec import speedups
from mtokspec.errors import Error, UndefinedInMnn
from mtokspec.format import tree as t
from mtokspec.runtime.mnn import legacy as L
from mtokspec.runtime.mnn.pre_tokenizers import BYTE_MAP
from mtokspec.testing.strategies import txt_files
from tests._support import CORPUS

COMPILED = speedups.module()
pytestmark = pytest.mark.skipif(COMPILED is None or not hasattr(COMPILED, "MnnLegacyHF"),
                                reason="the compiled module is not built (or MTOKSPEC_PURE is set)")
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


def _both(fn):
    """fn() with the pure classes, then with the compiled ones (a class picks its path at
    construction): ("ok", result) or ("refused", error type, message) each."""
    out = []
    saved = speedups._module
    try:
        for module in (None, COMPILED):
            speedups._module = module
            try:
                out.append(("ok", fn()))
            except Error as e:
                out.append(("refused", type(e).__name__, str(e)))
    finally:
        speedups._module = saved
    return out


def _tokenizers(tree):
    """The tree's pure and compiled tokenizers (checked to be on their paths)."""
    out = []
    saved = speedups._module
    try:
        for module in (None, COMPILED):
            speedups._module = module
            out.append(mtokspec.Tokenizer.from_tree(tree, semantics="mnn"))
    finally:
        speedups._module = saved
    return out


def _encodes(tree, texts):
    def run():
        tok = mtokspec.Tokenizer.from_tree(tree, semantics="mnn")
        out = []
        for x in texts:  # each text apart: a refusal does not hide the texts after it
            try:
                out.append((tok.encode(x), tok.encode(x, add_special_tokens=False)))
            except Error as e:
                out.append(("refused", type(e).__name__, str(e)))
        return out

    return _both(run)


def _model(tok):
    return getattr(tok, "_impl", tok)


# --- the corpus ------------------------------------------------------------------------------------

def _corpus_texts() -> list[str | bytes]:
    out = []
    for name in ("en", "zh", "code", "edge", "mixed"):
        out += json.loads((CORPUS / "text" / f"{name}.json").read_text(encoding="utf-8"))
    for kind in ("en", "zh", "code"):
        out += (CORPUS / "text" / f"bench_{kind}.txt").read_text(encoding="utf-8").splitlines()[:400]
    return [x if isinstance(x, str) else bytes.fromhex(x["hex"]) for x in out]


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"reference corpus not found at {CORPUS}")
@pytest.mark.parametrize("name", ["t5-small", "bert-base-cased-derived", "roberta-base"])
def test_corpus_same_ids(name):
    path = CORPUS / "tok" / name / "mnn.txt"
    pure, compiled = _tokenizers(mtokspec.Tokenizer.from_file(path, semantics="mnn").tree)
    assert _model(pure)._compiled is None and _model(compiled)._compiled is not None
    texts = _corpus_texts()
    for x in texts:
        assert pure.encode(x) == compiled.encode(x), x
        assert pure.encode(x, add_special_tokens=False) == compiled.encode(x, add_special_tokens=False), x
    if name == "t5-small":  # the tables the class keeps
        a, b = _model(pure), _model(compiled)
        assert (a.pieces, a.normal, a.reserved, a.unk_id) == (b.pieces, b.normal, b.reserved, b.unk_id)


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"reference corpus not found at {CORPUS}")
def test_corpus_type3_unknown_piece_refused_alike():
    # roberta's vocabulary lacks pieces MNN's merges can leave: take one out and encode it
    tree = mtokspec.Tokenizer.from_file(CORPUS / "tok" / "roberta-base" / "mnn.txt", semantics="mnn").tree
    tokens = list(tree.tokens)
    tokens[tokens.index(b"\xc4\xa0world")] = b"\xc4\xa0world-gone"
    tree = t.HuggingFaceTxtFile(header=tree.header, tokens=tokens, merges=tree.merges, final_newline=tree.final_newline)
    out = _encodes(tree, ["hello world", "hello world again", "hello\nworld"])
    assert out[0] == out[1]
    assert out[0][1][0][0] == "refused" and out[0][1][0][1] == "UndefinedInMnn", out[0][1][0]
    assert out[0][1][2][0] != "refused"


# --- strtof ----------------------------------------------------------------------------------------

_SCORES = st.one_of(
    st.sampled_from(["0", "-0", "-0.0", "+0.", "-1", "-1.5", "1e3", " -2.5e-1x", "\t\n\v\f\r 7", "inf", "-INF", "+Infinity",
                     "infinit", "infx", "nan", "-NaN", "NANx", "", " ", "abc", ".5", "5.", ".", "-.", "+.5e", "1e", "1e+",
                     "1E-2", "1e-2.5", "1.5.5", "３", "٣", "1e39", "-1e39", "3.4028235e38", "3.4028236e38", "1e-46",
                     "1.401298464324817e-45", "7e-46", "0x10", "1_000", "- 1", "--1", "+-1", "1" * 400, "0." + "1" * 300,
                     "16777217", "0.1", "-3.3333333333333335", "1e99999", "-1e-99999", "é1", "1é"]),
    st.floats(allow_nan=False).map(repr),
    st.floats(width=32).map(lambda f: f"{f:.9g}"),
    st.integers(-10**30, 10**30).map(str),
    st.text(st.sampled_from("0123456789+-.eEinfatyINFATY \t\n\x0b\x0c\rx\u00e9\u0663"), max_size=12),
)


def _bits(v: float) -> bytes:
    return struct.pack("<d", v)


@SETTINGS
@given(score=_SCORES)
def test_scores_as_strtof(score):
    """The compiled table's scores are legacy.strtof's, bit for bit; a NaN score leaves the file to
    the pure class."""
    built = COMPILED.mnn_legacy_sp([(b"x", score, 1)])
    want = L.strtof(score)
    if math.isnan(want):
        assert built is None
    else:
        assert built is not None and _bits(built[0][0][1]) == _bits(want), (score, built[0][0], want)


# --- generated type 0 files -----------------------------------------------------------------------

_SP_UNITS = [L.META, b"a", b"b", b"c", b"\xc3\xa9", b"\xe4\xb8\xad", b"\xe2\x96", b"\xff", b"<", b"0x", b">"]
_SP_PIECES = st.one_of(
    st.lists(st.sampled_from(_SP_UNITS), min_size=1, max_size=4).map(b"".join),
    st.sampled_from([b"<0x%02X>" % b for b in (0x20, 0x61, 0x62, 0x80, 0xA9, 0xC3, 0xE2, 0xFF)]),
    st.binary(max_size=4),
)
_SP_SCORES = st.one_of(st.sampled_from(["0", "-1", "-2", "-1.5", "-0.0", "inf", "-inf", "nan", "1e39", "x"]), _SCORES)
_SP_KINDS = st.one_of(st.integers(1, 6), st.sampled_from([0, -1, 2**40, 2**70]))


@st.composite
def _sp_trees(draw):
    pieces = draw(st.lists(st.tuples(_SP_PIECES, _SP_SCORES, _SP_KINDS), max_size=24))
    return t.SentencePieceTxtFile(header=t.make_header(), pieces=pieces)


_SP_TEXT = st.one_of(
    st.lists(st.sampled_from([b" ", b"a", b"b", b"c", b"\xc3\xa9", b"\xe4\xb8\xad", b"\xe2\x96\x81", b"\xe2", b"\xc3",
                              b"\xff", b"<0x61>"]), max_size=24).map(b"".join),
    st.binary(max_size=24),
    st.text(max_size=16),
)


@SETTINGS
@given(tree=_sp_trees(), texts=st.lists(_SP_TEXT, min_size=1, max_size=4))
def test_type0_generated(tree, texts):
    pure, compiled = _encodes(tree, texts)
    assert pure == compiled


@SETTINGS
@given(tree=st.one_of(txt_files(file_type=0), txt_files(file_type=0, valid=False)),
       texts=st.lists(_SP_TEXT, min_size=1, max_size=3))
def test_type0_generated_files(tree, texts):
    pure, compiled = _encodes(tree, texts)
    assert pure == compiled


def test_type0_no_pieces_refused_alike():
    # no pieces: every piece is the unknown id 0, which MNN reads past the end of its pieces
    pure, compiled = _encodes(t.SentencePieceTxtFile(header=t.make_header(), pieces=[]), ["a b", ""])
    assert pure == compiled
    assert pure[1][0] == ("refused", "UndefinedInMnn", pure[1][0][2])


# --- generated type 3 files -----------------------------------------------------------------------

_HF_BYTES = b"ab c's\n\t1!\xc3\xa9\xe4\xb8\xad\xff\x00"
_MAPPED = [BYTE_MAP[b] for b in _HF_BYTES]
_SYMS = st.lists(st.sampled_from(_MAPPED), min_size=1, max_size=3).map(b"".join)
_FEW = [BYTE_MAP[b] for b in b"ab "]
_FEW_SYMS = st.one_of(st.sampled_from(_FEW), st.lists(st.sampled_from(_FEW), min_size=1, max_size=2).map(b"".join))
_JUNK = st.one_of(st.binary(max_size=8).filter(lambda b: b"\n" not in b),
                  st.sampled_from([b"#version: 0.2", b"a  b", b"a", b"", b" ", b"\xe4\xb8 \xad", b"\xed\xa0\x80 a",
                                   b"\xf5\x80\x80\x80 b", b"\xc4 \xa0", b"a b c"]))


@st.composite
def _hf_trees(draw):
    # (most from a small alphabet: repeated pairs, and words where one pair comes back)
    syms = st.one_of(_FEW_SYMS, _FEW_SYMS, _SYMS)
    pairs = draw(st.lists(st.tuples(syms, syms), max_size=16))
    tokens = draw(st.lists(st.one_of(_SYMS, st.binary(max_size=4)), max_size=12))
    if draw(st.integers(0, 3)):
        tokens += _MAPPED  # every byte's symbol (most of the time)
    tokens += [a + b for a, b in pairs if draw(st.integers(0, 5))]  # most merges give a token
    tokens = draw(st.permutations(tokens))
    merges = [a + b" " + b for a, b in pairs] + draw(st.lists(_JUNK, max_size=4))
    merges = draw(st.permutations(merges))
    return t.HuggingFaceTxtFile(header=t.make_header(), tokens=tokens, merges=merges, final_newline=True)


_HF_TEXT = st.one_of(
    st.text(st.sampled_from("ab "), max_size=30),
    st.lists(st.sampled_from([bytes([b]) for b in _HF_BYTES] + [b"'s", b"'ll", b"  ", b"\r\n", b"\xc3\xa9", b"\xe4\xb8\xad",
                                                              b"ab", b" ab"]), max_size=30).map(b"".join),
    st.binary(max_size=24),
    st.text(max_size=16),
)


@SETTINGS
@given(tree=_hf_trees(), texts=st.lists(_HF_TEXT, min_size=1, max_size=4))
def test_type3_generated(tree, texts):
    pure, compiled = _encodes(tree, texts)
    assert pure == compiled


@SETTINGS
@given(tree=st.one_of(txt_files(file_type=3), txt_files(file_type=3, valid=False)),
       texts=st.lists(_HF_TEXT, min_size=1, max_size=3))
def test_type3_generated_files(tree, texts):
    pure, compiled = _encodes(tree, texts)
    assert pure == compiled


def test_type3_small_alphabet_exhaustive():
    # every word of a and b up to 7 letters under random merge lists of short pairs (repeated pairs,
    # and pairs that come back in a word: ties between positions, the first line of a pair)
    syms = ["a", "b"] * 3 + ["".join(p) for p in itertools.product("ab", repeat=2)]  # single letters more often
    tokens = ["".join(p).encode() for n in range(1, 5) for p in itertools.product("ab", repeat=n)]
    words = ["".join(p) for n in range(1, 8) for p in itertools.product("ab", repeat=n)]
    rng = random.Random(24)
    for _ in range(100):
        merges = [f"{rng.choice(syms)} {rng.choice(syms)}".encode() for _ in range(rng.randint(1, 8))]
        tree = t.HuggingFaceTxtFile(header=t.make_header(), tokens=rng.sample(tokens, len(tokens)), merges=merges,
                                    final_newline=True)
        pure, compiled = _encodes(tree, words)
        assert pure == compiled, merges


def test_type3_long_word_and_refusal_cache():
    # a word past _LONG_TOKEN characters (the pure class's heap loop) and one past the vocabulary:
    # refused each time (a split that raises is not cached), the words around it still cached
    syms = [bytes([c]) for c in b"abc"]
    tokens = syms + [b"ab", b"abc", b"abcabc", b"\xc4\xa0abc"]
    merges = [b"a b", b"ab c", b"abc abc", b"\xc4\xa0 abc", b"c a"]  # "ca" is no token
    tree = t.HuggingFaceTxtFile(header=t.make_header(), tokens=tokens, merges=merges, final_newline=True)
    texts = ["abc" * 40, "abc abc", "ca", "abc ca", "abc ca", "abcabc " * 50]
    pure, compiled = _encodes(tree, texts)
    assert pure == compiled
    assert pure[1][2][0] == "refused" and pure[1][3] == pure[1][4] and pure[1][3][0] == "refused"
    assert pure[1][0][1] == [5] * 20


def test_type3_error_is_the_pure_one():
    tree = t.HuggingFaceTxtFile(header=t.make_header(), tokens=[b"a"], merges=[], final_newline=True)
    for tok in _tokenizers(tree):
        with pytest.raises(UndefinedInMnn, match="not in the vocabulary"):
            tok.encode("ab")
        assert tok.encode("aa") == [0, 0]


# --- type 2 (Bert) ----------------------------------------------------------------------------------

_BERT_PIECES = [b"a", b"ab", b"abc", b"b", b"##b", b"##c", b"##", b"##bc", b"[UNK]", b"!", b"\xe4\xb8\xad", b"\xc3\xa9",
                b"##\xe4\xb8\xad", b"\xff", b"1", b"A", b" "]


@SETTINGS
@given(tokens=st.lists(st.lists(st.sampled_from(_BERT_PIECES), min_size=1, max_size=3).map(b"".join), max_size=12),
       text=st.one_of(st.lists(st.sampled_from([*_BERT_PIECES, b"\t", b"B", b"\xe4", b"\xf0\x9f"]), max_size=12)
                      .map(b"".join), st.binary(max_size=30)))
def test_type2_generated(tokens, text):
    """The splitter and WordPiece of a legacy Bert file: duplicate tokens (the first line keeps
    one), tokens longer than any word, truncated characters, no [UNK] line."""
    tree = t.BertTxtFile(header=t.make_header(), tokens=tokens)
    pure, compiled = _tokenizers(tree)
    assert _model(pure)._compiled is None and _model(compiled)._compiled is not None
    pure_ids, compiled_ids = _encodes(tree, [text])
    assert pure_ids == compiled_ids
