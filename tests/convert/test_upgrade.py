"""Legacy tokenizer.txt -> .mtok upgrade: parity with the reference tokenizers, losses, CLI.

Two oracles for every upgraded tree: HF ``tokenizers`` loading ``to_hf(tree)`` and
mtokspec's runtime, ``mtokspec.Tokenizer.from_tree(tree)``.  Both are compared with
the corpus references (ids of ``encode(add_special_tokens=False)``, ``decode(skip_special_tokens=
False)``) and with each other.

Measured parity (texts whose ids equal the reference; en/zh/code/edge/mixed = 300/200/200/46/200):
  type 1  gpt2.tiktoken as a type-1 file vs tiktoken (ref_gpt2.json)       946/946
          whisper.tiny/mnn.txt vs HF                                       946/946
  type 3  roberta-base/mnn.txt vs HF                                       946/946
  type 2  bert-base-cased-derived/mnn.txt (cased) vs HF                    946/946
  type 0  phi-3-mini as a type-0 file, scores = merge order, vs HF         945/946 (rstrip)
          t5-small/mnn.txt (fallback path: Unigram model, scores all 0.0)
            BPE + identity (defaults)      0/0/0/6/1      =   7/946
            Unigram (Zipf scores) + nmt_nfkc 225/194/157/44/186 = 806/946
  decoding the reference ids gives the reference text for every case above.
"""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path

import pytest

import mtokspec
from mtokspec import Tokenizer
from mtokspec.format import tree as t
from mtokspec.convert import ConversionError, to_hf
from mtokspec.convert.upgrade import (GPT2_PATTERN, byte_level_spelling, sentencepiece_merges,
                                      tiktoken_merges, upgrade)
from tests._support import corpus_path

SETS = ("en", "zh", "code", "edge", "mixed")

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (test dependency) is the oracle")


def _texts(name: str) -> list[str]:
    return json.loads((corpus_path() / "text" / f"{name}.json").read_text(encoding="utf-8"))


def _hf(tree: t.MtokFile):
    return tokenizers.Tokenizer.from_str(json.dumps(to_hf(tree)))


def _runtime(tree: t.MtokFile):
    """mtokspec's own runtime (the hf semantics) on the tree: the second oracle, always compared."""
    return Tokenizer.from_tree(tree)


def _roundtrip(tree: t.MtokFile) -> t.MtokFile:
    """What a reader of the written file sees (also checks the tree builds)."""
    out = mtokspec.parse(mtokspec.build(tree))
    assert isinstance(out, t.MtokFile)
    return out


def _parity(tree: t.MtokFile, refs: dict[str, tuple[list, list]]) -> dict[str, tuple[int, int, int]]:
    """Per set: (#texts, #ids equal to the reference, #decodes equal); runtime must equal HF."""
    hf, rt = _hf(tree), _runtime(tree)
    out = {}
    for name, (ids, decoded) in refs.items():
        texts = _texts(name)
        assert len(texts) == len(ids) == len(decoded)
        same = dec = 0
        for text, want, want_text in zip(texts, ids, decoded):
            got = hf.encode(text, add_special_tokens=False).ids
            same += got == want
            dec += hf.decode(want, skip_special_tokens=False) == want_text
            assert rt.encode(text) == got, (name, text[:60])
            assert rt.decode(want) == hf.decode(want, skip_special_tokens=False), (name, text[:60])
        out[name] = (len(texts), same, dec)
    return out


def _hf_refs(folder: str) -> dict[str, tuple[list, list]]:
    refs = {}
    for name in SETS:
        d = json.loads((corpus_path() / "tok" / folder / f"ref_{name}.json").read_text(encoding="utf-8"))
        refs[name] = (d["no_special"], d["decode_no_special"])
    return refs


def _txt(folder: str):
    return mtokspec.parse((corpus_path() / "tok" / folder / "mnn.txt").read_bytes())


def _all_equal(figures: dict) -> None:
    for name, (n, same, dec) in figures.items():
        assert (same, dec) == (n, n), (name, figures)


def _paths(result) -> set[str]:
    return {loss.path for loss in result.losses}


# ------------------------------------------------------------------------------------------------
# type 1 TIKTOKEN


@pytest.fixture(scope="module")
def gpt2_tokens() -> list[bytes]:
    lines = (corpus_path() / "tiktoken" / "gpt2.tiktoken").read_bytes().split(b"\n")
    tokens = []
    for i, line in enumerate(x for x in lines if x):
        b64, rank = line.split(b" ")
        assert int(rank) == i  # line index = rank, as a type-1 file needs
        tokens.append(base64.b64decode(b64))
    return tokens


