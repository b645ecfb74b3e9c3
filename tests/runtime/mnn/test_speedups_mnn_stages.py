"""The mnn semantics' compiled stages (``_csrc/mnn_stages.c``: the Bert and table normalizers, the
Bert, ByteLevel and Metaspace pre-tokenizers, the regex scan's fold and cut, the special-token and
added-token splits) give what the pure stages give: the same
bytes and the same refusals on generated stage trees and bytes (any bytes: invalid UTF-8 included),
and the same ids on every corpus file and text."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec import speedups
from mtokspec.format import tree as t
from mtokspec.runtime.mnn import normalizers as N
from mtokspec.runtime.mnn import pre_tokenizers as P
from mtokspec.runtime.mnn import regex as R
from mtokspec.runtime.shared.text import GPT2_PATTERN
from mtokspec.runtime.mnn.pipeline import PipelineTokenizer
from mtokspec.runtime.shared.bounds import REGEX_STEPS, REGEX_STEPS_PER_BYTE, budget
from mtokspec.testing.strategies import SPLIT_PATTERNS, mtok_files, normalizers, pre_tokenizers
from tests._support import CORPUS

COMPILED = speedups.module()
pytestmark = pytest.mark.skipif(COMPILED is None or not hasattr(COMPILED, "mnn_stages_init"),
                                reason="the compiled module is not built (or MTOKSPEC_PURE is set)")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))




# characters the stages treat apart: white space (ASCII, Zs, not Zl), controls, format characters,
# marks, punctuation (ASCII and not), Chinese (BMP and beyond), letters with a lower case, U+FFFD,
# NUL, and characters around the ranges' edges
_SPECIAL = ("\t\n\r\x0b\x0c \x00\x01\x1f\x7f\x80\x9f\xa0\u1680\u2000\u200a\u2028\u2029\u3000\u200b\u200d\ufeff"
            "\u0301\u0300\u20dd\u0903!,.?-_~\u00a1\u00bf\u2014\u3001\u300c\uff01"
            "\u4e00\u9fff\u3400\u4dbf\u4dc0\uf900\ufaff\u2f800\U00020000\U0002a6df\U0002a6e0\U0002fa1f"
            "AZaz\u00c0\u00c9\u0130\u0391\u0410\u1e9e\u2c2f\U00010400\U0001e900\ufffd\u00e9e\u0065\u0301")
_TEXT = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=30),
    st.text(st.sampled_from(_SPECIAL), max_size=30),
    st.text(st.one_of(st.sampled_from(_SPECIAL), st.characters(codec="utf-8")), max_size=30),
)
# bytes: UTF-8 text, any bytes, and the two mixed (truncated, overlong and surrogate sequences too)
_BYTES = st.one_of(
    _TEXT.map(lambda s: s.encode()),
    st.binary(max_size=30),
    st.lists(st.one_of(_TEXT.map(lambda s: s.encode()), st.binary(max_size=4),
                       st.sampled_from([b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xe4\xb8", b"\xf0\x9f"])),
             max_size=6).map(b"".join),
)
_CP = st.one_of(st.sampled_from([ord(c) for c in _SPECIAL]), st.integers(0, 0x10FFFF), st.integers(-3, 2**32 - 1),
                st.sampled_from([-2**70, 2**64, 2**100]))
# rows in any order, repeated code points and bytes that are not UTF-8 included (MNN's binary search
# gives its answer whatever the order)
_ROWS = st.lists(st.tuples(_CP, st.one_of(_TEXT.map(lambda s: s.encode()[:8]), st.binary(max_size=6))), max_size=12)


def _bert_trees():
    flags = st.tuples(*[st.booleans()] * 4)
    return st.one_of(
        flags.map(lambda f: t.BertNormalizer(*f)),
        st.builds(lambda f, rows: t.BertNFDNormalizer(f[0], f[1], f[2], f[3], rows), flags, _ROWS),
        st.builds(t.TableNormalizer, table=_ROWS),
    )


def _normalize(node, text: bytes) -> bytes:
    n = N.from_tree(node)
    return text if n is None else n.normalize(text)


@SETTINGS
@given(node=_bert_trees(), text=_BYTES)
def test_bert_and_table_normalizers(paths, node, text):
    pure, compiled = paths(lambda: _normalize(node, text))
    assert pure == compiled


@SETTINGS
@given(node=normalizers(), text=_BYTES)
def test_generated_normalizer_trees(paths, node, text):
    pure, compiled = paths(lambda: _normalize(node, text))
    assert pure == compiled


def _pre_tokenize(node, splits: list[bytes]) -> list[bytes]:
    p = P.from_tree(node)
    return splits if p is None else p.pre_tokenize(splits)


@SETTINGS
@given(node=st.one_of(st.just(t.BertPreTokenizer()), st.booleans().map(t.ByteLevelPreTokenizer), pre_tokenizers()),
       splits=st.lists(_BYTES, max_size=4))
def test_pre_tokenizers(paths, node, splits):
    pure, compiled = paths(lambda: _pre_tokenize(node, splits))
    assert pure == compiled


_PATTERNS = st.sampled_from([*SPLIT_PATTERNS, GPT2_PATTERN, r"\p{P}+|\p{M}|\p{S}", r"[^\p{L}\p{N}\s]+", "-", "a"])


@SETTINGS
@given(pattern=_PATTERNS, text=_BYTES, invert=st.booleans(),
       behavior=st.sampled_from(["Removed", "MergedWithPrevious", "Isolated", "Contiguous"]))
def test_regex_scan_and_split(paths, pattern, text, invert, behavior):
    """MNN's regex scan and split: the folded text and the cut at the matches."""
    p = pattern.encode()
    pure, compiled = paths(lambda: (R.scan(text, p), R.split(text, p, invert, behavior)))
    assert pure == compiled


