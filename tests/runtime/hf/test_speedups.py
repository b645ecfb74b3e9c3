"""The compiled parts (``mtokspec._speedups``) give what the pure-Python code gives.

The pure path is the reference (HF parity and the codec's checks are tested on it and on the
compiled path, through ``conftest.runtime_path``).  Here the two are compared directly: the parse of
every corpus file and of generated, cut and corrupted files (the same tree, or the same error); every
corpus tokenizer with the corpus texts and the bench files' lines, and hypothesis-generated models
and whole trees with generated text (the same ids, or the same error).  Skipped where the module is
not built (a machine without a C compiler) or ``MTOKSPEC_PURE`` is set.
"""

from __future__ import annotations

import dataclasses
import json
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.testing import strategies as mst
from mtokspec.format import tree as t
from mtokspec import speedups
from mtokspec import Tokenizer
from mtokspec.runtime.hf.models import BPE, Unigram
from tests._support import CORPUS

pytestmark = pytest.mark.skipif(not speedups.enabled(),
                                reason="the compiled module mtokspec._speedups is not built here (or MTOKSPEC_PURE is set)")


def _set_path(model, compiled: bool) -> None:
    if isinstance(model, (BPE, Unigram)):
        model._core = model._accel() if compiled else False
        if compiled:
            assert model._core, "the compiled core refused a table it should hold"


def _outcome(f, *args):
    try:
        return "ok", f(*args)
    except Exception as e:  # the same error on both paths: type and message
        return type(e).__name__, str(e)


def _two(make):
    """Two fresh objects from ``make()``: the pure one and the compiled one."""
    pure, comp = make(), make()
    _set_path(pure.model if isinstance(pure, Tokenizer) else pure, False)
    _set_path(comp.model if isinstance(comp, Tokenizer) else comp, True)
    return pure, comp


@contextmanager
def _pure():
    saved = speedups._module
    speedups._module = None
    try:
        yield
    finally:
        speedups._module = saved


def _parse_both(data: bytes):
    compiled = _outcome(mtokspec.parse, data)
    with _pure():
        pure = _outcome(mtokspec.parse, data)
    return compiled, pure


# --- the corpus -----------------------------------------------------------------------------------

def _corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(CORPUS.glob("tok/*/mnn.mtok")) + sorted(CORPUS.glob("tok/*/mnn.txt"))


