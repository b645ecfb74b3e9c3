"""``lint --target mnn``: the findings for each corpus file, their agreement with what MNN did on the
corpus, the CLI, and hand-made files for the rules the corpus does not show."""

from __future__ import annotations

import json

import pytest

import mtokspec
from mtokspec.format import tree as t
from mtokspec.cli import main
from mtokspec.divergences import RULES
from mtokspec import lint  # the public entry point
from tests._support import CORPUS
from tests._support.corpus_rules import EXPECTED_RULES

corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"reference corpus not found at {CORPUS}")

EXPECTED = {
    "bert-base-cased-derived/mnn.mtok": {
        ("warning", "mnn-special-split", "header.special"),
        ("warning", "mnn-bert-normalizer", "normalizer"),
        ("warning", "mnn-wordpiece-bytes", "model"),
        ("warning", "mnn-stream-decode", "decoder"),
        ("info", "mnn-bert-pretokenizer", "pre_tokenizer"),
        ("info", "mnn-wordpiece-cleanup", "decoder"),
        ("info", "mnn-decode-skips-special", "header.special"),
    },
    "bert-base-cased-derived/mnn.txt": {
        ("error", "mnn-legacy-bert", "tokens"),
    },
    "phi-3-mini/mnn.mtok": {
        ("warning", "mnn-bpe-quadratic", "pre_tokenizer"),
        ("warning", "mnn-stream-decode", "decoder.decoders[2]"),
        ("warning", "mnn-added-strip-ascii", "added_tokens[2]"),
        ("info", "mnn-decode-raw-bytes", "decoder.decoders[1]"),
        ("info", "mnn-decode-skips-special", "header.special"),
    },
    "roberta-base/mnn.mtok": {
        ("warning", "mnn-added-strip-ascii", "added_tokens[4]"),
        ("warning", "mnn-regex-engine", "pre_tokenizer"),
        ("info", "mnn-decode-raw-bytes", "decoder"),
        ("info", "mnn-decode-skips-special", "header.special"),
    },
    "roberta-base/mnn.txt": {
        ("warning", "mnn-legacy-gpt2-regex", "tokens"),
    },
    "t5-small/mnn.mtok": {
        ("warning", "mnn-table-normalizer", "normalizer"),
        ("warning", "mnn-unigram-bytes", "model"),
        ("warning", "mnn-stream-decode", "decoder"),
        ("warning", "mnn-clean-up-spaces", "flags"),
        ("info", "mnn-metaspace-every-split", "pre_tokenizer.pretokenizers[1]"),
        ("info", "mnn-metaspace-no-split", "pre_tokenizer.pretokenizers[1]"),
        ("info", "mnn-metaspace-prefix", "pre_tokenizer.pretokenizers[1]"),
        ("info", "mnn-decode-skips-special", "header.special"),
    },
    "t5-small/mnn.txt": {
        ("error", "mnn-legacy-sentencepiece", "pieces"),
        ("warning", "mnn-legacy-sentencepiece", "pieces"),
    },
    "tokenizer-wiki/mnn.mtok": {
        ("warning", "mnn-bpe-quadratic", "pre_tokenizer"),
        ("info", "mnn-decode-raw-bytes", "decoder"),
        ("info", "mnn-decode-skips-special", "header.special"),
    },
    "whisper.tiny/mnn.mtok": {
        ("error", "mnn-post-misread", "post_processor"),
        ("warning", "mnn-clean-up-spaces", "flags"),
        ("warning", "mnn-regex-engine", "pre_tokenizer"),
        ("info", "mnn-decode-raw-bytes", "decoder"),
        ("info", "mnn-decode-skips-special", "header.special"),
    },
    "whisper.tiny/mnn.txt": {
        ("error", "mnn-legacy-tiktoken-greedy", "tokens"),
    },
}


@corpus
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_findings(name):
    found = lint((CORPUS / "tok" / name).read_bytes())
    assert {(f.severity, f.code, f.path) for f in found} == EXPECTED[name]
    assert all(f.code in RULES for f in found)
    assert [f.severity for f in found] == sorted((f.severity for f in found), key=["error", "warning", "info"].index)


@corpus
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_lint_predicts_what_the_corpus_shows(name):
    """Every rule behind a corpus difference of the file is among the lint's findings for it."""
    predicted = {code for _, code, _ in EXPECTED[name]}
    assert EXPECTED_RULES[tuple(name.split("/"))] <= predicted


