"""Unit tests of each runtime component, against HF ``tokenizers`` components where they exist."""

from __future__ import annotations

import argparse
import json
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.format import tree as t
from mtokspec import Tokenizer, TokenizerError
from mtokspec.runtime.hf import decoders as D
from mtokspec.runtime.hf import normalizers as N
from mtokspec.runtime.hf import pre_tokenizers as P
from mtokspec.runtime.hf.added_tokens import AddedVocabulary
from mtokspec.runtime.hf.models import BPE, Unigram, WordPiece
from mtokspec.runtime.hf.models import unigram as unigram_module
from mtokspec.runtime.hf.models.unigram import serde_f64, serde_f64_min

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers  # noqa: E402
from tests._support.unicode_stable import STABLE_CHARS  # noqa: E402

SAMPLES = [
    "", " ", "Hello world", "  Hello   world  ", "ΣΑΣ ΟΔΟΣ σ", "İstanbul ǅ ß", "Café naïve e\u0301",
    "ﬁ ① ½ Ｆｕｌｌ １２３ ²", "机器学习 こんにちは 안녕", "a\tb\nc\rd\x0be\x0cf\x85g\x1ch\u3000i\xa0j",
    "\x00x\ufffdy\u200bz\u200d\x7f\x9f", "🚀 😶\u200d🌫️ 👍🏽", "it's we'll THEY'RE 12345 ٣٤٥ ४५६ Ⅻ",
    "x=[1,2];y={'a':3}!? ¿¡ — “q” «r» 、。", "▁leading ▁▁double", "\u2028\u2029 tail \t",
]


# --- normalizers ----------------------------------------------------------------------------------

def _table(form):
    import unicodedata
    out = []
    for cp in range(0x110000):
        c = chr(cp)
        if 0xD800 <= cp < 0xE000 or unicodedata.is_normalized(form, c):
            continue
        out.append((cp, unicodedata.normalize(form, c).encode()))
    return out


@pytest.mark.parametrize("ours,theirs", [
    (N.Prepend("▁"), normalizers.Prepend("▁")),
    (N.Replace(" ", "▁"), normalizers.Replace(" ", "▁")),
    (N.Replace("ab", "x"), normalizers.Replace("ab", "x")),
    (N.Strip(True, True), normalizers.Strip(True, True)),
    (N.Strip(True, False), normalizers.Strip(True, False)),
    (N.Strip(False, True), normalizers.Strip(False, True)),
    (N.Bert(False, False, False, True), normalizers.Lowercase()),
    (N.Bert(True, True, False, False), normalizers.BertNormalizer(True, True, False, False)),
    (N.Bert(True, False, True, True, None),
     normalizers.BertNormalizer(True, False, True, True)),
    (N.LegacyNFKC(), normalizers.NFKC()),
    (N.Sequence([N.Prepend("▁"), N.Replace(" ", "▁")]),
     normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])),
])
def test_normalizers_match_hf(ours, theirs):
    for s in SAMPLES + ["aabab", "ab" * 5]:
        assert ours.normalize(s) == theirs.normalize_str(s), s


def test_table_normalizers_compose_like_full_normalization():
    nfkc = N.Table(_table("NFKC"))
    nfc = N.Table(_table("NFC"))
    nfd = _table("NFD")
    bert = N.Bert(True, True, True, True, nfd)
    for s in SAMPLES + ["e\u0301\u0323", "\u1e0b\u0323", "Å Å ｶﾞ ㈱ ﬀ"]:
        assert nfkc.normalize(s) == normalizers.NFKC().normalize_str(s), s
        assert nfc.normalize(s) == normalizers.NFC().normalize_str(s), s
        assert bert.normalize(s) == normalizers.BertNormalizer(True, True, True, True).normalize_str(s)
    assert nfkc.normalize("e\u0301") == "é"  # composition across two table-less characters


def test_empty_replace_pattern_is_a_noop():
    assert N.Replace("", "x").normalize("abc") == "abc"


def test_white_space_is_unicode_white_space():
    assert N.strip_ws("\x1c a \u3000") == "\x1c a"
    assert N.lowercase("ΟΔΟΣ") == "οδοσ"  # per character: no final sigma


