"""The mnn semantics' compiled parts give what the pure path gives: the same ids on the corpus,
and on generated patterns, texts and files the same matches, the same step count left in the
call's budget, and the same refusals."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec import speedups
from mtokspec.runtime.shared.bounds import budget
from mtokspec.runtime.mnn import regex as R
from mtokspec.runtime.mnn import regex_compile as RC
from mtokspec.testing.strategies import mtok_files
from tests._support import CORPUS

COMPILED = speedups.module()
pytestmark = pytest.mark.skipif(COMPILED is None or not hasattr(COMPILED, "mnn_regex_matches"),
                                reason="the compiled module is not built (or MTOKSPEC_PURE is set)")




def _scan_split(pattern: bytes, text: bytes):
    with budget(len(text)) as b:
        got = (R.scan(text, pattern), R.split(text, pattern, False, "Isolated"),
               R.split(text, pattern, True, "MergedWithPrevious"))
        return got, b.steps


_ATOMS = ["a", "b", "é", ".", "\\s", "\\S", "\\p{L}", "\\p{N}", "\\P{L}", "[a-c]", "[^a\\s]", "[é\\d]", "'s", " ?"]


@st.composite
def patterns(draw, depth: int = 0) -> str:
    def piece() -> str:
        if depth < 3 and draw(st.integers(0, 4)) == 0:
            inner = draw(patterns(depth + 1))
            return draw(st.sampled_from(["(", "(?:", "(?!", "(?i:"])) + inner + ")"
        return draw(st.sampled_from(_ATOMS))

    def quantified() -> str:
        return piece() + draw(st.sampled_from(["", "", "*", "+", "?", "{1,3}", "{2}", "+?", "{0,}"]))

    branches = ["".join(quantified() for _ in range(draw(st.integers(1, 4)))) for _ in range(draw(st.integers(1, 3)))]
    return "|".join(branches)


_TEXT = st.text(st.sampled_from(list("aabbé \t\n'sS1٣中ü!?") + ["\U0001F680", "\u0301"]), max_size=40)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(pattern=patterns(), text=_TEXT)
def test_matcher_same_on_generated_patterns(paths, pattern, text):
    p = pattern.encode()
    if R.uses_wregex(p):
        p += b"|\\p{L}"  # keep it on MNN's own engine
    pure, compiled = paths(lambda: _scan_split(p, text.encode("utf-8", "surrogatepass")))
    assert pure == compiled


@pytest.mark.parametrize("pattern", [b"(a|a)*b", b"(a+)+x", b"a*a*a*a*a*a*b", b"(a|aa)+b", b"\\s+|(a|a)*b", b"((a*)*)*c"])
def test_refusals_are_the_same(paths, pattern):
    for text in [b"a" * n + b"b" for n in range(0, 40, 13)] + [b"a" * 25 + b"!", b"a" * 3_000, "aé".encode() * 30]:
        pure, compiled = paths(lambda: _scan_split(pattern, text))
        assert pure == compiled, (pattern, text[:30])


def test_deep_patterns_stay_pure():
    deep = b"a" * 400 + b"b"  # a branch of 401 nodes: the pure recursion is 400 frames deep
    assert RC.frames(RC.compile_pattern(deep)) > RC.MAX_FRAMES
    R._programs.pop(deep, None)
    assert R._program(deep) is None


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(tree=mtok_files(), text=_TEXT)
def test_generated_files_same_ids(paths, tree, text):
    def encode():
        return mtokspec.Tokenizer.from_tree(tree, semantics="mnn").encode(text)

    pure, compiled = paths(encode)
    assert pure == compiled


def _lines(kind: str, n: int) -> list[str]:
    lines = (CORPUS / "text" / f"bench_{kind}.txt").read_text(encoding="utf-8").splitlines()
    return [x for x in lines if x][:n]


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"reference corpus not found at {CORPUS}")
@pytest.mark.parametrize("name", ["roberta-base/mnn.mtok", "whisper.tiny/mnn.mtok", "tokenizer-wiki/mnn.mtok",
                                  "t5-small/mnn.mtok"])
def test_corpus_same_ids(paths, name):
    texts = _lines("en", 80) + _lines("zh", 80) + _lines("code", 80)

    def encode():
        tok = mtokspec.Tokenizer.from_file(CORPUS / "tok" / name, semantics="mnn")
        return tok.encode_batch(texts)

    pure, compiled = paths(encode)
    assert pure == compiled and pure[0] == "ok"