def _corpus_texts() -> list[str]:
    out: list[str] = []
    for f in sorted((CORPUS / "text").glob("*.json")):
        if f.name != "SOURCES.json":
            out += json.loads(f.read_text(encoding="utf-8"))
    for f in sorted((CORPUS / "text").glob("bench_*.txt")):
        with open(f, encoding="utf-8") as fh:
            lines = [s for s in dict.fromkeys(fh.read().splitlines()) if s]
        out += lines[:3000]
    return out


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_parse_identical(path):
    data = path.read_bytes()
    compiled, pure = _parse_both(data)
    assert compiled[0] == "ok" and compiled == pure
    # cut anywhere: the same error (fewer cuts of the text files: their pure parse is slower)
    for cut in range(0, len(data), max(1, len(data) // (97 if path.suffix == ".mtok" else 23))):
        compiled, pure = _parse_both(data[:cut])
        assert compiled == pure, cut


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_identical(path):
    data = path.read_bytes()
    pure, comp = _two(lambda: Tokenizer.from_bytes(data))
    texts = _corpus_texts()
    assert texts
    for text in texts:
        assert comp.encode(text) == pure.encode(text), text
    for text in texts[:500]:
        assert comp.encode(text, add_special_tokens=True) == pure.encode(text, add_special_tokens=True), text
    # warm: the same texts again, from the caches each path filled
    assert [comp.encode(s) for s in texts[:2000]] == [pure.encode(s) for s in texts[:2000]]


# --- generated files ------------------------------------------------------------------------------

@settings(max_examples=300)
@given(st.one_of(mst.mtok_bytes(valid=True), mst.mtok_bytes(valid=False), mst.txt_bytes()), st.data())
def test_parse_identical(data, draw):
    compiled, pure = _parse_both(data)
    assert compiled == pure
    if data:  # cut, and a byte changed: the same tree or the same error (offset and field)
        cut = draw.draw(st.integers(0, len(data) - 1))
        compiled, pure = _parse_both(data[:cut])
        assert compiled == pure
        i = draw.draw(st.integers(0, len(data) - 1))
        bad = data[:i] + bytes([draw.draw(st.integers(0, 255))]) + data[i + 1:]
        compiled, pure = _parse_both(bad)
        assert compiled == pure


# --- generated models -----------------------------------------------------------------------------

_CHARS = "ab c\u2581\u00e9\u4e2d\n\U0001f600"
_TEXT = st.text(st.one_of(st.sampled_from(_CHARS), st.characters()), max_size=40)
_TOKEN = st.text(st.sampled_from(_CHARS), min_size=1, max_size=3)
_BYTE_TOKENS = [b"<0x%02X>" % b for b in (0x20, 0x61, 0xC3, 0xA9, 0xE4, 0xB8, 0xAD, 0xF0, 0x9F, 0x98, 0x80)]


@st.composite
def _bpe_models(draw) -> t.BPEModel:
    """Vocabularies from a small alphabet (and byte tokens) so merges apply; some merge outputs are
    left out of the vocabulary or name ids it does not have (both paths must fail alike)."""
    toks = sorted(set(draw(st.lists(_TOKEN, min_size=1, max_size=10))))
    btoks = [b.decode() for b in draw(st.lists(st.sampled_from(_BYTE_TOKENS), max_size=8, unique=True))]
    toks = list(dict.fromkeys(toks + btoks))
    merges = []
    for r in range(draw(st.integers(0, 16))):
        a, b = draw(st.sampled_from(toks)), draw(st.sampled_from(toks))
        if draw(st.integers(0, 9)) or a + b in toks:
            toks.append(a + b) if a + b not in toks else None
        merges.append((a, b, r))
    vocab = sorted({s.encode() for s in toks})
    ids = draw(st.permutations(range(len(vocab))))
    tid = {v.decode(): i for v, i in zip(vocab, ids)}
    rows = sorted((tid[a], tid[b], r) for a, b, r in merges)
    if draw(st.integers(0, 9)) == 0:
        rows.append((len(vocab) + 3, 0, len(rows)))  # an id the vocabulary does not have
    return t.BPEModel(draw(st.booleans()), draw(st.booleans()), list(zip(vocab, ids)), rows)


@settings(max_examples=300)
@given(st.one_of(_bpe_models(), mst.bpe_models(valid=True), mst.bpe_models(valid=False)),
       st.lists(_TEXT, min_size=1, max_size=6), st.booleans())
def test_bpe_identical(node, words, map_bytes):
    pure, comp = _two(lambda: BPE.from_tree(node))
    for m in (pure, comp):
        m.map_bytes = map_bytes
    for w in words:
        assert _outcome(comp.tokenize, w) == _outcome(pure.tokenize, w), w
    text = "".join(words)

    def whole(m):
        out: list[int] = []
        m.tokenize_text(text, out)
        return out

    def pieces(m):
        out: list[int] = []
        m.tokenize_pieces(words, out)
        return out
    assert _outcome(whole, comp) == _outcome(whole, pure)
    assert _outcome(pieces, comp) == _outcome(pieces, pure)


_SCORE = st.one_of(st.sampled_from([-1.0, -1.5, -2.0, -2.5, -3.0]), st.floats(-30.0, 0.0, allow_nan=False))
_NOT_UTF8 = [b"\xff", b"\x80", b"\xe4\xb8", b"\xc0\xaf", b"\xed\xa0\x80", b"a\xff", b"\xe4\xb8\xad\xe4"]


@st.composite
def _unigram_models(draw) -> t.UnigramModel:
    """Pieces from the alphabet (score ties likely), byte tokens, pieces that are not UTF-8, an unk id
    that may be a real piece's."""
    toks = {s.encode() for s in draw(st.lists(_TOKEN, min_size=1, max_size=14))}
    toks |= set(draw(st.lists(st.sampled_from(_BYTE_TOKENS + _NOT_UTF8), max_size=6)))
    toks = sorted(toks)
    ids = draw(st.permutations(range(len(toks))))
    scores = draw(st.lists(_SCORE, min_size=len(toks), max_size=len(toks)))
    unk = draw(st.integers(0, len(toks)))
    return t.UnigramModel(unk, draw(st.booleans()), list(zip(toks, ids, scores)))


@st.composite
def _tie_models(draw) -> t.UnigramModel:
    """Pieces of two letters with whole scores: most texts have several best segmentations, and
    the first best must win on both paths."""
    toks = sorted({s.encode() for s in draw(st.lists(st.text("ab", min_size=1, max_size=4), min_size=1, max_size=12))})
    scores = draw(st.lists(st.sampled_from([-1.0, -2.0, -3.0, -4.0]), min_size=len(toks), max_size=len(toks)))
    return t.UnigramModel(len(toks), False, [(tok, i, sc) for i, (tok, sc) in enumerate(zip(toks, scores))])


@settings(max_examples=300)
@given(st.one_of(_unigram_models(), _tie_models(), mst.unigram_models(valid=True), mst.unigram_models(valid=False)),
       st.lists(st.one_of(_TEXT, st.text("ab", max_size=12)), min_size=1, max_size=6), st.booleans())
def test_unigram_identical(node, words, serde):
    pure, comp = _two(lambda: Unigram.from_tree(node, serde_scores=serde))
    for w in words:
        assert _outcome(comp.tokenize, w) == _outcome(pure.tokenize, w), w


@settings(max_examples=200)
@given(st.one_of(mst.mtok_files(valid=True),
                 st.builds(lambda m, f: dataclasses.replace(f, model=m), _bpe_models(), mst.mtok_files())),
       st.lists(_TEXT, min_size=1, max_size=4), st.booleans())
def test_tokenizer_identical(tree, texts, from_bytes):
    """Whole trees, from the tree or from its bytes (then the core reads the stored merge rows)."""
    data = mtokspec.build(tree) if from_bytes else None

    def make():
        return Tokenizer.from_bytes(data) if data is not None else Tokenizer.from_tree(tree)

    try:
        make()
    except Exception as e:  # a tree the runtime refuses: refused alike, nothing to compare
        assert _outcome(make) == (type(e).__name__, str(e))
        return
    pure, comp = _two(make)
    for text in texts:
        assert _outcome(comp.encode, text, True) == _outcome(pure.encode, text, True), text


_SP_PARTS = st.sampled_from(["\u2581".encode(), b"a", b"\n", b"\xe2", b"\x96\x81", b"\xff", "é".encode(), b""])


@settings(max_examples=300)
@given(st.lists(st.lists(_SP_PARTS, max_size=5).map(b"".join), max_size=8, unique=True))
def test_sp_crossing_identical(tokens):
    """The compiled check of "a token has ▁ right after another character" answers as the pure one
    (``BPE._sp_crossing``, which decides whether SentencePiece text may be cut before each ▁)."""
    from mtokspec import _speedups

    model = BPE({tok: i for i, tok in enumerate(tokens)}, [])
    assert _speedups.sp_crossing(model.bvocab) == model._sp_crossing()


def _line_table_pure(block: bytes, n: int, kinds: str, open_end: bool):
    """What the codec's exact loop reads from ``block`` (codec_support's decoders), as line_table
    gives it, or None where the loop raises."""
    from mtokspec._generated import codec
    from mtokspec.format import codec_support as cs
    from mtokspec.errors import MtokFormatError

    decode = {"b": lambda v: cs.decode_base64(v, 0, "x"), "w": lambda v: cs.decode_word(v, 0, "x"),
              "i": lambda v: cs.decode_decimal(v, 0, "x", codec._DECIMAL), "r": lambda v: v}
    cols: list[list] = [[] for _ in kinds]
    p, final = 0, 1
    try:
        for i in range(n):
            q = block.find(b"\n", p)
            if q < 0:
                if not (open_end and i == n - 1 and p < len(block)):
                    return None
                q, final = len(block), 0
            parts = block[p:q].split(b" ") if len(kinds) > 1 else [block[p:q]]
            if len(parts) != len(kinds):
                return None
            for col, kind, v in zip(cols, kinds, parts):
                col.append(decode[kind](v))
            p = q + 1
    except MtokFormatError:
        return None
    return tuple(cols), (p if final else len(block)), final


_B64ISH = st.text("QUJDYWJjMDE5+/=  ", max_size=9).map(str.encode)
_FIELD = st.one_of(_B64ISH, st.sampled_from([b"0", b"-0", b"01", b"-12", b"7" * 25, b"x", b"\xff", "é".encode(), b""]),
                   st.binary(max_size=4).filter(lambda v: b"\n" not in v))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 3).flatmap(lambda k: st.lists(
    st.tuples(*[st.one_of(st.binary(max_size=3), st.text(max_size=3), st.integers(), st.just([1]))] * k),
    max_size=5).map(lambda rows: (k, rows))))