# --- pre-tokenizers -------------------------------------------------------------------------------

def _hf_pieces(pt, s):
    return [p for p, _ in pt.pre_tokenize_str(s)]


LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"
          r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


@pytest.mark.parametrize("ours,theirs", [
    (P.ByteLevel(True), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)),
    (P.ByteLevel(False), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)),
    (P.Digits(True), pre_tokenizers.Digits(individual_digits=True)),
    (P.Digits(False), pre_tokenizers.Digits(individual_digits=False)),
    (P.Metaspace("▁", True), pre_tokenizers.Metaspace("▁", prepend_scheme="always")),
    (P.Metaspace("▁", False), pre_tokenizers.Metaspace("▁", prepend_scheme="never")),
    (P.Bert(), pre_tokenizers.BertPreTokenizer()),
    (P.Split(r"\s+", False, 1), pre_tokenizers.WhitespaceSplit()),
    (P.Sequence([P.Split(r"\s+", False, 1), P.Metaspace("▁", True)]),
     pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace()])),
] + [
    (P.Split(pat, inv, code), pre_tokenizers.Split(Regex(pat), behavior=name, invert=inv))
    for pat in (LLAMA3, r"\d+|x?", r"\s")
    for code, name in ((0, "isolated"), (1, "removed"), (2, "merged_with_previous"))
    for inv in (False, True)
])
def test_pre_tokenizers_match_hf(ours, theirs):
    for s in SAMPLES + ["12a345bb6", "xx  yy\n\n z"]:
        assert ours.split(s) == _hf_pieces(theirs, s), s


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["'", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "s", "l", "r", "e",
                                 "v", " ", "  ", "\t", "\n", "1", "²", "é", "中", ",", "!"]), max_size=12).map("".join)
       | st.text(st.characters(max_codepoint=127), max_size=40) | st.text(STABLE_CHARS, max_size=30))
def test_byte_level_split_matches_hf_around_contractions(s):
    """ByteLevel's pattern groups HF's seven contraction alternatives, and ASCII text is split by
    its ASCII form (``re``, classes cut to ASCII); both must split as HF does, on text dense in
    apostrophes, the letters after them and white space, on any ASCII text, and on any text of
    characters both Unicode tables agree on (see unicode_stable)."""
    pt = P.ByteLevel(True)
    assert pt.split(s) == _hf_pieces(pre_tokenizers.ByteLevel(add_prefix_space=False), s)
    if s.isascii():
        assert pt.ASCII_PATTERN.findall(s) == pt.PATTERN.findall(s)


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(max_codepoint=127), max_size=40))
def test_ascii_fast_paths_match_hf(s):
    """ASCII text takes faster paths: BertPreTokenizer's pattern with its classes cut to ASCII
    (run by ``re``), BertNormalizer skipping the clean-up of printable ASCII, white space split
    by ``str.split`` (printable) or by ``re``.  Any ASCII text, control characters included, must
    come out as HF's."""
    assert P.Bert().split(s) == _hf_pieces(pre_tokenizers.BertPreTokenizer(), s)
    assert P.Split(r"\s+", False, 1).split(s) == _hf_pieces(pre_tokenizers.WhitespaceSplit(), s)
    t5_style = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace()])
    assert P.Sequence([P.Split(r"\s+", False, 1), P.Metaspace("▁", True)]).split(s) == _hf_pieces(t5_style, s)
    for lower in (False, True):
        ours = N.Bert(True, True, False, lower)
        theirs = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=False,
                                            lowercase=lower)
        assert ours.normalize(s) == theirs.normalize_str(s)


@pytest.mark.parametrize("code,name", [(P.CONTIGUOUS, "contiguous"), (P.MERGED_WITH_NEXT, "merged_with_next")])
def test_split_spans_other_behaviours(code, name):
    import regex
    hf = pre_tokenizers.Split(Regex(r"\d|\s"), behavior=name)
    for s in SAMPLES + ["1 2  34a5"]:
        spans = [m.span() for m in regex.finditer(r"\d|\s", s)]
        assert P.split_spans(s, spans, code) == _hf_pieces(hf, s), s