@SETTINGS
@given(pattern=_PATTERNS, text=_BYTES)
def test_byte_level_scan_in_one_call(paths, pattern, text):
    """ByteLevel's fused call (fold, matcher, cut, map), under the call's budget and with the steps
    counted by the caller: the pure scan's pieces, mapped, and the steps the budget keeps."""
    p = pattern.encode()

    def fused_or_pure():
        scans = R.scan_compiled(p)
        if scans is None:
            return [P.byte_level_map(x) for x in R.scan(text, p)]
        scan_mapped, scan_counted = scans
        with budget(len(text)) as st:
            pieces = scan_mapped(text) if text else []
            left = st.steps
        counted, counted_left = scan_counted(text, REGEX_STEPS + REGEX_STEPS_PER_BYTE * len(text), len(text)) \
            if text else ([], left)
        assert (counted, counted_left) == (pieces, left)
        return pieces
    pure, compiled = paths(fused_or_pure)
    assert pure == compiled


@pytest.mark.parametrize("entry", ["scan_mapped", "scan_counted"])
def test_byte_level_scan_in_one_call_refuses_as_the_pure_scan(paths, entry):
    p, text = b"a*a*a*a*a*a*b", b"a" * 200 + b"!"

    def scan():
        scans = R.scan_compiled(p)
        if scans is None:
            return R.scan(text, p)
        if entry == "scan_mapped":
            return scans[0](text)
        return scans[1](text, REGEX_STEPS + REGEX_STEPS_PER_BYTE * len(text), len(text))
    pure, compiled = paths(scan)
    assert pure == compiled and pure[0] == "refused"


_WORDPIECE = t.MtokFile(model=t.WordPieceModel("[UNK]", "##", 100, [(b"[UNK]", 0)]))
_SPECIAL_ALPHABET = st.sampled_from([b"\0", b"<", b">", b"a", b"ab", b"\xe4\xb8\xad", b"\xff", b" "])


@SETTINGS
@given(specials=st.lists(st.lists(_SPECIAL_ALPHABET, max_size=4).map(b"".join), max_size=5),
       text=st.lists(_SPECIAL_ALPHABET, max_size=20).map(b"".join))
def test_split_specials(paths, specials, text):
    """The split at special texts, NUL bytes in them too (MNN compares with ``strncmp``)."""
    def split():
        tok = PipelineTokenizer(_WORDPIECE)
        tok.special_ids = list(range(len(specials)))
        tok._decode_one = specials.__getitem__
        return tok.split_specials(text)

    pure, compiled = paths(split)
    assert pure == compiled


_ADDED_ALPHABET_CHARS = ["a", "b", "ab", "<", "|>", " ", "\t", "\n", "中", "é", "\x00"]
_ADDED_ALPHABET = st.sampled_from(_ADDED_ALPHABET_CHARS)
_ADDED = st.lists(st.builds(t.AddedToken, id=st.integers(-5, 2**32 - 1), special=st.booleans(), lstrip=st.booleans(),
                            rstrip=st.booleans(), content=st.lists(_ADDED_ALPHABET, max_size=3).map("".join)),
                  max_size=8)


