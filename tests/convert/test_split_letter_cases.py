"""Letter-case properties in a Split pattern on MNN's own engine (GPT-4o's o200k pattern, which
Phi-4-mini and Mistral's Tekken ship): ``--target mnn`` spells ``\\p{Lu}``/``\\p{Ll}``/... as ASCII
letters and a letter past ASCII, so MNN's Split (the ``mnn`` semantics) cuts ASCII text where HF
``tokenizers`` does, live (``iOS``, ``OpenCL``: camel case); past ASCII it stays approximated."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mtokspec.convert.mnn_target.variants import Verdict, variant_of
from mtokspec.convert.mnn_target.variants.regex_literals import spell_letter_cases
from mtokspec.runtime.mnn import regex as R
from tools.public_pipelines.variants import O200K_PATTERN as O200K

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) is the reference")

TEKKEN = ("[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|"
          "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
          "[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
ASCII_TEXT = st.text(alphabet="aZbYcX iOS OpenCL HTTPServer 's 'T 12345 .,;/-_()\n\t", max_size=24)


def _hf_pieces(pattern: str, text: str) -> list[str]:
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated")
    return [p for p, _ in split.pre_tokenize_str(text)]


def _mnn_pieces(pattern: str, text: str) -> list[str]:
    return [p.decode() for p in R.split(text.encode(), pattern.encode(), False, "Isolated")]


@pytest.mark.parametrize("pattern", [O200K, TEKKEN], ids=["o200k", "tekken"])
def test_the_row_and_what_it_writes(pattern):
    row = variant_of("pre_tokenizer", {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated",
                                       "invert": False})
    assert row is not None and row.tag == "regex" and row.verdict is Verdict.APPROXIMATED
    spelled = spell_letter_cases(pattern)
    assert spelled is not None and "Lu" not in spelled and "\\p{N}" in spelled
    # what MNN reads unspelled: \p{Lu} as \p{L}, so camel case is one piece
    assert _mnn_pieces(pattern, "OpenCL iOS") != _hf_pieces(pattern, "OpenCL iOS")


@pytest.mark.parametrize("pattern", [O200K, TEKKEN], ids=["o200k", "tekken"])
def test_spelled_cases_cut_ascii_text_where_hf_does(pattern):
    spelled = spell_letter_cases(pattern)
    assert spelled is not None

    @settings(max_examples=150, deadline=None, database=None)
    @given(ASCII_TEXT)
    @example("OpenCL iOS HTTPServer's MnnTaoAvatar/README.md")
    @example("camelCaseWord ALLCAPS'LL x1234y")
    def check(text: str) -> None:
        assert _mnn_pieces(spelled, text) == _hf_pieces(pattern, text), repr(text)

    check()


@pytest.mark.parametrize("pattern", ["\\p{L}+|\\p{N}", "\\P{Lu}\\p{N}", "\\p{Lu}+"])
def test_what_is_not_spelled(pattern):
    """Nothing to spell; a negated case property; a pattern that would be left without a property
    (MNN would run it on std::wregex, where the stand-in letter is only itself)."""
    assert spell_letter_cases(pattern) is None