def test_pathological_split_pattern_times_out(monkeypatch):
    from mtokspec.runtime.shared import bounds

    monkeypatch.setattr(bounds, "REGEX_SECONDS", 0.2)
    sp = P.Split(r"(a|aa)+$", False, 0)
    t0 = time.perf_counter()
    with pytest.raises(TokenizerError, match="regex time"):
        sp.split("a" * 40 + "!")
    assert time.perf_counter() - t0 < 5
    tok = Tokenizer.from_tree(_tiny_tree(pre=t.SplitPreTokenizer(r"(a|aa)+$", False, 0)))
    with pytest.raises(TokenizerError):
        tok.encode("a" * 40 + "!")


def test_bad_split_pattern_is_a_tokenizer_error():
    with pytest.raises(TokenizerError, match="cannot compile"):
        P.Split("(unclosed", False, 0)
    assert issubclass(TokenizerError, ValueError)


# --- models ---------------------------------------------------------------------------------------

def _bpe_pair(vocab, merges, byte_fallback=False):
    ids = vocab
    rows = [(ids[a], ids[b], k) for k, (a, b) in enumerate(merges)]
    ours = BPE.from_tree(t.BPEModel(byte_fallback, False, sorted((tok.encode(), i) for tok, i in vocab.items()),
                                    sorted(rows)))
    theirs = models.BPE(vocab, merges, byte_fallback=byte_fallback)
    return ours, theirs


def test_bpe_merges_read_token_bytes_of_the_ids_met_and_refuse_broken_merges(runtime_path):
    """A merge's output is looked up from the bytes of the two ids it joins: the ids met while
    encoding (characters, byte tokens, outputs) are enough; a merge producing a token that is not
    in the vocabulary is refused when applied."""
    vocab = {"a": 0, "b": 1, "ab": 2, "abb": 3, "<0xC3>": 4, "<0xA9>": 5, "<0xC3><0xA9>": 6}
    ours = BPE.from_tree(t.BPEModel(True, False, sorted((tok.encode(), i) for tok, i in vocab.items()),
                                    [(0, 1, 0), (2, 1, 1), (4, 5, 2)]))
    assert list(ours.tokenize("abb")) == [3]
    assert list(ours.tokenize("ab\u00e9")) == [2, 6]  # é by byte fallback, then merged
    assert ours._btokens_full is False  # every id it needed was met on the way
    ids = {tok.encode(): i for tok, i in vocab.items()}
    bad_out = BPE.from_tree(t.BPEModel(False, False, sorted(ids.items()), [(1, 0, 0)]))
    with pytest.raises(TokenizerError, match="output 'ba' is not in the vocabulary"):
        bad_out.tokenize("ba")


def test_bpe_merge_order_matches_hf(runtime_path):
    vocab = {c: i for i, c in enumerate("abcd")}
    merges = [("b", "c"), ("a", "b"), ("c", "d"), ("a", "a"), ("bc", "d"), ("aa", "a"), ("ab", "cd")]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    ours, theirs = _bpe_pair(vocab, merges)
    rnd = random.Random(0)
    for _ in range(400):
        w = "".join(rnd.choice("abcd") for _ in range(rnd.randint(1, 40)))
        assert list(ours.tokenize(w)) == [t.id for t in theirs.tokenize(w)], w


def test_bpe_byte_fallback_and_unknown(runtime_path):
    vocab = {"a": 0, "b": 1, "ab": 2, "<0xC3>": 3, "<0xA9>": 4}
    ours, theirs = _bpe_pair(vocab, [("a", "b")], byte_fallback=True)
    for w in ["abé", "éab", "a€b"]:  # € has no byte tokens: dropped (no unk token in the file)
        assert list(ours.tokenize(w)) == [t.id for t in theirs.tokenize(w)], w