@SETTINGS
@given(added=_ADDED, data=st.data())
def test_added_split(paths, added, data):
    """The cut at added tokens: earliest, then longest, the first token of a content, white space
    eaten by lstrip/rstrip; empty and repeated contents too."""
    pieces = [a.content.encode() for a in added if a.content] + [c.encode() for c in _ADDED_ALPHABET_CHARS]
    text = data.draw(st.one_of(st.lists(st.sampled_from(pieces), max_size=12).map(b"".join), _BYTES))
    tree = t.MtokFile(model=_WORDPIECE.model, added_tokens=added)
    pure, compiled = paths(lambda: PipelineTokenizer(tree).added_split(text))
    assert pure == compiled


@SETTINGS
@given(tree=mtok_files(), text=_TEXT)
def test_generated_files_same_ids(paths, tree, text):
    pure, compiled = paths(lambda: mtokspec.Tokenizer.from_tree(tree, semantics="mnn").encode(text))
    assert pure == compiled


@pytest.mark.parametrize("node", [
    t.SequenceNormalizer([t.BertNormalizer(True, True, False, True)]),  # Chinese padding past the bound
    t.BertNFDNormalizer(True, False, True, False, [(0x4E2D, b"x" * 40)]),  # the NFD table's check
    t.TableNormalizer([(0x4E2D, b"y" * 40)]),
])
def test_size_bounds_refused_alike(paths, node):
    text = "中".encode() * 240_000 + "É".encode()
    tree = t.MtokFile(normalizer=node, model=_WORDPIECE.model)
    pure, compiled = paths(lambda: mtokspec.Tokenizer.from_tree(tree, semantics="mnn", max_expansion=1).encode(text))
    assert pure == compiled and pure[0] == "refused", pure[:2]


def _corpus_texts() -> list[str]:
    out = []
    for name in ("en", "zh", "code", "edge", "mixed"):
        out += json.loads((CORPUS / "text" / f"{name}.json").read_text(encoding="utf-8"))
    for kind in ("en", "zh", "code"):
        out += (CORPUS / "text" / f"bench_{kind}.txt").read_text(encoding="utf-8").splitlines()[:150]
    return [x if isinstance(x, str) else bytes.fromhex(x["hex"]) for x in out]


_FILES = sorted(p for p in CORPUS.glob("tok/*/mnn.*") if p.suffix in (".mtok", ".txt")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"reference corpus not found at {CORPUS}")
@pytest.mark.parametrize("path", _FILES, ids=[f"{p.parent.name}/{p.name}" for p in _FILES])
def test_corpus_same_ids(paths, path):
    texts = _corpus_texts()

    def encode():
        tok = mtokspec.Tokenizer.from_file(path, semantics="mnn")
        return [tok.encode(x) for x in texts], [tok.encode(x, add_special_tokens=False) for x in texts]

    pure, compiled = paths(encode)
    assert pure[0] == "ok" and pure == compiled


@pytest.mark.skipif(COMPILED is None, reason="the compiled module is not built (or MTOKSPEC_PURE is set)")
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_TEXT, added=st.booleans())
def test_byte_level_encode_counts_its_steps_as_the_budget_does(text, added):
    """A ByteLevel file's encode on its own keeps the scan's step count itself; inside another
    call it spends that call's budget: the same ids either way, and the outer budget is spent."""
    tree = t.MtokFile(
        pre_tokenizer=t.ByteLevelPreTokenizer(use_regex=True),
        model=t.BPEModel(vocab=[(bytes([c]), i) for i, c in enumerate(b"abc ")], merges=[]),
        added_tokens=[t.AddedToken(id=9, special=False, lstrip=False, rstrip=False, content="bc")] if added else [])
    tok = mtokspec.Tokenizer.from_tree(tree, semantics="mnn")
    assert tok._scan_counted is not None
    alone = tok.encode(text)
    with budget(1000) as st:
        before = st.steps
        inside = tok.encode(text)
        spent = before - st.steps
    assert alone == inside
    assert (spent > 0) == any(p for p, i in tok.added_split(text.encode("utf-8", "surrogatepass")) if i is None)