@pytest.fixture(scope="module")
def gpt2_ref() -> dict:
    return json.loads((corpus_path() / "tiktoken" / "ref_gpt2.json").read_text(encoding="utf-8"))


def _type1(tokens: list[bytes], special: list[int] = ()) -> t.TiktokenTxtFile:
    tree = t.TiktokenTxtFile(t.make_header(special, trailing_space=True), list(tokens))
    return mtokspec.parse(mtokspec.build(tree))  # as a file on disk


def test_tiktoken_merges_are_gpt2_merges_txt(gpt2_tokens):
    """The derivation from ranks gives GPT-2's own merges.txt, in order (roberta ships it)."""
    merges, unreachable = tiktoken_merges(gpt2_tokens)
    assert unreachable == []
    lines = (corpus_path() / "tok" / "roberta-base" / "merges.txt").read_bytes().split(b"\n")
    want = [x for x in lines[1:] if x]
    spell = [byte_level_spelling(tok) for tok in gpt2_tokens]
    got = [spell[a] + b" " + spell[b] for a, b, _ in sorted(merges, key=lambda m: m[2])]
    assert len(got) == len(want) == 50000
    assert got == want


def test_type1_gpt2_matches_tiktoken(gpt2_tokens, gpt2_ref):
    assert gpt2_ref["pat_str"] == GPT2_PATTERN
    result = upgrade(_type1(gpt2_tokens))
    tree = _roundtrip(result.tree)
    assert isinstance(tree.pre_tokenizer, t.SequencePreTokenizer)
    split, byte_level = tree.pre_tokenizer.pretokenizers
    assert (split.pattern, split.invert, split.behavior) == (GPT2_PATTERN, False, 0)
    assert byte_level == t.ByteLevelPreTokenizer(False)
    assert isinstance(tree.decoder, t.ByteLevelDecoder)
    assert len(tree.model.vocab) == 50256 and len(tree.model.merges) == 50000
    refs = {name: (gpt2_ref[name]["ids"], gpt2_ref[name]["decode"]) for name in SETS}
    figures = _parity(tree, refs)
    assert figures == {"en": (300, 300, 300), "zh": (200, 200, 200), "code": (200, 200, 200),
                       "edge": (46, 46, 46), "mixed": (200, 200, 200)}
    assert "pre_tokenizer" in _paths(result)


def test_type1_special_ids_become_added_tokens(gpt2_tokens, gpt2_ref):
    result = upgrade(_type1(gpt2_tokens + [b"<|endoftext|>"], special=[50256]))
    tree = _roundtrip(result.tree)
    assert tree.added_tokens == [t.AddedToken(50256, True, False, False, "<|endoftext|>")]
    assert all(a != 50256 and b != 50256 for a, b, _ in tree.model.merges)
    hf, rt = _hf(tree), _runtime(tree)
    texts, ids = _texts("mixed"), gpt2_ref["mixed"]["ids"]
    hits = 0
    for text, want in zip(texts, ids):
        got = hf.encode(text, add_special_tokens=False).ids
        assert rt.encode(text) == got
        if "<|endoftext|>" in text:  # tiktoken's reference encodes it as ordinary text
            hits += 1
            assert got.count(50256) == text.count("<|endoftext|>")
            assert hf.decode(got, skip_special_tokens=False) == text
        else:
            assert got == want
    assert hits == 1


def test_type1_whisper_mnn_txt_matches_hf():
    result = upgrade(_txt("whisper.tiny"))
    tree = _roundtrip(result.tree)
    tj = json.loads((corpus_path() / "tok" / "whisper.tiny" / "tokenizer.json").read_text(encoding="utf-8"))
    want = sorted((a["id"], a["content"]) for a in tj["added_tokens"])  # 1608, 107 of them special
    assert [(a.id, a.content) for a in tree.added_tokens] == want
    assert any("empty token line" in loss.what for loss in result.losses)
    figures = _parity(tree, _hf_refs("whisper.tiny"))
    _all_equal(figures)