def test_bpe_cut_long_words_matches_hf(runtime_path):
    """Long words are cut where no merge can cross (bigram rule; around characters spelled by
    byte tokens that no merge uses): the result must equal HF's BPE over the whole word."""
    base = list("abcé") + ["<0xE4>", "<0xB8>", "<0xAD>", "<0xC3>", "<0xA9>"]
    merges = [("a", "b"), ("b", "c"), ("ab", "c"), ("c", "a"), ("é", "a"), ("c", "é")]
    for with_byte_merge in (False, True):
        vocab = {t: i for i, t in enumerate(base)}
        ms = merges + ([("<0xE4>", "<0xB8>")] if with_byte_merge else [])
        for a, b in ms:
            vocab.setdefault(a + b, len(vocab))
        ours, theirs = _bpe_pair(vocab, ms, byte_fallback=True)
        rnd = random.Random(2)
        for _ in range(300):
            w = "".join(rnd.choice("abcé中€x") for _ in range(rnd.randint(20, 60)))
            assert list(ours.tokenize(w)) == [t.id for t in theirs.tokenize(w)], (with_byte_merge, w)
        if runtime_path == "pure":  # the cut rules serve the pure path only
            assert (ours._solo is not None) is (not with_byte_merge)


def test_bpe_byte_level_words_merge_per_character_first_exactly():
    """Byte-level words with multi-byte characters merge each character on its own first when no
    merge across characters can come earlier; random merge tables (low-ranked merges across
    characters included) must give what merging the whole word gives."""
    from mtokspec.format.byte_level import BYTE_TO_CHAR

    rnd = random.Random(5)
    chars = "aé中€😀"
    alphabet = sorted({BYTE_TO_CHAR[b] for c in chars for b in c.encode()})
    for trial in range(40):
        vocab = {tok: i for i, tok in enumerate(alphabet)}
        merges: list[tuple[str, str]] = []
        toks = list(alphabet)
        for _ in range(rnd.randint(3, 25)):
            a, b = rnd.choice(toks), rnd.choice(toks)
            if (a, b) in merges or a + b in vocab:
                continue
            merges.append((a, b))
            vocab[a + b] = len(vocab)
            toks.append(a + b)
        ids = vocab
        rows = [(ids[a], ids[b], k) for k, (a, b) in enumerate(merges)]
        ours = BPE.from_tree(t.BPEModel(False, True, sorted((tok.encode(), i) for tok, i in vocab.items()),
                                        sorted(rows)))
        for _ in range(30):
            piece = "".join(rnd.choice(chars) for _ in range(rnd.randint(1, 12)))
            whole = ours._bpe("".join(BYTE_TO_CHAR[b] for b in piece.encode()))
            assert ours._bpe_units(piece) == whole, (trial, piece)

    # a merge across the boundary that only an intermediate token of a character can make: the
    # last (first) ids a character ever has there must all count
    e4, b8, ad = (BYTE_TO_CHAR[b] for b in "中".encode())
    for piece, merges in (("中a", [(b8, ad), (b8 + ad, "a"), (e4, b8 + ad)]),
                          ("a中", [(e4, b8), ("a", e4 + b8), (e4 + b8, ad)])):
        vocab = {c: i for i, c in enumerate(sorted({e4, b8, ad, "a"}))}
        for a, b in merges:
            vocab[a + b] = len(vocab)
        rows = [(vocab[a], vocab[b], k) for k, (a, b) in enumerate(merges)]
        ours = BPE.from_tree(t.BPEModel(False, True, sorted((tok.encode(), i) for tok, i in vocab.items()),
                                        sorted(rows)))
        theirs = models.BPE(vocab, merges)
        want = [tok.id for tok in theirs.tokenize("".join(BYTE_TO_CHAR[b] for b in piece.encode()))]
        assert list(ours._bpe_units(piece)) == want == list(ours._bpe("".join(BYTE_TO_CHAR[b] for b in piece.encode())))


def test_bpe_sentencepiece_chunking_is_checked_not_assumed(runtime_path):
    vocab = {c: i for i, c in enumerate("▁ab")}
    merges = [("▁", "a"), ("b", "▁"), ("▁a", "b▁")]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    ours, theirs = _bpe_pair(vocab, merges)
    assert ours.sp_chunking() is False  # "b▁" crosses a ▁ boundary
    text = "▁ab▁ab▁a" * 10
    out: list[int] = []
    ours.tokenize_text(text, out)
    assert out == [t.id for t in theirs.tokenize(text)]
    ok, _ = _bpe_pair({"▁": 0, "a": 1, "▁a": 2}, [("▁", "a")])
    assert ok.sp_chunking() is True
    # asked of every token (each merge output is one): a newline counts only inside a token
    for extra, crossing in (("a\n▁", True), ("\n▁", True), ("\na", False), ("▁\n", False), ("é▁", True),
                            ("\u0101▁", True), ("\u2580▁", True), ("▁▁a", False), ("a▁▁", True), ("\U0001f600▁", True)):
        tok, _ = _bpe_pair({"▁": 0, "a": 1, "▁a": 2, "\n": 3, extra: 4}, [("▁", "a")])
        assert tok.sp_chunking() is not crossing, extra


