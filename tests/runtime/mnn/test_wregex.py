"""The ``std::wregex`` path of the ``mnn`` semantics: libstdc++'s work counted and refused where
MNN hangs or crashes; empty matches cut the text as MNN's split cuts it.

MNN's answers here were recorded with ``../shared/tools/mnn-reference`` (``mnn_tok encode-raw``) at
the corpus's MNN commit."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from mtokspec import Tokenizer, UndefinedInMnn
from mtokspec.format import tree as t
from mtokspec.runtime.mnn import wregex, wregex_compile
from tools import hostile

CHARS = ["a", "b", "é", " ", "1", "\t"]
# every character, and every character as a continuation ("##a"): a piece's ids show its bounds
_VOCAB = sorted([(c.encode(), i) for i, c in enumerate(CHARS)] + [(("##" + c).encode(), i + 6) for i, c in enumerate(CHARS)])


def _split_tok(pattern: str) -> Tokenizer:
    tree = hostile._file(pre=t.SplitPreTokenizer(pattern, False, t.SplitBehavior.Isolated),
                         model=t.WordPieceModel("[UNK]", "##", 100, _VOCAB))
    return Tokenizer.from_tree(tree, semantics="mnn")


# (pattern, text, MNN's ids): recorded from mnn_tok
RECORDED = [
    ("\\d*|é", "aa béa11a", [0, 0, 3, 1, 2, 0, 4, 10, 0]),  # empty matches cut "aa b" into characters
    ("\\d*|é", "1\taéb", [4, 5, 0, 2, 1]),
    ("(a*)*?|é", "\t\taa", [5, 5, 0, 6]),
    ("é*?((a*)+)*", "11aé11", [4, 4, 0, 2, 4, 4]),
    ("(a+)+é", "a" * 10 + "b", [0, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7]),
    ("(a+)+é", "a" * 10 + "é", [0, 6, 6, 6, 6, 6, 6, 6, 6, 6, 8]),
]


@pytest.mark.parametrize("pattern,text,ids", RECORDED)
def test_empty_matches_cut_the_text_as_mnn_does(pattern, text, ids):
    assert _split_tok(pattern).encode(text, add_special_tokens=False) == ids


def test_exponential_backtracking_is_refused_where_mnn_hangs():
    # MNN: 0.1 s at 20 characters, 1.1 s at 24, doubling with each one; 31 never returns
    tok = _split_tok("(a+)+é")
    with pytest.raises(UndefinedInMnn, match="backtracks catastrophically"):
        tok.encode("a" * 30 + "!", add_special_tokens=False)
    with pytest.raises(UndefinedInMnn, match="backtracks catastrophically"):
        _split_tok("(a|aa)+é$").encode("a" * 40 + "!")


def test_a_match_past_the_stack_is_refused_where_mnn_crashes():
    # MNN: answers on 26,171 characters of "[^é]+", SIGSEGV from 26,523 (8 MiB stack)
    tok = Tokenizer.from_tree(hostile._file(pre=t.SplitPreTokenizer("[^é]+", False, t.SplitBehavior.Isolated)),
                              semantics="mnn")
    assert len(tok.encode("b" * 20_000, add_special_tokens=False)) == 20_000
    with pytest.raises(UndefinedInMnn, match="overflows an 8 MiB stack"):
        tok.encode("b" * 30_000, add_special_tokens=False)
    # short matches of a long text are fine: each attempt is shallow
    assert len(tok.encode("bé" * 20_000, add_special_tokens=False)) == 40_000


def test_the_hf_semantics_still_answers():
    tree = hostile._file(pre=t.SplitPreTokenizer("(a+)+é", False, t.SplitBehavior.Isolated))
    assert Tokenizer.from_tree(tree).encode("a" * 30 + "!") is not None


def test_unreadable_patterns_are_not_checked():
    assert wregex_compile.compile("(a)\\1é") is None  # a back-reference
    assert wregex_compile.compile("[[:alpha:]]é") is None
    assert wregex_compile.compile("(a+)+é") is not None


# --- the emulation's searches are ECMAScript's: the same matches as re's on plain patterns ----------

_ATOMS = ["a", "b", "é", ".", "[aé]", "[^a]", "\\w", "\\s", "\\d", " ", "(a|b)", "(?:é|ab)", "[0-9é]"]
_QUANT = ["", "", "*", "+", "?", "{1,2}", "{2}", "*?", "+?"]


@st.composite
def _patterns(draw):
    parts = [draw(st.sampled_from(_ATOMS)) + draw(st.sampled_from(_QUANT)) for _ in range(draw(st.integers(1, 4)))]
    pattern = "".join(parts)
    if draw(st.booleans()):
        pattern += "|" + draw(st.sampled_from(_ATOMS)) + draw(st.sampled_from(_QUANT))
    return pattern


@settings(max_examples=300, deadline=None)
@given(_patterns(), st.text(alphabet="abé 1\t", max_size=14))
def test_emulated_search_finds_re_matches(pattern, text):
    program = wregex_compile.compile(pattern)
    assert program is not None
    steps, spans = wregex.check(program, text, 10**6, pattern.encode())
    assert spans == [m.span() for m in re.finditer(pattern, text, re.ASCII)]
    assert steps >= len(spans)
