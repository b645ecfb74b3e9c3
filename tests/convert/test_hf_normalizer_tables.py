"""HF's per-character normalizers (``Lowercase``, ``BertNormalizer``, ``StripAccents``) on every code
point: mtokspec's HF semantics and ``--target mnn`` run by the ``mnn`` semantics, judged live
against HF ``tokenizers``, and the measured tables themselves as HF gives them today."""

from __future__ import annotations

import json

import pytest

import mtokspec
from mtokspec import Tokenizer
from mtokspec.convert import from_hf
from mtokspec.convert.mnn_target.variants import rows
from mtokspec.convert.mnn_target.variants.normalizers import hf_lowercase_replaces
from mtokspec.runtime.hf.normalizers import lower_table, lowercase
from mtokspec.runtime.mnn.next import device_tokenizer

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) is the reference")
from tokenizers import normalizers  # noqa: E402

SEP = "|"  # no measured normalizer changes it or puts it into a result
ALL = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and chr(c) != SEP]


def _chunks(size: int = 8192):
    for i in range(0, len(ALL), size):
        yield ALL[i:i + size]


def _folder(tmp_path, normalizer: dict, words: list[str]):
    """A WordLevel folder (its vocabulary ``words``) with ``normalizer``, written as HF's JSON."""
    vocab = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(words)}}
    tj = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": normalizer,
          "pre_tokenizer": {"type": "WhitespaceSplit"}, "post_processor": None, "decoder": None,
          "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(tj), encoding="utf-8")
    return tmp_path


def _mnn_differs(tmp_path, node: dict, past_bound=lambda c: False) -> list[str]:
    """The characters on which ``--target mnn``'s normalizer, run by the ``mnn`` semantics, gives
    other than HF's ``node`` (each between two others, which no measured normalizer joins to it)."""
    folder = _folder(tmp_path, node, ["a"])
    mnn = device_tokenizer(from_hf(folder, target="mnn").tree, "mnn")
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")).normalizer
    bad = []
    for chunk in _chunks():
        text = SEP.join(chunk)
        got = mnn.normalize(text.encode("utf-8")).decode("utf-8").split(SEP)
        want = hf.normalize_str(text).split(SEP)
        assert len(got) == len(want) == len(chunk)
        bad += [c for c, g, w in zip(chunk, got, want) if g != w and not past_bound(c)]
    return bad


def test_the_tables_are_what_this_hf_gives():
    from mtokspec.runtime.hf import _normalizer_data as data
    from tools import make_hf_normalizers

    measured = make_hf_normalizers.measure()
    assert measured["lower"] == lower_table() == data.LOWER
    assert measured["strip"] == data.STRIP
    def expanded(ranges):
        return [c for a, b in ranges for c in range(a, b + 1)]

    assert sorted(c for c, x in measured["clean"].items() if not x) == expanded(data.CLEAN_DELETED)
    assert sorted(c for c, x in measured["clean"].items() if x) == expanded(data.CLEAN_SPACED)
    assert sorted(measured["marks"]) == expanded(data.MARKS_DELETED)


def test_hf_semantics_lowercase_every_code_point():
    hf = normalizers.Lowercase()
    for chunk in _chunks():
        text = SEP.join(chunk)
        assert lowercase(text) == hf.normalize_str(text)


@pytest.mark.parametrize("flags", [(True, True, True, True), (True, False, False, False), (False, False, True, False)])
def test_hf_semantics_bert_every_code_point(flags):
    """mtokspec's HF BertNormalizer uses HF's measured classes (clean_text, the nonspacing marks), not
    the ``regex`` module's Unicode; its NFD is Python's (U+11938 decomposes there, not on HF)."""
    from mtokspec.runtime.hf.normalizers import Bert

    hf, ours = normalizers.BertNormalizer(*flags), Bert(*flags)
    for chunk in _chunks():
        text = SEP.join(chunk)
        bad = [c for c, a, b in zip(chunk, hf.normalize_str(text).split(SEP), ours.normalize(text).split(SEP)) if a != b]
        assert bad in ([], ["\U00011938"]), [hex(ord(c)) for c in bad]


def test_mnn_target_lowercase_every_code_point(tmp_path):
    assert _mnn_differs(tmp_path, {"type": "Lowercase"}) == []


def _row(kind: str):
    return next(v for v in rows() if v.stage == "normalizer" and v.type == kind)


@pytest.mark.parametrize("flags", [(True, True, None, True), (True, True, None, False), (False, True, True, False),
                                   (False, False, True, True), (True, False, False, True), (True, True, True, False)])
def test_mnn_target_bert_every_code_point(tmp_path, flags):
    """Every code point, within the row's bound (private use past the BMP with clean_text, the CJK
    Extension E characters MNN spaces, the stand-ins)."""
    clean, chinese, strip, lower = flags
    node = {"type": "BertNormalizer", "clean_text": clean, "handle_chinese_chars": chinese,
            "strip_accents": strip, "lowercase": lower}
    assert _mnn_differs(tmp_path, node, _row("BertNormalizer").past_bound) == []


def test_mnn_target_strip_accents_every_code_point(tmp_path):
    """HF's StripAccents drops combining marks only: a precomposed letter keeps its accent (MNN's
    own stripping decomposes it first)."""
    assert _mnn_differs(tmp_path, {"type": "StripAccents"}, _row("StripAccents").past_bound) == []


def test_past_the_bound(tmp_path):
    """Where the Bert row's bound is: HF deletes private use of plane 15 with clean_text, MNN keeps it."""
    node = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": True,
            "lowercase": True}
    bad = _mnn_differs(tmp_path, node)
    assert "\U000f0000" in bad and "\U0002b820" in bad and "\u093e" not in bad


def test_lowercase_replaces_cover_turkish_and_unicode_16():
    letters = [r.pattern for r in hf_lowercase_replaces()]
    assert len(letters) >= 50 and "\u0130" in letters and "\u1c89" in letters


@pytest.mark.parametrize("node, words, text, want", [
    ({"type": "Lowercase"}, ["i\u0307stanbul", "izmir"], "İstanbul izmir", [1, 2]),
    # Devanagari vowel signs are Mc: HF's strip_accents keeps them, MNN's own stripping drops them
    ({"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
      "lowercase": True}, ["हिन्दी", "hindi"], "हिन्दी Hindi", [0, 2]),
    ({"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
      "lowercase": True}, ["हिनदी", "hindi"], "हिन्दी Hindi", [1, 2]),
    ({"type": "StripAccents"}, ["café", "cafe"], "café", [1]),
])
def test_encodes_as_on_hf(tmp_path, node, words, text, want):
    """Before: MNN kept U+0130 (``İstanbul`` was ``[UNK]`` where HF finds ``i̇stanbul``), dropped
    Devanagari's vowel signs, and StripAccents decomposed ``é``."""
    folder = _folder(tmp_path, node, words)
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    path = tmp_path / "t.mtok"
    path.write_bytes(mtokspec.build(from_hf(folder, target="mnn").tree))
    assert hf.encode(text).ids == want
    assert Tokenizer.from_file(path, semantics="mnn").encode(text) == want
    if node["type"] != "StripAccents":  # the file's own HF reading of type 7 decomposes first (a format loss)
        assert Tokenizer.from_file(path).encode(text) == want