def test_wordpiece_matches_hf():
    vocab = {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "a": 4, "##a": 5, "aff": 6}
    ours = WordPiece({t.encode(): i for t, i in vocab.items()}, "[UNK]", "##", 10)
    theirs = models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=10)
    for w in ["unaffable", "aaaa", "affable", "unx", "a" * 11, "a"]:
        assert list(ours.tokenize(w)) == [t.id for t in theirs.tokenize(w)], w


def test_unigram_matches_hf_ties_unk_and_byte_fallback(runtime_path):
    vocab = [("<unk>", 0.0), ("-", -2.0), ("--", -4.0), ("---", -6.0), ("a", -1.0), ("b", -1.5),
             ("ab", -2.5), ("<0x7A>", -9.0)]
    for bf in (False, True):
        rows = sorted((t.encode(), i, s) for i, (t, s) in enumerate(vocab))
        ours = Unigram(rows, 0, bf)
        theirs = models.Unigram(vocab, unk_id=0, byte_fallback=bf)
        for w in ["---", "------", "abab-", "xyz", "axxb", "zz", "<unk>a", "é"]:
            assert list(ours.tokenize(w)) == [t.id for t in theirs.tokenize(w)], (bf, w)


@pytest.mark.parametrize("small_start", [0, 2, 64])
def test_unigram_lattice_table_loaded_per_start_matches_hf(monkeypatch, small_start, runtime_path):
    """The lattice's table grows as text meets prefixes: a prefix with few longer pieces loads them
    all, one with more (``small_start``: 0 is always, 64 never for these vocabularies) loads one
    character deeper and leaves the deeper prefixes unloaded.  Random vocabularies whose pieces share
    prefixes (the last code points included, where a prefix's run ends the list) must segment as HF's
    Unigram does, on any order of words."""
    monkeypatch.setattr(unigram_module, "_SMALL_START", small_start)
    rnd = random.Random(4)
    alphabet = ["a", "b", "\u2581", "\u00e9", "\U0010fffe", "\U0010ffff"]
    for _ in range(120):
        pieces = {"".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 6))) for _ in range(rnd.randint(3, 40))}
        vocab = [("<unk>", 0.0)] + [(t, rnd.choice([-1.0, -1.5, -2.0, -2.5, -3.0, -4.25])) for t in sorted(pieces)]
        rows = [(t.encode("utf-8", "surrogatepass"), i, sc) for i, (t, sc) in enumerate(vocab)]
        ours = Unigram(rows, 0)
        theirs = models.Unigram(vocab, unk_id=0, byte_fallback=False)
        for _ in range(25):
            w = "".join(rnd.choice(alphabet + ["z"]) for _ in range(rnd.randint(1, 12)))
            assert list(ours.tokenize(w)) == [t.id for t in theirs.tokenize(w)], (vocab, w)



