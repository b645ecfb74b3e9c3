"""A Split of a general regular expression without properties (BLOOM's `` ?[^(\\s|[.,!?…])]+``),
spelled by ``--target mnn`` for MNN's ``std::wregex`` path: on drawn patterns and texts, MNN's
Split of the spelled pattern (the ``mnn`` semantics) cuts the text where HF ``tokenizers``' Split
of the original does, live; patterns the spelling cannot carry are refused, never approximated.
mtokspec's own HF semantics reads Oniguruma's nested sets as HF does too."""

from __future__ import annotations

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from mtokspec.convert.mnn_target.variants import Verdict, variant_of
from mtokspec.convert.mnn_target.variants.regex_literals import wregex_pattern
from mtokspec.runtime.hf.pre_tokenizers import Split as HfSplit
from mtokspec.runtime.mnn import regex as R

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) is the reference")

BLOOM = " ?[^(\\s|[.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c])]+"
ATOMS = ("a", "b", " ", "\u00e9", "\u3002", "\\.", "\\|", "\\(", "\\s", "\\S", ".", "[ab]", "[^a\\s]", "[(|)]",
         "[^(\\s|[.,\u00e9])]", "[\\p{L}[.,]]", "[a-c]", "[\u00e9-\u00ea]", "\\t", "\\x85")
QUANTIFIERS = ("", "", "?", "*", "+", "{1,2}", "+?", "{2}", "??")
NON_EMPTY = ("", "+", "{1,2}", "+?", "{2}")
"""The quantifiers of a piece's first atom: an alternative that can match nothing is refused."""
WIDE = ("\u00e9", "\u3002", "[\u00e9-\u00ea]", "\\s", "[^(\\s|[.,\u00e9])]")
"""Atoms past ASCII (or \\s): a pattern without one is refused (MNN's own engine runs it)."""
ALPHABET = "ab \u00e9\u00ea\u3002.,|()\t\n\u3000\u2028\x85\x01c"


def _pieces(draw: st.DrawFn, depth: int) -> str:
    n = draw(st.integers(1, 3))
    out = []
    for k in range(n):
        if depth < 2 and draw(st.integers(0, 5)) == 0:
            atom = draw(st.sampled_from(("(", "(?:"))) + _alternation(draw, depth + 1) + ")"
        else:
            atom = draw(st.sampled_from(ATOMS))
        out.append(atom + draw(st.sampled_from(NON_EMPTY if k == 0 else QUANTIFIERS)))
    return "".join(out)


def _alternation(draw: st.DrawFn, depth: int) -> str:
    return "|".join(_pieces(draw, depth) for _ in range(draw(st.integers(1, 2))))


@st.composite
def patterns(draw: st.DrawFn) -> str:
    """Patterns mostly inside the row (most drawn at random fall outside it and are filtered out):
    each alternative's first atom matches something, and one atom is past ASCII."""
    pattern = _alternation(draw, 0)
    if pattern.isascii() and "\\s" not in pattern and "\\x85" not in pattern:
        pattern = draw(st.sampled_from(WIDE)) + pattern
    return pattern


def _hf_pieces(pattern: str, text: str) -> list[str]:
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated")
    return [p for p, _ in split.pre_tokenize_str(text)]


def _mnn_pieces(spelled: str, text: str) -> list[str]:
    return [p.decode() for p in R.split(text.encode(), spelled.encode(), False, "Isolated")]


def test_bloom_is_the_wregex_row():
    node = {"type": "Split", "pattern": {"Regex": BLOOM}, "behavior": "Isolated", "invert": False}
    row = variant_of("pre_tokenizer", node)
    assert row is not None and row.tag == "regex-wregex" and row.verdict is Verdict.BOUNDED
    spelled = wregex_pattern(BLOOM)
    assert spelled is not None and "[" not in spelled[3:-2]  # the nested set is joined into one class
    for text in ("Hello, world. \u4f60\u597d\u3002", "a\u3000b\u2028c\x85d", "(x|y) ...!", ""):
        assert _mnn_pieces(spelled, text) == _hf_pieces(BLOOM, text), repr(text)


@pytest.mark.parametrize("pattern", ["\\s+$", "a*", "(?i:x)\u00e9", "\\p{L}\u00e9", "abc", "\u00e9(?!x)",
                                     "\u00e9|", "(\u00e9", "\u00e9)", "\u00e9{,2}", "\u00e9++", "\\d\u00e9",
                                     "[a[^b]]\u00e9", "\\1\u00e9", "(a|b)+\u00e9", "(?:a+)*\u00e9",
                                     "((a|b)c)?\u00e9"])
def test_what_the_spelling_refuses(pattern):
    """Anchors, flags, look-around, properties, \\d, back-references, negated nested sets,
    possessive or malformed quantifiers, unbalanced groups, empty matches, ASCII-only patterns, and
    repeated groups of choices or repeats (libstdc++'s search is exponential on those)."""
    assert wregex_pattern(pattern) is None


@settings(max_examples=300, deadline=None)
@given(patterns(), st.lists(st.text(alphabet=ALPHABET, max_size=12), min_size=1, max_size=4))
@example(BLOOM, ["Hello, world.", " \u3000\u3002x", "a\x85|b"])
@example("(a|\u00e9)+?b", ["aab\u00e9b", "b"])
@example("\\s?[^\\s\u3002]+", ["a \u3000b\u3002"])
def test_spelled_patterns_cut_where_hf_does(pattern, texts):
    spelled = wregex_pattern(pattern)
    assume(spelled is not None)
    try:
        tokenizers.Regex(pattern)
    except Exception:  # noqa: BLE001 - a pattern Oniguruma refuses is no HF pipeline
        assume(False)
    for text in texts:
        assert _mnn_pieces(spelled, text) == _hf_pieces(pattern, text), (pattern, spelled, text)


def _ours_pieces(pattern: str, text: str) -> list[str]:
    return HfSplit(pattern).split(text)


@settings(max_examples=200, deadline=None)
@given(patterns(), st.lists(st.text(alphabet=ALPHABET, max_size=12), min_size=1, max_size=4))
@example(BLOOM, ["Hello, world.", " \u3000\u3002x", "a\x85|b"])
@example("[a[b[c]]]\u00e9", ["abc\u00e9", "c\u00e9"])
def test_our_hf_semantics_reads_nested_sets_as_hf(pattern, texts):
    try:
        tokenizers.Regex(pattern)
    except Exception:  # noqa: BLE001 - a pattern Oniguruma refuses is no HF pipeline
        assume(False)
    assume(wregex_pattern(pattern) is not None or "[" in pattern)
    for text in texts:
        assert _ours_pieces(pattern, text) == _hf_pieces(pattern, text), (pattern, text)