def test_type1_unreachable_token_and_custom_pattern():
    tokens = [b"a", b"b", b"c", b"ab", b"abc", b"bc", b"cac"]  # 'cac' is no merge of two tokens
    result = upgrade(_type1(tokens), split_pattern=r"\S+|\s+")
    tree = result.tree
    assert tree.pre_tokenizer.pretokenizers[0].pattern == r"\S+|\s+"
    merges, unreachable = tiktoken_merges(tokens)
    assert unreachable == [6]
    assert sorted((a, b) for a, b, _ in merges) == [(0, 1), (1, 2), (3, 2)]
    assert any(loss.path == "tokens" and "unreachable" in loss.replacement for loss in result.losses)
    hf = _hf(_roundtrip(tree))
    assert hf.encode("abc").ids == [4]
    assert hf.encode("bcab").ids == [5, 3]
    assert hf.encode("cac").ids == [2, 0, 2]  # tiktoken's whole-piece shortcut would give [6]
    with pytest.raises(ConversionError):
        upgrade(_type1(tokens), split_pattern="(unclosed")


# ------------------------------------------------------------------------------------------------
# type 3 HUGGINGFACE, type 2 BERT


def test_type3_roberta_matches_hf():
    src = _txt("roberta-base")
    result = upgrade(src)
    tree = _roundtrip(result.tree)
    assert tree.pre_tokenizer == t.ByteLevelPreTokenizer(True)
    assert len(tree.model.merges) == len(src.merges) - 1  # '#version: 0.2' skipped
    assert [a.id for a in tree.added_tokens] == [0, 1, 2, 3, 50264]
    figures = _parity(tree, _hf_refs("roberta-base"))
    _all_equal(figures)


def test_type3_bad_merge_lines_are_skipped_with_a_loss():
    src = t.HuggingFaceTxtFile(t.make_header(), [b"a", b"b", b"ab", b"c"],
                               [b"#version: 0.2", b"a b", b"b c", b"nospace"], True)
    result = upgrade(src)
    assert result.tree.model.merges == [(0, 1, 0)]
    assert any(loss.path == "merges" and loss.may_change_tokenization for loss in result.losses)


def test_type2_bert_cased_matches_hf():
    result = upgrade(_txt("bert-base-cased-derived"))
    tree = _roundtrip(result.tree)
    assert tree.normalizer == t.BertNormalizer(True, True, False, False)
    assert tree.model.unk_token == "[UNK]" and tree.model.max_input_chars_per_word == 100
    figures = _parity(tree, _hf_refs("bert-base-cased-derived"))
    _all_equal(figures)
    assert {"normalizer", "model"} <= _paths(result)


def test_type2_lowercase_option():
    result = upgrade(_txt("bert-base-cased-derived"), lowercase=True)
    tree = _roundtrip(result.tree)
    assert isinstance(tree.normalizer, t.BertNFDNormalizer)
    assert tree.normalizer.lowercase and tree.normalizer.strip_accents and tree.normalizer.nfd_table
    hf = _hf(tree)
    assert hf.encode("HÉLLO Wörld").ids == hf.encode("hello world").ids
    assert _runtime(tree).encode("HÉLLO Wörld") == hf.encode("HÉLLO Wörld").ids


# ------------------------------------------------------------------------------------------------
# type 0 SENTENCEPIECE