@pytest.mark.parametrize("small_start", [0, 64])
def test_unigram_pieces_that_are_not_utf8_are_never_matched(monkeypatch, small_start, runtime_path):
    """The lattice's table is read from the pieces' bytes; a piece that is not UTF-8 (a stray,
    truncated or overlong byte sequence, which HF's JSON vocabulary cannot hold) is left out of it,
    so ours segments like HF's Unigram on the same vocabulary without those pieces."""
    monkeypatch.setattr(unigram_module, "_SMALL_START", small_start)
    rnd = random.Random(7)
    alphabet = ["a", "b", "\u2581", "\u00e9", "\u4e2d"]
    bad = [b"\xff", b"\x80", b"\xe4\xb8", b"\xc0\xaf", b"\xed\xa0\x80"]
    for _ in range(60):
        pieces = sorted({"".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 4))) for _ in range(rnd.randint(3, 30))})
        good = [("<unk>", 0.0)] + [(t, rnd.choice([-1.0, -1.5, -2.0, -3.0])) for t in pieces]
        rows = [(t.encode(), i, sc) for i, (t, sc) in enumerate(good)]
        for k in range(rnd.randint(1, 6)):  # not UTF-8: alone, after a piece, before one
            t = rnd.choice(pieces).encode()
            b = rnd.choice([rnd.choice(bad), t + rnd.choice(bad), rnd.choice(bad) + t, t[:-1] if len(t) > 1 and t[-1] > 0x7F else t + b"\xff"])
            rows.append((b, len(rows), -0.5))
        ours = Unigram(rows, 0)
        theirs = models.Unigram(good, unk_id=0, byte_fallback=False)
        for _ in range(25):
            w = "".join(rnd.choice(alphabet + ["z"]) for _ in range(rnd.randint(1, 10)))
            assert list(ours.tokenize(w)) == [t.id for t in theirs.tokenize(w)], (rows, w)
    # an unknown run spelled like such a piece's surrogate-escaped text is looked up as any string
    ours = Unigram([(b"<unk>", 0, 0.0), (b"a", 1, -1.0), (b"\xff", 2, -1.0)], 0)
    assert ours.tokenize("a\udcff") == (1, 2) and ours.tokenize("\udcfe") == (0,)

def test_serde_f64_reproduces_hf_score_parsing():
    rnd = random.Random(1)
    scores = [-rnd.uniform(0, 20) for _ in range(3000)] + [-1e-7, -123456.789, -2.5e-300, -3.0]
    data = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": False,
                      "vocab": [[f"t{i}", s] for i, s in enumerate(scores)]}}
    hf = tokenizers.Tokenizer.from_str(json.dumps(data))
    back = [s for _, s in json.loads(hf.to_str())["model"]["vocab"]]
    assert sum(a != b for a, b in zip(scores, back)) > 0  # serde is not correctly rounded
    assert [serde_f64(s) for s in scores] == back


def test_serde_f64_min_reads_only_what_can_be_lowest():
    """The lowest serde value, from the few stored values near the stored minimum, is the lowest of all."""
    rnd = random.Random(2)
    for _ in range(300):
        base = -rnd.uniform(0, 30)
        # values within a few ULP of each other: serde may reorder them
        xs = [base * (1 + rnd.randint(-8, 8) * 2.0 ** -53) for _ in range(rnd.randint(1, 12))]
        xs += [-rnd.uniform(0, 30) for _ in range(rnd.randint(0, 12))]
        rnd.shuffle(xs)
        assert serde_f64_min(xs) == min(map(serde_f64, xs))
    assert serde_f64_min([0.0, 1.5]) == 0.0
    assert serde_f64_min([-float("inf"), -3.0]) == -float("inf")


def test_unigram_scores_read_on_first_use_agree_with_eager_reading():
    """A piece's serde score is read when the lattice first needs it; the segmentation is the one
    every score read up front gives, and each score read is serde's, not the stored one."""
    rnd = random.Random(3)
    rows = [(b"<unk>", 0, 0.0)]
    pieces = ["a", "b", "c", "ab", "bc", "abc", "ca", "cab"]
    for i, p in enumerate(pieces, 1):
        while True:  # scores whose serde value is not the stored one
            x = -rnd.uniform(1, 9)
            if serde_f64(x) != x:
                break
        rows.append((p.encode(), i, x))
    ours = Unigram(rows, 0)
    eager = Unigram([(t, i, serde_f64(x)) for t, i, x in rows], 0, serde_scores=False)  # read up front
    for w in ["abc", "cabc", "abcab", "bca", "x", "cabcabca"]:
        assert ours.segment(w) == eager.segment(w), w
    read = {v[0]: v[1] for v in ours._pref.values() if isinstance(v, list) and v[1] is not None}
    assert len(read) == len(pieces)
    assert read == {i: serde_f64(x) for _t, i, x in rows[1:]}


# --- decoders -------------------------------------------------------------------------------------

