"""``--target mnn`` carries BPE's unknown token (HF's ``unk_token`` without ``byte_fallback`` or
``fuse_unk``: the HF quicktour's pipeline) as ``<0xHH>`` rows of its id, one per byte that begins
a character (``choices.bpe_unknown_rows``); both semantics read them as HF's unknown token.  The
folders are trained here with HF ``tokenizers`` and judged live against it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtokspec.convert import from_hf
from mtokspec.format import tree as t
from mtokspec.format.validate import ERROR, validate
from mtokspec.runtime.shared.vocab_rows import BYTE_PIECES, LEAD_BYTES, unknown_rows_id
from mtokspec.tokenizer import load

tokenizers = pytest.importorskip("tokenizers")

TRAIN = ["the quick brown fox jumps over the lazy dog", "hello world, hello there!", "a b c d e f g 1 2 3"] * 20
# known letters, characters no token covers (one, two, three and four UTF-8 bytes), white space
ALPHABET = list("thequickbrownfxjmpsvlazydg ,!.") + ["é", "ж", "中", "😀", "Ω", "\t", "[UNK]"]


def _folder(root: Path, unk: str = "[UNK]", fuse_unk: bool = False) -> Path:
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token=unk, fuse_unk=fuse_unk))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(TRAIN, trainers.BpeTrainer(vocab_size=120, special_tokens=[unk], show_progress=False))
    tok.add_special_tokens([AddedToken(unk, special=True, normalized=False)])
    root.mkdir(parents=True, exist_ok=True)
    tok.save(str(root / "tokenizer.json"))
    return root


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    folder = _folder(tmp_path_factory.mktemp("quicktour"))
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    return hf, from_hf(folder, target="mnn")


def test_the_rows_are_written_and_read_back(pair):
    hf, result = pair
    m = result.tree.model
    assert isinstance(m, t.BPEModel) and not m.byte_fallback
    assert unknown_rows_id(m.vocab, m.byte_fallback) == hf.token_to_id("[UNK]")
    assert not [f for f in validate(result.tree) if f.severity == ERROR]
    assert not any(loss.path == "model.unk_token" for loss in result.losses)  # the lever carries it


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET), max_size=12).map("".join))
def test_both_semantics_give_hf_unknown_ids(pair, text):
    hf, result = pair
    want = hf.encode(text, add_special_tokens=False).ids
    for semantics in ("hf", "mnn"):
        assert load(result.tree, semantics=semantics).encode(text, add_special_tokens=False) == want, semantics


def test_an_unknown_character_is_one_unknown_id(pair):
    hf, result = pair
    unk = hf.token_to_id("[UNK]")
    for text in ("中", "😀", "é", "中😀é"):
        assert load(result.tree, semantics="mnn").encode(text, add_special_tokens=False) == [unk] * len(text)


def test_fuse_unk_and_an_unknown_token_sorting_first_are_left_as_they_were(tmp_path):
    for name, kwargs in (("fused", {"fuse_unk": True}), ("first", {"unk": "!unk"})):
        m = from_hf(_folder(tmp_path / name, **kwargs), target="mnn").tree.model
        assert not any(row[0] in BYTE_PIECES for row in m.vocab), name


def test_other_byte_rows_are_not_the_convention():
    lead = sorted(LEAD_BYTES)
    rows = sorted((BYTE_PIECES[b], 7) for b in lead)
    assert unknown_rows_id(rows, False) == 7
    assert unknown_rows_id(rows, True) is None  # byte fallback: they are byte pieces
    assert unknown_rows_id(rows[1:], False) is None  # a lead byte missing
    assert unknown_rows_id(sorted([*rows, (BYTE_PIECES[0x80], 7)]), False) is None  # a continuation byte
    assert unknown_rows_id(sorted([*rows[:-1], (rows[-1][0], 8)]), False) is None  # two ids
    assert unknown_rows_id(json.loads("[]"), False) is None
