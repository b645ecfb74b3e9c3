"""Normalizers: how ``--target mnn`` carries each HF normalizer on the released format."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from mtokspec.convert.mnn_target.variants import Context, Variant, Verdict as V
from mtokspec.convert.mnn_target.variants.regex_literals import char_run, literal, run_replaces
from mtokspec.format import tree as t

__all__ = ["ROWS", "NMT_REMOVED", "NMT_TO_SPACE"]

NMT_REMOVED = (*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F)
"""HF ``Nmt``: the code points it deletes."""
NMT_TO_SPACE = (0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD)
"""HF ``Nmt``: the code points it turns into a space."""


def _pattern(node: Any) -> tuple[str, str]:
    p = node.get("pattern")
    if isinstance(p, dict):
        if isinstance(p.get("String"), str):
            return "String", p["String"]
        if isinstance(p.get("Regex"), str):
            return "Regex", p["Regex"]
    return "", ""


def _regex_kind(node: Any) -> str:
    kind, pat = _pattern(node)
    if kind != "Regex":
        return kind
    if literal(pat) is not None:
        return "literal"
    run = char_run(pat)
    if run is not None and run_replaces(run, str(node.get("content", ""))) is not None:
        return "run"
    return "other"


def _replaces(steps: list[tuple[str, str]]) -> t.Normalizer:
    nodes: list[t.Normalizer] = [t.ReplaceNormalizer(a, b) for a, b in steps]
    return nodes[0] if len(nodes) == 1 else t.SequenceNormalizer(nodes)


def _lower_regex_literal(node: Any, _old: Any, _ctx: Context) -> t.Normalizer:
    return t.ReplaceNormalizer(literal(_pattern(node)[1]) or "", str(node.get("content", "")))


def _lower_regex_run(node: Any, _old: Any, _ctx: Context) -> t.Normalizer | None:
    run = char_run(_pattern(node)[1])
    steps = run_replaces(run, str(node.get("content", ""))) if run else None
    return _replaces(steps) if steps else None


def _lower_nmt(_node: Any, _old: Any, _ctx: Context) -> t.Normalizer:
    return _replaces([(chr(c), "") for c in NMT_REMOVED] + [(chr(c), " ") for c in NMT_TO_SPACE])


def _lower_precompiled(node: Any, old: Any, _ctx: Context) -> t.Normalizer | None:
    from mtokspec.runtime.hf.precompiled import charsmap_from_json

    if not isinstance(old, t.TableNormalizer):
        return None
    cm = charsmap_from_json(node)
    return None if cm is None else _charsmap_normalizer(cm)


def _charsmap_normalizer(cm) -> t.Normalizer:
    """A ``Precompiled`` character map as MNN can run it: its single-character keys as a table;
    before it, a literal Replace for each character MNN's table normalizer would turn into a space
    whatever the table says (controls, format characters) where the map deletes it or gives text
    the table leaves alone."""
    from mtokspec.runtime.mnn._text import TO_SPACE as _TO_SPACE

    table = cm.per_code_point()
    mapped = dict(table)
    replaces: list[t.Normalizer] = []
    for cp in sorted(_TO_SPACE):
        rep = mapped.get(cp)
        if rep is None or rep == b" ":
            continue  # kept by the map (MNN's space is a loss) or a space on both sides
        text = rep.decode("utf-8")
        if all(ord(c) not in _TO_SPACE and ord(c) not in mapped for c in text):
            replaces.append(t.ReplaceNormalizer(chr(cp), text))
    table_node = t.TableNormalizer(table)
    return t.SequenceNormalizer([*replaces, table_node]) if replaces else table_node


@lru_cache(maxsize=1)
def _format_characters() -> tuple[str, ...]:
    """Every character of general category Cf (this Python's Unicode version)."""
    import unicodedata

    return tuple(chr(cp) for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Cf")


def _lower_bert(_node: Any, old: Any, _ctx: Context) -> t.Normalizer | None:
    """BertNormalizer's ``clean_text`` as MNN can run HF's: literal Replaces before it delete the
    format characters (Cf) HF's clean-up drops and MNN keeps, and turn U+2028/U+2029 (white space
    to HF, kept by MNN) into a space."""
    if not isinstance(old, (t.BertNormalizer, t.BertNFDNormalizer)) or not old.clean_text:
        return None
    replaces: list[t.Normalizer] = [t.ReplaceNormalizer(c, "") for c in _format_characters()]
    replaces += [t.ReplaceNormalizer("\u2028", " "), t.ReplaceNormalizer("\u2029", " ")]
    return t.SequenceNormalizer([*replaces, old])


def _lower_table(kind: str):
    def lower(_node: Any, old: Any, _ctx: Context) -> t.Normalizer | None:
        from mtokspec.convert import unicode_tables

        if not isinstance(old, (t.TableNormalizer, t.NoNormalizer)):
            return None
        return t.TableNormalizer(unicode_tables.normalization_table(kind))
    return lower


_TABLE = "a table of each code point's normal form"
_TABLE_RULE = "mnn-table-normalizer"

ROWS: tuple[Variant, ...] = (
    Variant("normalizer", "NFC", "", V.APPROXIMATED, _TABLE + " (NFC)", _TABLE_RULE, lossy=True,
            example={"type": "NFC"}),
    Variant("normalizer", "NFD", "", V.APPROXIMATED, _TABLE + " (NFD)", _TABLE_RULE, lossy=True,
            example={"type": "NFD"}, lower=_lower_table("NFD")),
    Variant("normalizer", "NFKC", "", V.APPROXIMATED, _TABLE + " (NFKC)", _TABLE_RULE, lossy=True,
            example={"type": "NFKC"}),
    Variant("normalizer", "NFKD", "", V.APPROXIMATED, _TABLE + " (NFKD)", _TABLE_RULE, lossy=True,
            example={"type": "NFKD"}, lower=_lower_table("NFKD")),
    Variant("normalizer", "Precompiled", "", V.APPROXIMATED,
            "the character map per code point, with literal Replaces for the controls MNN's table spaces",
            _TABLE_RULE, lossy=True, why="keys of more than one character (and its grapheme-wise matching) are lost",
            example=None, lower=_lower_precompiled),
    Variant("normalizer", "Nmt", "", V.EXACT, "literal Replaces: the deleted controls, then the spaced characters",
            example={"type": "Nmt"}, lower=_lower_nmt),
    Variant("normalizer", "Lowercase", "", V.APPROXIMATED, "BertNormalizer with lowercase only",
            "mnn-bert-normalizer", example={"type": "Lowercase"}),
    Variant("normalizer", "Strip", "", V.APPROXIMATED, "Strip (type 8)", "mnn-strip-normalizer",
            example={"type": "Strip", "strip_left": True, "strip_right": True}),
    Variant("normalizer", "StripAccents", "", V.APPROXIMATED, "NFD table then mark stripping (type 7)",
            "mnn-bert-normalizer", lossy=True, why="precomposed letters lose their accents too (HF: combining marks only)",
            example={"type": "StripAccents"}),
    Variant("normalizer", "Replace", "pattern=String", V.EXACT, "Replace (literal)", tag="String",
            applies=lambda n: _regex_kind(n) == "String",
            example={"type": "Replace", "pattern": {"String": "``"}, "content": '"'}),
    Variant("normalizer", "Replace", "pattern=Regex, a literal", V.EXACT, "Replace of the unescaped text", tag="Regex-literal",
            applies=lambda n: _regex_kind(n) == "literal", lower=_lower_regex_literal,
            example={"type": "Replace", "pattern": {"Regex": "\\.\\.\\."}, "content": "…"}),
    Variant("normalizer", "Replace", "pattern=Regex, X+ or s{2,} (a run of one character set)", V.BOUNDED,
            "literal Replaces: each character of the set to one of them, 20 passes of 'ss' -> 's', then the content",
            bound="runs of up to 1,048,576 characters", tag="Regex-run", applies=lambda n: _regex_kind(n) == "run",
            lower=_lower_regex_run, example={"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}),
    Variant("normalizer", "Replace", "pattern=Regex, any other", V.IMPOSSIBLE, "nothing (the exporter's empty pattern)",
            "format:normalizer.Replace[Regex]", tag="Regex",
            why="MNN's Replace is literal and no chain of literals matches a general regular expression "
                "(format-next: a regex Replace)", applies=lambda n: _regex_kind(n) in ("other", ""),
            example={"type": "Replace", "pattern": {"Regex": "(\\d)\\d"}, "content": "#"}),
    Variant("normalizer", "Prepend", "", V.EXACT, "Prepend", example={"type": "Prepend", "prepend": "\u2581"}),
    Variant("normalizer", "BertNormalizer", "", V.APPROXIMATED,
            "BertNormalizer (types 5/7), clean_text completed by literal Replaces (Cf deleted, U+2028/9 spaced)",
            "mnn-bert-normalizer", model="wordpiece", lower=_lower_bert,
            example={"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                     "strip_accents": None, "lowercase": True}),
    Variant("normalizer", "ByteLevel", "", V.IMPOSSIBLE, "nothing", "format:normalizer.ByteLevel",
            why="a table normalizer spaces control characters whatever it maps them to, so no table spells "
                "every byte", example={"type": "ByteLevel"}),
    Variant("normalizer", "Sequence", "", V.EXACT, "Sequence of the children's rows (each decided on its own)",
            example={"type": "Sequence", "normalizers": [{"type": "Replace", "pattern": {"String": "a"},
                                                           "content": "b"}, {"type": "Prepend", "prepend": "x"}]}),
)
