"""The mnn models' compiled cores (``_csrc/mnn_models.c``) give what the pure models give: the same
ids and the same errors, on every corpus file and corpus text, and on generated models whose
vocabularies are unsorted, hold duplicate tokens or ids, holes, ids out of range, merges whose
ranks reach 10^9 or 2^31, and look-up keys longer than 0xFFFF."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec import speedups
from mtokspec.errors import Error
from mtokspec.format import build, parse
from mtokspec.format import tree as t
from mtokspec.format.table import Table
from mtokspec.runtime.mnn import models as M
from mtokspec.runtime.mnn.pre_tokenizers import BYTE_MAP
from mtokspec.testing.strategies import models as model_trees
from tests._support import CORPUS

COMPILED = speedups.module()
pytestmark = pytest.mark.skipif(COMPILED is None or not hasattr(COMPILED, "MnnBPE"),
                                reason="the compiled module is not built (or MTOKSPEC_PURE is set)")


def _outcome(fn):
    try:
        return ("ok", fn())
    except Error as e:
        return ("refused", type(e).__name__, str(e))




# --- the corpus ---------------------------------------------------------------------------------

def _corpus_texts() -> list[bytes]:
    out: list[bytes] = []
    for kind in ("en", "zh", "code", "mixed", "edge"):
        for v in json.loads((CORPUS / "text" / f"{kind}.json").read_text(encoding="utf-8")):
            out.append(bytes.fromhex(v["hex"]) if isinstance(v, dict) else v.encode("utf-8"))
    for kind in ("en", "zh", "code"):
        lines = (CORPUS / "text" / f"bench_{kind}.txt").read_text(encoding="utf-8").splitlines()
        out += [x.encode() for x in lines if x][:150]
    return out


_FILES = sorted(str(p.relative_to(CORPUS / "tok")) for p in CORPUS.glob("tok/*/mnn.*")
                if p.suffix in (".mtok", ".txt")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"reference corpus not found at {CORPUS}")
@pytest.mark.parametrize("name", _FILES or ["(none)"])
def test_corpus_files_same_ids(paths, name):
    texts = _corpus_texts()

    def encode():
        tok = mtokspec.Tokenizer.from_file(CORPUS / "tok" / name, semantics="mnn")
        vocab = getattr(getattr(tok, "model", None), "vocab", None)  # (legacy files have no model)
        return ([tok.encode(x) for x in texts], [tok.encode(x, add_special_tokens=False) for x in texts[:50]],
                None if vocab is None else type(vocab.core).__name__)

    pure, compiled = paths(encode)
    assert pure[0] == "ok" and compiled[0] == "ok"
    assert pure[1][:2] == compiled[1][:2]
    if name.endswith(".mtok"):  # the compiled path did run the cores
        assert (pure[1][2], compiled[1][2]) == ("NoneType", "MnnVocab")


# --- generated models ---------------------------------------------------------------------------

# tokens from a few parts, so that characters, joined pairs and byte pieces are found in the vocabulary
_PARTS = [b"a", b"b", b"ab", "é".encode(), b"\xe2\x96\x81", b"<0x61>", b"<0xC3>", b"<0xFF>", BYTE_MAP[ord("a")],
          BYTE_MAP[0xC3], BYTE_MAP[0x20], b"##", b"\xc3", b"\xff", b" "]
_TOKENS = st.lists(st.sampled_from(_PARTS), min_size=1, max_size=3).map(b"".join)
_TEXT = st.one_of(st.lists(st.sampled_from(_PARTS + [b"c", "中".encode(), b"\x80"]), max_size=12).map(b"".join),
                  st.binary(max_size=16))
_RANKS = st.one_of(st.integers(0, 20), st.sampled_from([999_999_999, 1_000_000_000, 2**31 - 1, 2**31, 2**32 - 1]))


@st.composite
def _rows(draw, scores: bool = False):
    """Vocabulary rows: duplicate tokens and ids, holes, sorted or not; sometimes an id out of range."""
    tokens = draw(st.lists(_TOKENS, max_size=14))
    n = len(tokens)
    if draw(st.booleans()):
        tokens.sort()
    if n and draw(st.integers(0, 9)) == 0:
        ids = draw(st.lists(st.one_of(st.integers(0, n), st.sampled_from([2**31, 2**32 - 1])), min_size=n, max_size=n))
    elif draw(st.booleans()):
        ids = list(draw(st.permutations(range(n))))
    else:
        ids = draw(st.lists(st.integers(0, max(n - 1, 0)), min_size=n, max_size=n))  # duplicates and holes
    if scores:
        vals = draw(st.lists(st.one_of(st.floats(-20, 5, width=32), st.sampled_from([0.0, -1.0, -10.0])),
                             min_size=n, max_size=n))
        return [(a, b, c) for a, b, c in zip(tokens, ids, vals)]
    return list(zip(tokens, ids))


@st.composite
def _bpe(draw):
    rows = draw(_rows())
    n = len(rows)
    merges = draw(st.lists(st.tuples(st.integers(0, n + 1), st.integers(0, n + 1), _RANKS), max_size=16))
    if draw(st.booleans()):
        merges.sort()
    return t.BPEModel(draw(st.booleans()), False, rows, merges)


@st.composite
def _wordpiece(draw):
    rows = draw(_rows())
    unk = draw(st.one_of(st.sampled_from([r[0] for r in rows] or [b"a"]), _TOKENS)).decode("utf-8", "surrogateescape")
    return t.WordPieceModel(unk, draw(st.sampled_from(["", "##", "a"])),
                            draw(st.one_of(st.integers(0, 12), st.just(100), st.just(2**32 - 1))), rows)


@st.composite
def _unigram(draw):
    rows = draw(_rows(scores=True))
    unk = draw(st.one_of(st.integers(0, len(rows) + 1), st.just(2**32 - 1)))
    return t.UnigramModel(unk, draw(st.booleans()), rows)


def _run_model(node, texts):
    model = M.from_tree(node)
    single = [_outcome(lambda x=x: model.tokenize(x)) for x in texts]
    out: list[int] = []
    batch = _outcome(lambda: (model.tokenize_pieces(list(texts), out), out)[1])
    found = [model.vocab.token_to_id(x) for x in texts]
    return single, batch, found, list(model.vocab.id_to_token)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(node=st.one_of(_bpe(), _wordpiece(), _unigram()), texts=st.lists(_TEXT, max_size=6))
def test_generated_models_same(paths, node, texts):
    pure, compiled = paths(lambda: _run_model(node, texts))
    assert pure == compiled


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(node=model_trees(valid=False), texts=st.lists(_TEXT, max_size=4))
def test_library_model_strategies_same(paths, node, texts):
    pure, compiled = paths(lambda: _run_model(node, texts))
    assert pure == compiled


def test_unigram_scores_minus_one_is_refused_alike(paths):
    # byte fallback finds no <0xHH> piece and the unknown id is -1 (u32 2^32-1): MNN reads scores[-1]
    node = t.UnigramModel(2**32 - 1, True, [(b"a", 0, -1.0), (b"b", 1, -2.0)])
    pure, compiled = paths(lambda: _run_model(node, [b"ab", b"ac", b"\xff", b""]))
    assert pure == compiled
    assert pure[1][0][2][0] == "refused" and pure[1][0][2][1] == "UndefinedInMnn"


def test_bpe_merge_matches_the_pure_loop(paths):
    vocab = [(b"a", 0), (b"b", 1), (b"ab", 2), (b"ba", 3), (b"aba", 4), (b"abab", 5)]
    merges = [(0, 1, 3), (1, 0, 1), (2, 0, 2), (2, 2, 0), (4, 1, 1_000_000_000), (3, 3, 5)]

    def merge(ids):
        model = M.BPE(t.BPEModel(False, False, vocab, merges))
        return model._merge(list(ids)) if model.core is None else model.core.merge(ids)

    for ids in ([0, 1, 0, 1], [1, 0, 1, 0, 1], [0, 1] * 9, [2, 2, 0, 1], [3, 3, 0], [1], []):
        pure, compiled = paths(lambda: merge(ids))
        assert pure[0] == "ok" and pure == compiled, ids


# --- look-up keys longer than 0xFFFF ------------------------------------------------------------

_LONG = b"a" * 0x10002  # MNN looks it up as its first 0x10002 & 0xFFFF = 2 bytes


@pytest.mark.parametrize("kind", ["bpe", "wordpiece", "unigram"])
def test_long_keys_are_cut(paths, kind):
    rows = [(b"a", 0), (b"aa", 1), (b"b", 2), (_LONG + b"b", 3), (b"ab", 4)]
    if kind == "bpe":
        node = t.BPEModel(False, False, rows, [(0, 0, 0), (1, 1, 1), (1, 0, 2), (0, 1, 3), (3, 2, 4)])
    elif kind == "wordpiece":
        node = t.WordPieceModel("b", "", 2**32 - 1, rows)
    else:
        node = t.UnigramModel(2, True, [(tok, i, -float(i)) for tok, i in rows])
    texts = [_LONG, _LONG + b"b", b"a" * 0x10001 + b"b", b"ab" * 5]
    pure, compiled = paths(lambda: _run_model(node, texts))
    assert pure[0] == "ok" and pure == compiled
    assert pure[1][2][0] == 1  # the long key found "aa"


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(node=st.one_of(_bpe(), _wordpiece(), _unigram()), texts=st.lists(_TEXT, max_size=4))
def test_models_read_from_file_bytes_same(paths, node, texts):
    """The same through a file's bytes: the tables are then the codec's (columns, raw merge rows)."""
    try:
        data = build(t.MtokFile(model=node))
    except Error:  # a model the format cannot hold (a unk_token not UTF-8...)
        return
    assert isinstance(parse(data).model.vocab, Table)
    pure, compiled = paths(lambda: _run_model(parse(data).model, texts))
    assert pure == compiled


# --- tables read where they are stored (Table.string_index) ----------------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.lists(st.tuples(st.binary(max_size=300), st.binary(min_size=7, max_size=7)), max_size=12),
       split=st.integers(0, 7), cut=st.integers(0, 40), pad=st.integers(0, 3))
def test_string_index_walks_as_string_table(rows, split, cut, pad):
    """``string_index`` checks what ``string_table`` checks; its (offset, length) pairs cut out the
    same strings and its fixed fields are the same bytes (a cut table: None from both)."""
    data = b"\0" * pad + b"".join(f[:split] + len(s).to_bytes(2, "little") + s + f[split:] for s, f in rows)
    end = max(pad, len(data) - cut)
    args = (data, pad, end, len(rows), split, 7 - split, (1,) * 7)
    table, index = COMPILED.string_table(*args), COMPILED.string_index(*args)
    assert (table is None) == (index is None)
    if table is not None:
        assert index[1:] == table[1:]
        assert COMPILED.strings_at(data[pad:pad + index[2]], index[0]) == table[0]


def test_strings_at_refuses_an_index_past_the_bytes():
    with pytest.raises(ValueError):
        COMPILED.strings_at(b"abc", (2).to_bytes(4, "little") * 2)
    with pytest.raises(ValueError):
        COMPILED.strings_at(b"abc", b"\0" * 7)


def _vocab_probe(vocab, rows):
    n = len(rows)
    keys = [r[0] for r in rows] + [b"", b"zz", b"a" * 0x10001]
    return ([vocab.find(k) for k in keys], vocab.id_to_token(), [vocab.token(i) for i in range(-2, n + 2)],
            vocab.token(2**70), vocab.max_len(), vocab.row_lengths(), vocab.size)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(node=st.one_of(_bpe(), _wordpiece(), _unigram()))
def test_vocab_from_stored_table_same(node):
    """MnnVocab over a parsed table's bytes (no object per row) is the MnnVocab over its columns:
    the same look-ups, tokens and refusals; so is MnnUnigram given the scores' typed column."""
    try:
        data = build(t.MtokFile(model=node))
    except Error:
        return
    table = parse(data).model.vocab
    stored = table.string_index()
    assert stored is not None  # the compiled walk kept the rows' places
    raw, index, typed = stored
    tokens, ids = table.columns()[:2]
    assert list(typed[1]) == list(ids) and typed[0] is None
    outcomes = []
    for make in (lambda: COMPILED.MnnVocab(tokens, ids), lambda: COMPILED.MnnVocab(raw, typed[1], index)):
        try:
            v = make()
        except ValueError as e:
            outcomes.append(("ValueError", str(e)))
            continue
        out = _vocab_probe(v, list(zip(tokens, ids)))
        if isinstance(node, t.UnigramModel):
            cores = [COMPILED.MnnUnigram(v, scores, 0, False, [1], M.BYTE_PIECES, lambda s: [])
                     for scores in (table.columns()[2], typed[2])]
            out += (cores[0].scores(), cores[1].scores())
        outcomes.append(out)
    assert outcomes[0] == outcomes[1]
    if isinstance(node, t.UnigramModel) and not isinstance(outcomes[0][0], str):
        assert outcomes[0][-1] == outcomes[0][-2]


def test_vocab_refuses_an_index_it_cannot_read():
    raw = b"\0\0ab"
    index = (2).to_bytes(4, "little") + (2).to_bytes(4, "little")
    assert COMPILED.MnnVocab(raw, memoryview(bytes(4)).cast("I"), index).find(b"ab") == 0
    with pytest.raises(ValueError):  # past the bytes
        COMPILED.MnnVocab(raw, memoryview(bytes(4)).cast("I"), (3).to_bytes(4, "little") * 2)
    with pytest.raises(TypeError):  # ids of another width
        COMPILED.MnnVocab(raw, bytes(4), index)
    with pytest.raises(ValueError):  # an id outside the table
        COMPILED.MnnVocab(raw, memoryview((1).to_bytes(4, "little")).cast("I"), index)
    with pytest.raises(ValueError):  # one id per row
        COMPILED.MnnVocab(raw, memoryview(bytes(8)).cast("I"), index)