TOKENS = [["Ġhello", "Ġwor", "ld", "ĠðŁ", "ļ", "Ģ"], ["<0xE4>", "<0xBD>", "<0xA0>", "x", "<0xE4>", "y"],
          ["▁Hello", "▁wor", "ld", "▁", "▁▁"], ["hello", "##wor", "##ld", ".", "do", "not", "'s", "!"],
          [], ["", "a", ""], [" a ", "  b", "c  "], ["<0xFF>", "<0x+A>", "<0x41>"]]


@pytest.mark.parametrize("ours,theirs", [
    (D.ByteLevel(), decoders.ByteLevel()),
    (D.ByteFallback(), decoders.ByteFallback()),
    (D.Metaspace("▁", True), decoders.Metaspace("▁", prepend_scheme="always")),
    (D.Metaspace("▁", False), decoders.Metaspace("▁", prepend_scheme="never")),
    (D.WordPiece("##", True), decoders.WordPiece("##", True)),
    (D.WordPiece("##", False), decoders.WordPiece("##", False)),
    (D.Fuse(), decoders.Fuse()),
    (D.Replace("▁", " "), decoders.Replace("▁", " ")),
    (D.Strip(" ", 1, 1), decoders.Strip(" ", 1, 1)),
    (D.Sequence([D.Replace("▁", " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 1, 0)]),
     decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                        decoders.Strip(" ", 1, 0)])),
])
def test_decoders_match_hf(ours, theirs):
    for toks in TOKENS:
        if isinstance(ours, D.Strip) and "" in toks:
            continue  # HF's Strip decoder panics on an empty token (index underflow)
        assert ours.decode(toks) == theirs.decode(toks), toks


# --- added tokens ---------------------------------------------------------------------------------

def test_added_tokens_leftmost_longest_and_strip():
    av = AddedVocabulary([t.AddedToken(10, True, False, False, "<a>"),
                          t.AddedToken(11, True, False, False, "<a><b>"),
                          t.AddedToken(12, False, True, False, "[L]"),
                          t.AddedToken(13, False, False, True, "[R]")])
    assert av.split("x<a><b>y<a>") == [("x", None), ("<a><b>", 11), ("y", None), ("<a>", 10)]
    assert av.split("x  \u3000[L]y") == [("x", None), ("  \u3000[L]", 12), ("y", None)]
    assert av.split("[R] \t z") == [("[R] \t ", 13), ("z", None)]
    assert av.split("[R]  [L]") == [("[R]  ", 13), ("[L]", 12)]  # lstrip never eats a match
    assert av.split("\x1c[L]") == [("\x1c", None), ("[L]", 12)]  # \x1c is not White_Space
    assert AddedVocabulary([]).split("abc") == [("abc", None)]


# --- tokenizer ------------------------------------------------------------------------------------

BYTE_VOCAB = [(c.encode(), b) for b, c in enumerate(P.BYTES_TO_UNICODE)]


def _tiny_tree(pre=None, post=None, prefix=(), added=()):
    vocab = sorted(BYTE_VOCAB + [("ĠĠ".encode(), 256)])
    return t.MtokFile(
        header=t.make_header(special=[a.id for a in added if a.special], stop=[300], prefix=list(prefix)),
        pre_tokenizer=pre or t.ByteLevelPreTokenizer(True),
        model=t.BPEModel(False, False, vocab, [(220, 220, 0)]),
        decoder=t.ByteLevelDecoder(), added_tokens=list(added), post_processor=post)


def test_add_special_tokens_program_or_prefix_never_both():
    bos = t.AddedToken(300, True, False, False, "<s>")
    eos = t.AddedToken(301, True, False, False, "</s>")
    prog = t.PostProcessorProgram([t.SpecialTokenOp(300), t.SequenceOp()])
    tok = Tokenizer.from_tree(_tiny_tree(post=prog, prefix=[300], added=[bos, eos]))
    assert tok.encode("a", add_special_tokens=True) == [300] + tok.encode("a")
    assert tok.encode("a", True).count(300) == 1
    tok = Tokenizer.from_tree(_tiny_tree(post=t.PostProcessorProgram([t.SequenceOp()]), prefix=[300],
                                       added=[bos]))
    assert tok.encode("a", True) == tok.encode("a")  # program [A]: HF's TemplateProcessing "$A"
    tok = Tokenizer.from_tree(_tiny_tree(post=t.PostProcessorProgram([t.SequenceOp()] * 2), prefix=[300]))
    assert tok.encode("a", True) == tok.encode("a") == [97, 97]  # A twice, with or without specials (HF)
    tok = Tokenizer.from_tree(_tiny_tree(post=t.PostProcessorProgram([]), prefix=[300]))
    assert tok.encode("a", True) == tok.encode("a")  # empty program: no post-processor
    tok = Tokenizer.from_tree(_tiny_tree(post=None, prefix=[300], added=[bos]))
    assert tok.encode("a", True) == [300] + tok.encode("a")  # no section (older files): the prefix ids
    tok = Tokenizer.from_tree(_tiny_tree(post=t.LegacyPostProcessor([301]), added=[eos]))
    assert tok.encode("a", True) == tok.encode("a") + [301]
    tok = Tokenizer.from_tree(_tiny_tree(added=[bos]))
    assert tok.encode("a", True) == tok.encode("a") and tok.prefix_ids == []


def test_decode_stream_never_splits_utf8():
    t = Tokenizer.from_tree(_tiny_tree())
    text = "a🚀é你  b😶\u200d🌫️"
    ids = t.encode(text)
    assert len(ids) > len(text)  # byte-level: one id per byte
    stream = t.decode_stream()
    out = []
    for i in ids:
        piece = stream.step(i)
        assert piece is None or "\ufffd" not in piece
        if piece is not None:
            out.append(piece)
    assert "".join(out) == text
    assert t.decode(ids) == text


def test_from_bytes_and_api():
    tree = _tiny_tree(added=[t.AddedToken(300, True, False, False, "<s>")])
    tok = Tokenizer.from_bytes(mtokspec.build(tree))
    assert tok.encode("hi  there<s>") == Tokenizer.from_tree(tree).encode("hi  there<s>")
    assert tok.encode_batch(["a", "b"]) == [tok.encode("a"), tok.encode("b")]
    assert tok.token_to_id("<s>") == 300 and tok.id_to_token(300) == "<s>"
    assert tok.decode(tok.encode("x<s>y"), skip_special_tokens=True) == "xy"
    assert tok.vocab_size == 258 and tok.is_stop(300) and tok.is_special(300) and not tok.is_special(5)
    assert tok.decode([99999, tok.token_to_id("a")]) == "a"  # unknown ids are skipped


# --- commands -------------------------------------------------------------------------------------

def test_commands(tmp_path, capsys):
    from mtokspec.cli import runtime as cmds
    path = tmp_path / "tiny.mtok"
    path.write_bytes(mtokspec.build(_tiny_tree()))
    hf = tokenizers.Tokenizer(models.BPE({c: b for b, c in enumerate(P.BYTES_TO_UNICODE)} | {"ĠĠ": 256},
                                         [("Ġ", "Ġ")]))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "cases.json").write_text(json.dumps(["a  b", "né"]))
    ap = argparse.ArgumentParser()
    cmds.register(ap.add_subparsers())

    def run(*argv):
        a = ap.parse_args(list(argv))
        return a.func(a), capsys.readouterr()

    rc, out = run("encode", str(path), "a  b")
    assert rc == 0 and out.out.split() == [str(i) for i in hf.encode("a  b").ids]
    rc, out = run("decode", str(path), *out.out.split())
    assert rc == 0 and out.out == "a  b\n"
    rc, out = run("compare", str(path), "--against", str(tmp_path / "tokenizer.json"),
                  "--text", str(tmp_path / "cases.json"))
    assert rc == 0 and "2/2" in out.out
    for runtime in ("hf", "mnn"):  # the model folder holding it, as fix and report take it
        rc, out = run("compare", str(path), "--runtime", runtime, "--against", str(tmp_path),
                      "--text", str(tmp_path / "cases.json"))
        assert rc in (0, 1) and "2/2" in out.out and "directory" not in out.err, (runtime, out)
    rc, out = run("encode", str(tmp_path / "missing.mtok"), "x")
    assert rc == 2 and "missing.mtok" in out.err