def _phi3_as_type0() -> tuple[t.SentencePieceTxtFile, dict]:
    """phi-3-mini's vocab written the way the sp_model path of the exporter writes it.

    Its tokenizer.json has no scores; SentencePiece BPE's are such that a piece's merge comes
    first in HF's merge list, so score = -(index of the first merge making the piece).
    """
    tj = json.loads((corpus_path() / "tok" / "phi-3-mini" / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = {i: tok for tok, i in tj["model"]["vocab"].items()}
    added = {a["id"]: a["content"] for a in tj["added_tokens"]}
    first: dict[str, int] = {}
    for k, m in enumerate(tj["model"]["merges"]):
        left, right = m.split(" ", 1) if isinstance(m, str) else m
        first.setdefault(left + right, k)
    pieces = []
    for i in range(max([*vocab, *added]) + 1):
        tok = vocab.get(i, added.get(i))
        ptype = 2 if i == 0 else 3 if i in (1, 2) else 6 if (tok.startswith("<0x") and len(tok) == 6) else 1
        score = repr(float(-first.get(tok, 10**6))) if ptype == 1 and i < 32000 else "0.0"
        pieces.append((tok.replace("\u2581", " ").encode("utf-8"), score, ptype))
    src = t.SentencePieceTxtFile(t.make_header(sorted(added), [32000], trailing_space=True), pieces)
    return mtokspec.parse(mtokspec.build(src)), tj


def test_sentencepiece_bpe_gives_hf_merges_and_ids():
    src, tj = _phi3_as_type0()
    result = upgrade(src)
    tree = _roundtrip(result.tree)
    assert tree.model.byte_fallback
    doc = to_hf(tree)
    want = [m.split(" ", 1) if isinstance(m, str) else list(m) for m in tj["model"]["merges"]]
    assert doc["model"]["merges"] == want  # 61,249 merges, same order
    hf, rt = _hf(tree), _runtime(tree)
    misses = []
    for name in SETS:
        ref = json.loads((corpus_path() / "tok" / "phi-3-mini" / f"ref_{name}.json").read_text(encoding="utf-8"))
        for i, text in enumerate(_texts(name)):
            got = hf.encode(text, add_special_tokens=False).ids
            assert rt.encode(text) == got
            if got != ref["no_special"][i]:
                misses.append((name, i))
            assert hf.decode(ref["no_special"][i], skip_special_tokens=False) == ref["decode_no_special"][i]
    # the one miss: '<|user|>\n...' -- HF's <|user|> has rstrip (eats the newline), not in the file
    assert misses == [("mixed", 15)]
    assert "\n" in _texts("mixed")[15] and any("rstrip" in loss.what for loss in result.losses)


T5_FIGURES = {
    # (sentencepiece_model, sentencepiece_normalization) -> ids equal to HF per set
    ("bpe", "identity"): {"en": 0, "zh": 0, "code": 0, "edge": 6, "mixed": 1},
    ("unigram", "nmt_nfkc"): {"en": 225, "zh": 194, "code": 157, "edge": 44, "mixed": 186},
}


@pytest.mark.parametrize("model,normalization", sorted(T5_FIGURES))
def test_t5_fallback_file_measured(model, normalization):
    """t5-small is a Unigram model; its mnn.txt (exporter fallback path) has every score 0.0 and
    every type 1.  Measured, not exact: the file has neither the algorithm, the scores, the
    Precompiled normalizer nor the unk token."""
    src = _txt("t5-small")
    assert {p[1] for p in src.pieces} == {"0.0"} and {p[2] for p in src.pieces} == {1}
    result = upgrade(src, sentencepiece_model=model, sentencepiece_normalization=normalization)
    tree = _roundtrip(result.tree)
    assert isinstance(tree.model, t.BPEModel if model == "bpe" else t.UnigramModel)
    assert "pieces.score" in _paths(result) and "normalizer" in _paths(result)
    figures = _parity(tree, _hf_refs("t5-small"))
    assert {k: same for k, (_, same, _) in figures.items()} == T5_FIGURES[(model, normalization)]
    assert all(dec == n for n, _, dec in figures.values())  # decoding the reference ids is exact


def test_t5_unigram_scores_follow_zipf():
    tree = upgrade(_txt("t5-small"), sentencepiece_model="unigram").tree
    n = len(tree.model.vocab)
    scores = {i: s for _, i, s in tree.model.vocab}
    h = math.log(math.log(n) + 0.5772156649015329)
    assert scores[0] == pytest.approx(-h) and scores[999] == pytest.approx(-math.log(1000) - h)
    assert tree.model.unk_id == 2  # the piece named <unk> (no piece has type 2)


def test_sentencepiece_merges_order():
    pieces = [("a", 0.0, 1), ("b", 0.0, 1), ("ab", -1.0, 1), ("abb", -0.5, 1), ("bb", -2.0, 1)]
    vocab = {p[0]: i for i, p in enumerate(pieces)}
    merges = sentencepiece_merges(pieces, vocab, [2, 3, 4])
    # abb (-0.5): ab+b, a+bb by (id(l), id(r)); then ab (-1.0); then bb (-2.0)
    assert [(a, b) for a, b, _ in merges] == [(0, 4), (2, 1), (0, 1), (1, 1)]
    assert [r for _, _, r in merges] == [0, 1, 2, 3]


def test_sentencepiece_piece_types():
    pieces = [(b"<unk>", "0", 2), (b"<s>", "0", 3), (b"<0x41>", "0", 6), (b" ", "-1", 1),
              (b"x", "-2", 1), (b" x", "-3", 1), (b"<u>", "0", 4), (b"xx", "-4", 5)]
    src = t.SentencePieceTxtFile(t.make_header([1], [], [1]), pieces)
    result = upgrade(src)
    tree = result.tree
    vocab = dict(tree.model.vocab)
    assert "\u2581x".encode() in vocab and b" x" not in vocab  # the exporter's rewrite undone
    assert tree.model.byte_fallback
    assert [(a.id, a.special, a.content) for a in tree.added_tokens] == [(1, True, "<s>"), (6, False, "<u>")]
    assert tree.post_processor == t.PostProcessorProgram([t.SpecialTokenOp(1), t.SequenceOp()])
    assert tree.bos_token == "<s>"
    assert {(a, b) for a, b, _ in tree.model.merges} == {(3, 4)}  # unused 'xx' gets none
    assert any("unused" in loss.what for loss in result.losses)
    hf = _hf(_roundtrip(tree))
    assert hf.encode("x A<u>", add_special_tokens=True).ids == [1, 5, 3, 2, 6]
    assert hf.decode([1, 5, 3, 2, 6], skip_special_tokens=True) == "x A<u>"


# ------------------------------------------------------------------------------------------------
# errors and strict mode


def test_not_a_legacy_tree():
    with pytest.raises(ConversionError):
        upgrade(t.MtokFile())
    with pytest.raises(ConversionError):
        upgrade(t.BertTxtFile(), strict=True)  # a legacy file always lacks something
    with pytest.raises(ConversionError):
        upgrade(t.SentencePieceTxtFile(pieces=[(b"a", "0", 1)]), sentencepiece_model="wordpiece")


def test_bert_non_utf8_token_is_an_error():
    with pytest.raises(ConversionError) as e:
        upgrade(t.BertTxtFile(t.make_header(), [b"[UNK]", b"\xff"]))
    assert not e.value.losses


# ------------------------------------------------------------------------------------------------
# CLI


def _cli(argv: list[str]) -> int:
    import argparse

    from mtokspec.cli import upgrade as command

    parser = argparse.ArgumentParser(prog="mtokspec")
    sub = parser.add_subparsers(dest="command")
    command.register(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def _small_type1(tmp_path: Path) -> Path:
    src = t.TiktokenTxtFile(t.make_header([4], trailing_space=True), [b"a", b"b", b" ", b"ab", b"<|e|>"])
    path = tmp_path / "tokenizer.txt"
    path.write_bytes(mtokspec.build(src))
    return path


def test_cli_writes_the_upgraded_tree(tmp_path, capsys):
    src = _small_type1(tmp_path)
    out = tmp_path / "tokenizer.mtok"
    assert _cli(["upgrade", str(src), "-o", str(out), "--split-pattern", r"\S+|\s+"]) == 0
    want = upgrade(mtokspec.parse(src.read_bytes()), split_pattern=r"\S+|\s+").tree
    assert out.read_bytes() == mtokspec.build(want)
    err = capsys.readouterr().err
    assert "type-1" in err and "loss" in err
    assert _cli(["upgrade", str(src), "-o", str(out), "--report", "json"]) == 0
    report = json.loads(capsys.readouterr().err)
    assert report["legacy_type"] == 1 and report["losses"]


def test_cli_strict_and_errors_leave_nothing(tmp_path, capsys):
    src = _small_type1(tmp_path)
    out = tmp_path / "out.mtok"
    assert _cli(["upgrade", str(src), "-o", str(out), "--strict"]) == 1
    assert _cli(["upgrade", str(src), "-o", str(out), "--split-pattern", "(bad"]) == 2
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"430 1\n0 0 0\n\n2\nYQ==\n")  # count says 2, one line
    assert _cli(["upgrade", str(bad), "-o", str(out)]) == 2
    mtok = tmp_path / "x.mtok"
    mtok.write_bytes(mtokspec.build(t.MtokFile()))
    assert _cli(["upgrade", str(mtok), "-o", str(out)]) == 2
    assert _cli(["upgrade", str(tmp_path / "missing.txt"), "-o", str(out)]) == 2
    assert _cli(["upgrade", str(src), "-o", str(tmp_path / "no" / "dir.mtok")]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "tokenizer.txt", "x.mtok"]
    capsys.readouterr()


def test_runtime_loads_legacy_files_directly(corpus):
    """Tokenizer.from_file on a tokenizer.txt runs it through upgrade: the same ids as the upgraded tree."""
    import json

    from mtokspec import Tokenizer

    texts = json.loads((corpus / "text" / "en.json").read_text(encoding="utf-8"))[:40]
    for name in ("roberta-base", "bert-base-cased-derived", "whisper.tiny"):
        path = corpus / "tok" / name / "mnn.txt"
        ref = json.loads((corpus / "tok" / name / "ref_en.json").read_text(encoding="utf-8"))
        direct = Tokenizer.from_file(path)
        for i, text in enumerate(texts):
            assert direct.encode(text) == ref["no_special"][i], (name, i)
    with pytest.raises(Exception, match="legacy"):
        Tokenizer.from_file(corpus / "tok" / "roberta-base" / "mnn.mtok", upgrade_options={"lowercase": True})