def test_rows_are_zip_and_untracked_when_plain(case):
    """rows(columns) is list(zip(*columns)); a row of bytes, str and int is left to no collector
    pass, a row holding a list stays tracked."""
    import gc

    from mtokspec import _speedups

    k, rows = case
    columns = [[row[c] for row in rows] for c in range(k)]
    got = _speedups.rows(columns)
    assert got == list(zip(*columns)) if k else got == []
    for row in got:
        assert gc.is_tracked(row) == any(isinstance(v, list) for v in row)
    with pytest.raises(ValueError):
        _speedups.rows([[1], []])


@settings(max_examples=500)
@given(st.lists(st.lists(_FIELD, min_size=1, max_size=3).map(b" ".join), max_size=5),
       st.sampled_from(["b", "i", "w", "r", "bwi", "rr"]), st.booleans(), st.booleans(), st.integers(0, 1))
def test_line_table_identical(lines, kinds, open_end, drop_last_newline, extra):
    """The compiled reader of the text formats' line tables accepts exactly the lines the codec's
    exact loop accepts (canonical padded base64, the decimal grammar, strict UTF-8, the number of
    values per line), with the same values and end."""
    from mtokspec import _speedups

    block = b"".join(s + b"\n" for s in lines)
    if drop_last_newline and block:
        block = block[:-1]
    n = len(lines) + extra - (1 if extra and lines else 0)
    want = _line_table_pure(block, n, kinds, open_end)
    got = _speedups.line_table(block, 0, len(block), n, kinds, open_end)
    if got is not None:
        got = (tuple(got[0]), got[1], got[2])
    assert got == want
    for good in (b"YQ==", b"YWI=", b"YWJj", b""):  # canonical: read
        assert _speedups.line_table(good + b"\n", 0, len(good) + 1, 1, "b", False)[0][0] == [_line_table_pure(good + b"\n", 1, "b", False)[0][0][0]]
    for bad in (b"YR==", b"YWJ=", b"YQ=", b"Y===", b"YQ==YQ==", b"Y Q=", b"YQ=\x00"):  # not canonical: refused
        assert _speedups.line_table(bad + b"\n", 0, len(bad) + 1, 1, "b", False) is None
    # the decimal grammar, its digit bound (spec/_dsl.py DIGITS) included
    for text in (b"0", b"-12", b"7" * 25, b"01", b"-0", b"", b"+1", b"1 2", b"1_0", b"9" * 10, b"-" + b"9" * 10,
                 b"1" + b"0" * 10, b"-1" + b"0" * 10, b"9" * 5000):
        want = _line_table_pure(text + b"\n", 1, "i", False)
        got = _speedups.line_table(text + b"\n", 0, len(text) + 1, 1, "i", False)
        assert (got and (tuple(got[0]), got[1], got[2])) == want, text


def test_sp_chunks_only_when_the_marker_is_a_token():
    # "▁" is no token and there is no unknown token: it vanishes from the symbols and the "a"s on
    # both sides merge (here into a text the vocabulary lacks), so cutting before it is not exact
    node = t.BPEModel(False, False, [(b"a", 0)], [(0, 0, 0), (4, 0, 1)])
    pure, comp = _two(lambda: BPE.from_tree(node))

    def whole(m):
        out: list[int] = []
        m.tokenize_text("a▁a", out)
        return out
    assert _outcome(whole, comp) == _outcome(whole, pure) == _outcome(pure.tokenize, "a▁a")
    assert _outcome(whole, pure)[0] == "TokenizerError"
