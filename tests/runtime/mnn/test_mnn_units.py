"""Units of the ``mnn`` semantics: each quirk of MNN's C++ code it models, on hand-made input.

Every expectation here was confirmed with MNN's own tokenizer (the ``mnn_tok`` driver of
``../shared/tools/mnn-reference`` at the commit in ``MNN_COMMIT``) while it was written.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.format import tree as t
from mtokspec import Tokenizer, TokenizerError
from mtokspec.runtime.mnn import MnnTokenizer, UndefinedInMnn
from mtokspec.runtime.mnn import regex as R
from mtokspec.runtime.mnn import regex_compile as RC
from mtokspec.runtime.shared.text import GPT2_PATTERN
from mtokspec.runtime.mnn import unicode as U
from mtokspec.runtime.mnn._unicode_data import UNICODE_VERSION
from mtokspec.runtime.mnn.tokenizer import engine_fix, strncmp_equal


# --- Unicode ------------------------------------------------------------------------------------

def test_utf8_decode_is_mnns():
    assert U.utf8_decode(b"\xc3\xa9", 0) == (0xE9, 2)
    assert U.utf8_decode(b"\xc0\x80", 0) == (0xFFFD, 1)  # overlong
    assert U.utf8_decode(b"\xed\xa0\x80", 0) == (0xFFFD, 1)  # surrogate
    assert U.utf8_decode(b"\xf4\x90\x80\x80", 0) == (0xFFFD, 1)  # past U+10FFFF
    assert U.utf8_decode(b"\xe4\xb8", 0) == (0xFFFD, 1)  # truncated
    assert [c for _, _, c in U.chars(b"a\xffb")] == [97, 0xFFFD, 98]


def test_unicode_tables_are_15_0():
    assert UNICODE_VERSION == "15.0.0"
    assert U.category(0x1123F) == "Lo"  # assigned in Unicode 15.0
    assert U.category(0x2EBF0) == "Cn"  # assigned in 15.1: not yet for MNN
    assert U.category(0x41) == "Lu" and U.category(0x3000) == "Zs" and U.category(0x110000) == "Cn"
    if unicodedata.unidata_version == UNICODE_VERSION:
        for cp in range(0, 0x110000, 97):
            assert U.category(cp) == unicodedata.category(chr(cp))
    assert U.to_lower(ord("İ")) == ord("İ")  # only one-to-one mappings (HF: "i̇")
    assert U.to_lower(ord("Σ")) == ord("σ")
    assert not U.is_whitespace(0x2028) and U.is_whitespace(0x3000) and U.is_whitespace(0x0B)


# --- MNN's regex engine -------------------------------------------------------------------------

def _scan(text: str, pattern: str) -> list[str]:
    return [p.decode() for p in R.scan(text.encode(), pattern.encode())]


def test_gpt2_pattern_on_folded_text():
    assert _scan("Hello, wörld 123 ", GPT2_PATTERN) == ["Hello", ",", " wörld", " 123", " "]


def test_non_ascii_literal_stands_for_its_class():
    # "é" folds to "letter": any non-ASCII letter matches, ASCII letters do not
    assert _scan("aébçd", "[é]") == ["a", "é", "b", "ç", "d"]
    assert R.split("aéb".encode(), "é".encode(), False, "Removed") == [b"a", b"b"]


def test_groups_do_not_backtrack_and_empty_groups_fail():
    # (a|ab)c: the group takes "a" and never retries "ab"
    assert R.split(b"abc", b"(a|ab)c", False, "Isolated") == [b"abc"]
    assert R.split(b"ac", b"(a|ab)c", False, "Isolated") == [b"ac"]
    # a group that matches the empty string counts as not matching
    assert R.split(b"b", b"(a?)b", False, "Removed") == [b"b"]


def test_unsupported_alternatives_are_dropped():
    assert RC.dropped_alternatives(rb"\bx|y")
    assert not RC.dropped_alternatives(rb"\s+|x")
    assert R.split(b"xy", rb"\bx|y", False, "Removed") == [b"x"]  # only "y" is left to match
    # nothing supported: GPT-2's pattern instead
    assert RC.compile_pattern(rb"(?=a)") == RC.compile_pattern(GPT2_PATTERN.encode())


def test_lazy_is_greedy_and_property_first_letter():
    assert R.split(b"aaa", b"a+?", False, "Isolated") == [b"aaa"]
    assert _scan("a1", r"\p{Lu}") == ["a", "1"]  # \p{Lu} reads as \p{L}: lower case matches too


def test_split_behaviours():
    assert R.split(b"a-b-", b"-", False, "MergedWithPrevious") == [b"a-", b"b-"]
    assert R.split(b"a-b", b"-", True, "Removed") == [b"-"]
    assert R.split(b"a-b", b"-", False, "Isolated") == [b"a", b"-", b"b"]


# --- the tokenizer around the model -------------------------------------------------------------

def _mtok(**kw) -> t.MtokFile:
    base = dict(header=t.make_header(), pre_tokenizer=t.ByteLevelPreTokenizer(True),
                model=t.BPEModel(vocab=[(b"<s>", 3), (b"a", 0), (b"ab", 2), (b"b", 1)], merges=[(0, 1, 0)]),
                added_tokens=[t.AddedToken(3, True, False, False, "<s>")],
                chat_template="", eos_token="", flags=0, bos_token="", post_processor=t.PostProcessorProgram([]))
    base.update(kw)
    return t.MtokFile(**base)


def test_bos_twice():
    tree = _mtok(header=t.make_header(special=[3], prefix=[3]),
                 post_processor=t.PostProcessorProgram([t.SpecialTokenOp(3), t.SequenceOp()]))
    mnn, hf = MnnTokenizer.from_tree(tree), Tokenizer.from_tree(tree)
    assert mnn.encode("ab") == [3, 3, 2]
    assert hf.encode("ab", add_special_tokens=True) == [3, 2]
    assert mnn.encode("ab", add_special_tokens=False) == [2]


def test_post_processor_misread():
    ops = [t.SpecialTokenOp(3), t.SpecialTokenOp(3), t.SequenceOp(), t.SpecialTokenOp(3)]  # 16 bytes
    mnn = MnnTokenizer.from_tree(_mtok(post_processor=t.PostProcessorProgram(ops)))
    # the op bytes 01 03000000 01 03000000 00 01 03000000 read as four u32 ids after sequence A
    assert mnn.encode("ab") == [2, 0x301, 0x30100, 0x1000000, 3]


def test_unsorted_vocabulary_is_searched_as_mnn_searches():
    # MNN binary-searches the rows in file order: "ab" sits before "b" in no sorted order, so the
    # search for "ab" misses it and the merge stops
    tree = _mtok(model=t.BPEModel(vocab=[(b"a", 0), (b"b", 1), (b"ab", 2)], merges=[(0, 1, 0)]), added_tokens=[])
    assert MnnTokenizer.from_tree(tree).encode("ab") == [0, 1]


def test_special_split_uses_the_per_id_decode():
    # a WordPiece decoder makes the per-id decode of [CLS] " [CLS]": only that text is split
    tree = t.MtokFile(header=t.make_header(special=[0]), pre_tokenizer=t.BertPreTokenizer(),
                      model=t.WordPieceModel("[UNK]", "##", 100, [(b"[CLS]", 0), (b"[UNK]", 1), (b"a", 2)]),
                      decoder=t.WordPieceDecoder("##", True),
                      chat_template="", eos_token="", flags=0, bos_token="", post_processor=t.PostProcessorProgram([]))
    mnn = MnnTokenizer.from_tree(tree)
    assert mnn.split_specials(b"a [CLS]a") == [(b"a", None), (b" [CLS]", 0), (b"a", None)]
    assert mnn.encode("a [CLS]a") == [2, 0, 2]


def test_strncmp_stops_at_a_shared_nul():
    assert strncmp_equal(b"ab\x00x", 0, b"ab\x00y")
    assert not strncmp_equal(b"abx", 0, b"aby")


def test_engine_fix_and_stream():
    assert engine_fix(b"<0x41>") == b"A"
    assert engine_fix(b"<0x4G>") == b"\x04"  # std::stoi reads what it can
    with pytest.raises(UndefinedInMnn):
        engine_fix(b"<0xZZ>")
    tree = _mtok(model=t.BPEModel(vocab=[(b"\xc3", 0), (b"\xa9", 1)]), pre_tokenizer=t.NoPreTokenizer(),
                 decoder=t.SequenceDecoder([]), added_tokens=[])
    mnn = MnnTokenizer.from_tree(tree)
    stream = mnn.decode_stream()
    assert stream.step(0) is None and stream.step(1) == "é"
    assert mnn.decode_bytes([0]) == b"\xc3"  # not UTF-8, returned as is
    assert mnn.decode([0]) == "\ufffd"


def test_undefined_behaviour_is_refused():
    with pytest.raises(UndefinedInMnn):
        MnnTokenizer.from_tree(_mtok(model=t.BPEModel(vocab=[(b"a", 5)])))
    hang = MnnTokenizer.from_tree(_mtok(decoder=t.ReplaceDecoder("", "x")))
    with pytest.raises(UndefinedInMnn):
        hang.decode([0])
    assert isinstance(UndefinedInMnn("x"), TokenizerError)


def test_semantics_switch():
    data = mtokspec.build(_mtok())
    assert Tokenizer.from_bytes(data, semantics="mnn").semantics == "mnn"
    assert Tokenizer.from_bytes(data).semantics == "hf"
    with pytest.raises(TokenizerError):
        Tokenizer.from_bytes(data, semantics="device")
    with pytest.raises(mtokspec.ArgumentTypeError, match="^serde_scores: not an option of semantics='mnn'"):
        Tokenizer.from_bytes(data, semantics="mnn", serde_scores=False)
    assert Tokenizer.from_bytes(data).decode_bytes([2]) == b"ab"


# --- models -------------------------------------------------------------------------------------

def test_bpe_stops_at_a_merge_whose_text_is_not_a_token():
    tree = _mtok(model=t.BPEModel(vocab=[(b"a", 0), (b"b", 1), (b"c", 2), (b"bc", 3)],
                                  merges=[(0, 1, 0), (1, 2, 1)]), added_tokens=[])
    # the best merge a+b -> "ab" is not a token: MNN stops, so b+c never merges either
    assert MnnTokenizer.from_tree(tree).encode("abc") == [0, 1, 2]


def test_wordpiece_counts_bytes():
    wp = t.WordPieceModel("[UNK]", "##", 5, [(b"[UNK]", 0), ("é".encode(), 1), ("##é".encode(), 2)])
    tree = t.MtokFile(model=wp, pre_tokenizer=t.BertPreTokenizer(), decoder=t.WordPieceDecoder("##", True))
    mnn, hf = MnnTokenizer.from_tree(tree), Tokenizer.from_tree(tree)
    assert hf.encode("ééé") == [1, 2, 2]
    assert mnn.encode("ééé") == [0]  # 6 bytes > 5


def test_unigram_runs_over_bytes():
    tree = t.MtokFile(model=t.UnigramModel(0, False, [(b"<unk>", 0, -10.0), (b"a", 1, -1.0)]))
    mnn = MnnTokenizer.from_tree(tree)
    assert mnn.encode("aéé a") == [1, 0, 1]  # the unknown run fused, the space too (no pre-tokenizer)


# --- legacy types -------------------------------------------------------------------------------

def test_tiktoken_is_greedy_longest_match():
    tree = t.TiktokenTxtFile(header=t.make_header(), tokens=[b"a", b"b", b"ab", b"abc", b"c"])
    mnn = MnnTokenizer.from_tree(tree)
    assert mnn.encode("abcab") == [3, 2]
    assert mnn.encode("xa") == [0]  # a byte no token starts with is dropped


def test_bert_type_lowercases_and_keeps_pieces_before_unk():
    tree = t.BertTxtFile(header=t.make_header(), tokens=[b"[UNK]", b"he", b"##ll", b"hello"])
    mnn = MnnTokenizer.from_tree(tree)
    assert mnn.encode("HELLO") == [3]
    assert mnn.encode("hellx") == [1, 2, 0]


def test_sentencepiece_decode_replaces_pos_plus_3_bytes():
    meta = "\u2581".encode()
    tree = t.SentencePieceTxtFile(header=t.make_header(), pieces=[(b"<unk>", "0", 2), (b"ab" + meta + b"cdef", "0", 1)])
    assert MnnTokenizer.from_tree(tree).decode_bytes([1]) == b"ab ef"  # 2 + 3 bytes from position 2


# --- any file, any input: only mtokspec's own errors ----------------------------------------------


from mtokspec.testing import strategies as mst  # noqa: E402
from mtokspec.errors import MtokFormatError  # noqa: E402


@settings(max_examples=150, deadline=None)
@given(st.one_of(mst.mtok_bytes(valid=False), mst.txt_bytes()), st.text(max_size=30),
       st.lists(st.integers(-2**40, 2**40) | st.integers(0, 40), max_size=8))
@example(  # CI found it: a null normalizer before a table in a Sequence broke lint's table rule
    b"430 4\n0 0 0\n\n\x04\x02\x00\x00\x00\x00\x06\x01" + bytes(30), "", [])
def test_any_file_any_input(data, text, ids):
    try:
        tok = MnnTokenizer.from_bytes(data)
    except (MtokFormatError, UndefinedInMnn):
        # bytes the codec refuses, or a file MNN's loader has no defined behaviour on; any other
        # TokenizerError is a tree node the mnn runtime cannot build (a gap in its registries)
        return
    for call in (lambda: tok.encode(text), lambda: tok.encode(text.encode("utf-8") + b"\xff", False),
                 lambda: tok.decode_bytes(ids), lambda: tok.decode_bytes(ids, stream=True),
                 lambda: [tok.decode_stream().step(i) for i in ids]):
        try:
            call()
        except TokenizerError:  # UndefinedInMnn: MNN has no defined result here
            pass
    mtokspec.lint(data)


def test_compare_cli(tmp_path, capsys):
    from mtokspec.cli import main

    misread = _mtok(post_processor=t.PostProcessorProgram(
        [t.SpecialTokenOp(3), t.SpecialTokenOp(3), t.SequenceOp(), t.SpecialTokenOp(3)]))
    path = tmp_path / "misread.mtok"
    path.write_bytes(mtokspec.build(misread))
    cases = tmp_path / "cases.json"
    cases.write_text('["ab", "ba"]', encoding="utf-8")
    assert main(["compare", str(path), "--runtime", "mnn", "--text", str(cases)]) == 1
    out = capsys.readouterr().out
    assert "0/2 texts encode identically" in out and "2 differences explained, 0 unexplained" in out
    assert "because: mnn-post-misread" in out
    assert "  rule                cases\n  mnn-post-misread        2\n" in out  # the count per rule
    # the first differing window, ids with their tokens (769: an id the misread invents, no token)
    assert "    MNN:            [2:'ab'] 769:None 196864:None ...\n    HF (this file): [3:'<s>'] 3:'<s>' 2:'ab' ...\n" in out
    # without special tokens the encodings agree, but the tally of every device output still shows
    # the misread encode (with the prefix and program): exit 1
    assert main(["compare", str(path), "--runtime", "mnn", "--no-special", "--text", str(cases)]) == 1
    assert "2/2 texts encode identically" in capsys.readouterr().out
    assert main(["compare", str(path)]) == 2  # --runtime hf needs --against


def test_vocabulary_api_of_every_kind():
    trees = [_mtok(), t.TiktokenTxtFile(header=t.make_header(), tokens=[b"a", b"ab"]),
             t.BertTxtFile(header=t.make_header(), tokens=[b"[UNK]", b"a"]),
             t.SentencePieceTxtFile(header=t.make_header(), pieces=[(b"<unk>", "0", 2), (b"a", "-1", 1)]),
             t.HuggingFaceTxtFile(header=t.make_header(), tokens=[b"a", b"b", b"ab"], merges=[b"a b"])]
    for tree in trees:
        tok = MnnTokenizer.from_tree(tree)
        vocab = tok.get_vocab()
        assert len(vocab) == tok.vocab_size and tok.token_to_id("a") == vocab["a"]
        assert tok.id_to_token(vocab["a"]) == "a" and tok.id_to_token(10**6) is None


def test_runaway_backtracking_is_refused_not_run():
    # MNN's matcher would take on the order of 40^6 steps here; mtokspec stops within its budget
    with pytest.raises(TokenizerError, match="backtracks catastrophically"):
        R.split(b"a" * 40, b"a*a*a*a*a*a*b", False, "Isolated")
    with pytest.raises(TokenizerError):
        R.split(b"xyz", b"(" * 3000 + b"a" + b")" * 3000, False, "Isolated")


def test_encode_and_decode_cli_with_the_mnn_runtime(tmp_path, capsysbinary):
    from mtokspec.cli import main

    path = tmp_path / "twice.mtok"
    path.write_bytes(mtokspec.build(_mtok(header=t.make_header(special=[3], prefix=[3]),
                                          post_processor=t.PostProcessorProgram([t.SpecialTokenOp(3), t.SequenceOp()]))))
    assert main(["encode", str(path), "ab", "--runtime", "mnn"]) == 0
    assert main(["encode", str(path), "ab", "--runtime", "mnn", "--no-special"]) == 0
    assert main(["encode", str(path), "ab", "--special"]) == 0
    assert capsysbinary.readouterr().out.split(b"\n")[:3] == [b"3 3 2", b"2", b"3 2"]
    assert main(["decode", str(path), "3", "2", "--runtime", "mnn", "--stream"]) == 0
    assert main(["decode", str(path), "3", "2", "--runtime", "mnn"]) == 0
    assert capsysbinary.readouterr().out == b"<s>ab\nab\n"
    assert main(["decode", str(path), "2", "--stream"]) == 2


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=24) | st.text(max_size=16).map(lambda s: s.encode("utf-8", "surrogatepass")))
def test_folded_text_is_mnn_characters_folded(text):
    # the fast fold (valid UTF-8 through the decoder) reads the characters MNN's decoder reads
    chars = U.chars(text)
    assert R._fold_text(text) == (bytes(U.fold(cp) for _, _, cp in chars), [off for off, _, _ in chars] + [len(text)])


# --- the legacy loaders' bulk steps against their row-by-row definitions ---------------------------

_NUMBER = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), st.floats(width=32).map(str),
                    st.sampled_from(["1e39", "-1e39", "3.4028235e38", "3.40282357e38", "1e-46", "0", "-0.0", ".5", "5.",
                                     "+7", "1_0", " 1", "1 ", "١", "nan", "-inf", "0x10", "1e", "", "-", "\n"]),
                    st.text(st.sampled_from("0123456789.eE+- x\n"), max_size=8))


@settings(max_examples=500, deadline=None)
@given(st.lists(_NUMBER, max_size=8))
def test_strtof_all_is_strtof(texts):
    import math

    from mtokspec.runtime.mnn.legacy import strtof, strtof_all
    got, want = strtof_all(texts), [strtof(x) for x in texts]
    assert [math.copysign(1, x) if math.isnan(x) else x for x in got] == \
        [math.copysign(1, x) if math.isnan(x) else x for x in want]
    assert [math.isnan(x) for x in got] == [math.isnan(x) for x in want]


def test_strtof_all_at_once_rounds_and_overflows_as_strtof():
    from mtokspec.runtime.mnn import legacy as L
    plain = ["1e39", "-1e39", "3.4028235e38", "3.40282357e38", "3.4028236e38", "1e-46", "-0.0", ".5", "5.", "+7",
             "0.1", "-12.3456789"]
    assert not "\n".join(plain).translate(L._NOT_PLAIN)  # the one-pass path
    assert L.strtof_all(plain) == [L.strtof(x) for x in plain]
    assert L.strtof_all(plain)[:2] == [float("inf"), float("-inf")]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=4).filter(lambda b: b != b"\n") | st.sampled_from([b"a b", b"\xc4\xa0 t", b"\xff b",
                                                                                       b"a\nb", b"\xe4\xb8", b" "]),
                max_size=10))
def test_legacy_tables_are_their_loops(lines):
    """``first_ids`` is the ``setdefault`` loop; ``_lines_text`` is the line-by-line decode; type 3's
    ranks are the loop over merge lines."""
    from mtokspec.runtime.mnn import legacy as L
    loop: dict = {}
    for i, x in enumerate(lines):
        loop.setdefault(x, i)
    assert L.first_ids(lines, range(len(lines))) == loop
    assert L._lines_text(lines, "surrogateescape") == [x.decode("utf-8", "surrogateescape") for x in lines]
    tree = t.HuggingFaceTxtFile(tokens=lines, merges=lines)
    ranks: dict = {}
    for i, line in enumerate(lines):
        d = line.find(b" ")
        if d != -1:
            ranks.setdefault((L.wide(line[:d]), L.wide(line[d + 1:])), i)
    assert L.HuggingFace(tree).ranks == ranks
    pairs = L._first_space_pairs(lines)
    assert pairs is None or dict(zip(range(len(lines)), pairs)) == {
        i: (L.wide(x[:x.find(b" ")]), L.wide(x[x.find(b" ") + 1:])) for i, x in enumerate(lines)}


def test_legacy_merges_read_at_once_as_line_by_line():
    from mtokspec.runtime.mnn import legacy as L
    lines = [b"#version: 0.2", "Ġ t".encode(), b"a  b", b"a b c", b" x", b"y ", b"a b"]
    assert L._first_space_pairs(lines) == [("#version:", "0.2"), ("Ġ", "t"), ("a", " b"), ("a", "b c"), ("", "x"),
                                           ("y", ""), ("a", "b")]
    assert L._first_space_pairs(lines + [b"nospace"]) is None and L._first_space_pairs([b"\xff b"]) is None