def _file(**kw) -> t.MtokFile:
    base = dict(header=t.make_header(), model=t.BPEModel(vocab=[(b"a", 0), (b"b", 1)]),
                chat_template="", eos_token="", flags=0, bos_token="", post_processor=t.PostProcessorProgram([]))
    base.update(kw)
    return t.MtokFile(**base)


def _codes(tree) -> set[str]:
    return {f.code for f in lint(tree)}


def test_bos_twice_and_misread():
    twice = _file(header=t.make_header(special=[0], prefix=[0]),
                  post_processor=t.PostProcessorProgram([t.SpecialTokenOp(0), t.SequenceOp()]))
    assert ("error", "mnn-bos-twice") in {(f.severity, f.code) for f in lint(twice)}
    assert "mnn-bos-twice" not in _codes(_file(post_processor=t.PostProcessorProgram([t.SpecialTokenOp(0),
                                                                                   t.SequenceOp()])))
    # 3 special ops + 1 sequence op = 16 bytes = 4 x 4: MNN reads the older layout
    misread = _file(post_processor=t.PostProcessorProgram(
        [t.SpecialTokenOp(0), t.SpecialTokenOp(1), t.SequenceOp(), t.SpecialTokenOp(1)]))
    assert "mnn-post-misread" in _codes(misread)
    assert "mnn-post-misread" not in _codes(_file(post_processor=t.PostProcessorProgram(
        [t.SpecialTokenOp(0), t.SequenceOp(), t.SpecialTokenOp(1)])))


def test_pre_tokenizer_findings():
    digits = _file(pre_tokenizer=t.DigitsPreTokenizer(False))
    assert ("warning", "mnn-digits-no-split") in {(f.severity, f.code) for f in lint(digits)}
    look = _file(pre_tokenizer=t.SplitPreTokenizer(r"\bx|y", False, 0))
    assert ("error", "mnn-regex-engine") in {(f.severity, f.code) for f in lint(look)}
    assert "mnn-regex-engine" not in _codes(_file(pre_tokenizer=t.SplitPreTokenizer(r"\s+", False, 1)))
    # a range is compared by code point (std::wregex without regex::collate, as MNN builds it; the
    # real binary agrees on DeepSeek's [一-龥...]+); a C-locale class such as \s is not exact
    assert "mnn-regex-engine" not in _codes(_file(pre_tokenizer=t.SplitPreTokenizer("[一-龥]+", False, 0)))
    assert "mnn-regex-engine" in _codes(_file(pre_tokenizer=t.SplitPreTokenizer("\\s?[一-龥]+", False, 0)))
    assert "mnn-bpe-quadratic" in _codes(_file())
    assert "mnn-bpe-quadratic" not in _codes(_file(pre_tokenizer=t.ByteLevelPreTokenizer(True)))


def test_undefined_behaviour_is_an_error():
    hang = _file(pre_tokenizer=t.ByteLevelPreTokenizer(True), decoder=t.ReplaceDecoder("", "x"))
    assert ("error", "mnn-undefined") in {(f.severity, f.code) for f in lint(hang)}
    out_of_range = _file(pre_tokenizer=t.ByteLevelPreTokenizer(True), model=t.BPEModel(vocab=[(b"a", 7)]))
    assert ("error", "mnn-undefined") in {(f.severity, f.code) for f in lint(out_of_range)}


def test_chat_template_findings_are_included():
    tree = _file(pre_tokenizer=t.ByteLevelPreTokenizer(True),
                 chat_template="{% if messages|length > 9 %}{{ raise_exception('long') }}{% endif %}"
                               "{% for m in messages %}{{ m['content'] }}{% endfor %}")
    chat = [f for f in lint(tree) if f.path.startswith("chat_template")]
    assert chat and {f.code for f in chat} <= set(RULES)
    assert not [f for f in lint(_file(pre_tokenizer=t.ByteLevelPreTokenizer(True),
                                      chat_template="{% for m in messages %}{{ m.content }}{% endfor %}"))
                if f.path.startswith("chat_template")]


def test_lint_cli(tmp_path, capsys):
    clean = tmp_path / "clean.mtok"
    clean.write_bytes(mtokspec.build(_file(pre_tokenizer=t.SplitPreTokenizer(" ", False, 2))))
    bad = tmp_path / "bad.mtok"
    bad.write_bytes(mtokspec.build(_file(pre_tokenizer=t.DigitsPreTokenizer(False))))
    assert main(["lint", str(clean)]) == 0
    assert main(["lint", "--target", "mnn", "--json", str(bad)]) == 1
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert any(f["code"] == "mnn-digits-no-split" for f in out[0]["findings"])
    assert main(["lint", str(tmp_path / "missing.mtok")]) == 2
