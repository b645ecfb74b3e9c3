"""A Split of one character class (or a run of one), with every behaviour and ``invert``, on a
folder HF ``tokenizers`` builds: ``--target mnn``'s file run through the ``mnn`` semantics gives
HF's ids, live, on drawn texts (leading, trailing and only-delimiter texts among them); an
alternation of classes with Contiguous, MergedWithNext and MergedWithPrevious too (within the
row's bound)."""

from __future__ import annotations

import dataclasses
import itertools
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from mtokspec.convert import from_hf
from mtokspec.convert.mnn_target.variants import Verdict, variant_of
from mtokspec.runtime.mnn import MnnTokenizer

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) is the reference")
from tests._support.variant_folders import folder_for  # noqa: E402

PATTERNS = {"space-run": {"Regex": "\\s+"}, "space": {"Regex": "\\s"}, "word-run": {"Regex": "[\\p{L}\\p{N}]+"},
            "not-comma": {"Regex": "[^,;]"}, "comma": {"String": ","}}
ALTERNATIONS = {"word-or-other": {"Regex": "[\\p{L}\\p{N}]+|[^\\s\\p{L}\\p{N}]+"},
                "letter-or-digit": {"Regex": "\\p{L}+|\\p{N}"}, "comma-or-t": {"Regex": ",|t+"}}
"""Alternations of classes: carried for Contiguous (the runs of their union)."""
BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")
CASES = list(itertools.product(PATTERNS, BEHAVIORS, (False, True))) + \
    list(itertools.product(ALTERNATIONS, ("Contiguous", "MergedWithNext", "MergedWithPrevious"), (False, True)))
ALPHABET = "the,; \t\n\u3000\u2028\x85\u00e91\u0663!.-"


@lru_cache(maxsize=None)
def _pair(name: str, behavior: str, invert: bool, root: Path) -> tuple[object, MnnTokenizer, object]:
    node = {"type": "Split", "pattern": {**PATTERNS, **ALTERNATIONS}[name], "behavior": behavior, "invert": invert}
    row = variant_of("pre_tokenizer", node)
    assert row is not None and row.verdict in (Verdict.EXACT, Verdict.BOUNDED), (node, row)
    folder = folder_for(dataclasses.replace(row, example=node, tag=f"{name}-{behavior}-{invert}"), root)
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    return hf, MnnTokenizer.from_tree(from_hf(folder, target="mnn").tree), row


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("split-classes")


@pytest.mark.parametrize("name,behavior,invert", CASES, ids=[f"{n}-{b}-{i}" for n, b, i in CASES])
def test_a_class_split_gives_hfs_ids(name, behavior, invert, root):
    hf, mnn, row = _pair(name, behavior, invert, root)

    @settings(max_examples=60, database=None)
    @given(st.text(alphabet=ALPHABET, max_size=14))
    @example("")
    @example("  ")
    @example(",,")
    @example(" t h ")
    @example("th,,; ")
    def check(text: str) -> None:
        assume(row.past_bound is None or not row.past_bound(text))  # the row's bound: exact within it
        pieces = [p.decode() for p in mnn.pre_tokenize(text.encode())] if text else []
        assert pieces == [p for p, _ in hf.pre_tokenizer.pre_tokenize_str(text)], repr(text)
        assert mnn.encode(text) == hf.encode(text).ids, repr(text)

    check()
