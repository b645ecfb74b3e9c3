"""HF's ``UnicodeScripts`` on MNN's released format: two Splits of the scripts HF's own table tells
apart (``variants.pre_tokenizers.unicode_scripts_splits``), judged live against HF ``tokenizers``:
the pieces of drawn mixed-script texts, and the table itself as HF gives it today."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtokspec.convert.mnn_target.variants import rows
from mtokspec.convert.mnn_target.variants.pre_tokenizers import unicode_scripts_splits
from mtokspec.format import tree as t
from mtokspec.runtime.hf.scripts import ANY, TOKENIZERS_VERSION, ranges_of, script_ranges
from mtokspec.runtime.mnn import pre_tokenizers as mnn_pre

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) is the reference")
from tokenizers.pre_tokenizers import UnicodeScripts  # noqa: E402

ALPHABET = ("abc", "Z", "é", "ß", "абв", "αβ", "中文", "ひら", "カタ", "ー", "한글", "עב", "عر", "देव", "ไทย",
            "\u0301", "\u200d", "1", "٣", ",", ".", "!", "(", "—", "€", "😀", " ", "  ", "\n", "\t", "\u3000",
            "\ue000", "🟠", "\U0001f970", "\U00020000")
"""Pieces of texts: many scripts, Common and Inherited characters, white space, and characters HF's
table does not list (private use, emoji newer than its Unicode: HF's Any)."""


def _mnn_pieces(text: str) -> list[str]:
    first, pieces = unicode_scripts_splits()
    node = t.SequencePreTokenizer([t.SplitPreTokenizer(first, False, int(t.SplitBehavior.Removed)),
                                   t.SplitPreTokenizer(pieces, True, int(t.SplitBehavior.MergedWithPrevious))])
    return [p.decode("utf-8") for p in mnn_pre.from_tree(node).pre_tokenize([text.encode("utf-8")])]


def _hf_pieces(text: str) -> list[str]:
    return [p for p, _ in UnicodeScripts().pre_tokenize_str(text)]


_past_bound = next(v for v in rows() if v.key == "pre_tokenizer.UnicodeScripts").past_bound or (lambda text: False)
"""The row's bound: a character HF's table does not list (not the space) after a listed one."""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET), max_size=12).map("".join))
def test_mnn_pieces_are_hfs(text):
    if _past_bound(text):
        return
    assert _mnn_pieces(text) == _hf_pieces(text), text


@pytest.mark.parametrize("text", ["", " ", "   abc", "abc def", "abc 中文", "中文ひらがなカタカナー", "a\u0301b",
                                  "x1y", "Hello, world!", "\ue000abc", "🟠 abc", "abc\n\ndef", "Русский text"])
def test_fixed_texts(text):
    assert _mnn_pieces(text) == _hf_pieces(text), text


def test_past_the_bound_mnn_cuts_after_an_unlisted_character():
    """HF joins a character its table does not list, and what follows of the same script, to the
    piece before; MNN's second Split cuts after it (the row's bound)."""
    assert _hf_pieces("a\ue000b") == ["a\ue000b"]
    assert _mnn_pieces("a\ue000b") == ["a\ue000", "b"]


def test_the_table_is_what_hf_gives():
    """The generated table (tools/make_hf_scripts.py) is what this HF tokenizers measures."""
    from tools import make_hf_scripts

    table = ranges_of(*make_hf_scripts.measure())
    ours = script_ranges()
    assert table.get(ANY) == ours[ANY]
    # script names come from the first character of each; compare the partitions
    assert sorted(v for k, v in table.items() if k != ANY) == sorted(v for k, v in ours.items() if k != ANY), (
        f"the table was measured on tokenizers {TOKENIZERS_VERSION}, this is {tokenizers.__version__}")


@pytest.mark.parametrize("text", ["Hello, world. 12 " * 6000, "你好，世界。这是一个测试。" * 8000, "தமிழ் உலகம், " * 8000])
def test_long_texts_stay_within_mnns_search(text):
    """MNN's std::wregex recurses once per character a match takes and its search tries the
    alternatives in turn: no match spans the text (MNN answers 100,000 characters of these in 0.1 s,
    recorded with mnn_tok), and the mnn semantics' step budget agrees."""
    assert "".join(_mnn_pieces(text)) == text
