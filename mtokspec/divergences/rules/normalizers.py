"""Normalizers: MNN's table, BertNormalizer and Strip."""

from __future__ import annotations

from collections.abc import Iterator

from mtokspec.divergences.rule import LintContext, Prediction, Rule
from mtokspec.divergences.rules import TOK
from mtokspec.format import tree as t
from mtokspec.format.validate import INFO, WARNING



def _nodes(tree, kinds: tuple[type, ...]) -> Iterator[tuple[object, str]]:
    if isinstance(tree, t.MtokFile):
        for node, path in t.walk_stage(tree.normalizer, "normalizer"):
            if isinstance(node, kinds):
                yield node, path


def _has(*kinds: type):
    return lambda tree: any(True for _ in _nodes(tree, kinds))


def _spaced_reach(tree: t.MtokFile, node: object) -> bool:
    """Whether a character MNN's table turns into a space can reach ``node``, a table: False only
    for a table in the top-level Sequence whose earlier steps (run as MNN runs them) turn each such
    character, alone or between letters, into text without one (``--target mnn``'s BertNormalizer
    clean-up: the controls and format characters are gone before its table)."""
    from mtokspec.runtime.mnn._text import TO_SPACE
    from mtokspec.runtime.mnn.normalizers import from_tree

    seq = tree.normalizer
    if not isinstance(seq, t.SequenceNormalizer) or not any(n is node for n in seq.normalizers):
        return True
    upto = next(k for k, n in enumerate(seq.normalizers) if n is node)
    before = [s for s in map(from_tree, seq.normalizers[:upto]) if s is not None]  # None: a null step
    for cp in TO_SPACE:
        for text in (chr(cp), f"a{chr(cp)}b"):
            out = text.encode("utf-8")
            for step in before:
                out = step.normalize(out)
            if any(ord(c) in TO_SPACE for c in out.decode("utf-8", "replace")):
                return True
    return False


def _predict_table(ctx: LintContext) -> Iterator[Prediction]:
    for node, path in _nodes(ctx.tree, (t.TableNormalizer,)):
        if node.table and _spaced_reach(ctx.tree, node):
            yield (WARNING, path,
                   "MNN maps code point by code point through this table (no composition or reordering) "
                   "and turns control and format characters (ZWJ, ZWSP, BOM, bidi marks, C1 controls) into "
                   "a space")
        elif node.table:
            yield (INFO, path, "MNN maps code point by code point through this table (no composition or "
                               "reordering); no character it would turn into a space reaches it")


def _predict_bert(ctx: LintContext) -> Iterator[Prediction]:
    for node, path in _nodes(ctx.tree, (t.BertNormalizer, t.BertNFDNormalizer)):
        if node.clean_text or node.lowercase:
            yield (WARNING, path,
                   "MNN's BertNormalizer keeps format and private-use characters (Cf, Co) HF's clean_text "
                   "drops and lower-cases one code point to one (HF: full lower-casing, e.g. 'İ')")


def _predict_strip(ctx: LintContext) -> Iterator[Prediction]:
    for node, path in _nodes(ctx.tree, (t.StripNormalizer,)):
        if node.strip_left or node.strip_right:
            yield (WARNING if node.strip_right else INFO, path,
                   "MNN strips ASCII white space and Zs only (HF also U+0085, U+2028, U+2029)"
                   + ("; its strip_right strips nothing (it reads past the end of the text)" if node.strip_right else ""))


_JAMO = ((0x1100, 0x11FF), (0xA960, 0xA97F), (0xD7B0, 0xD7FF))


def _table_case(tree, text: bytes) -> bool:
    """Whether a table normalizer can be why MNN normalizes ``text`` otherwise than HF: it holds a
    character MNN's table spaces, one a table maps, or one NFKC composes with another (a mark, a
    Hangul jamo); a table without rows (legacy NFKC) can be on any text."""
    import unicodedata

    from mtokspec.runtime.mnn._text import TO_SPACE

    keys: set[int] = set()
    for node, _ in _nodes(tree, (t.TableNormalizer, t.LegacyNFKCNormalizer)):
        if not getattr(node, "table", None):
            return True
        keys.update(cp for cp, _ in node.table)
    for ch in text.decode("utf-8", "replace"):
        cp = ord(ch)
        if (cp in TO_SPACE or cp in keys or unicodedata.category(ch)[0] == "M"
                or any(lo <= cp <= hi for lo, hi in _JAMO)):
            return True
    return False


TABLE_NORMALIZER = Rule(
    "mnn-table-normalizer", "normalizer.Table",
    "a table normalizer maps code point by code point (no composition, no reordering) and "
    "turns control and format characters (C0/C1 controls but tab/CR/LF, ZWJ, ZWNJ, ZWSP, BOM, "
    "bidi marks, U+2060-2069, U+FFF0-FFF8) into a space",
    'NFKC table on "e\\u0301": HF "é" (composed), MNN "e\\u0301"; t5 "a\\u200db": HF [3, 9, 2, 115], MNN [3, 9, 3, 115]',
    f"{TOK}:1121", stage="normalizer", applies=_has(t.TableNormalizer, t.LegacyNFKCNormalizer), predict=_predict_table,
    case=_table_case)
BERT_NORMALIZER = Rule(
    "mnn-bert-normalizer", "normalizer.Bert",
    "BertNormalizer: clean_text drops only Cc, NUL and U+FFFD (HF: also Cf and Co, not Cn); "
    "lower-casing is one-to-one (HF: full lower-casing); accents go only with an NFD table; "
    "Unicode 15.0 categories",
    'clean_text on "a\\u200bb": HF "ab", MNN "a\\u200bb"; lowercase "İ": HF "i̇", MNN "İ"',
    f"{TOK}:1252", stage="normalizer", applies=_has(t.BertNormalizer, t.BertNFDNormalizer), predict=_predict_bert)
STRIP_NORMALIZER = Rule(
    "mnn-strip-normalizer", "normalizer.Strip",
    "Strip removes ASCII white space and category Zs only (HF: every White_Space character, "
    "e.g. U+0085, U+2028), and strip_right removes nothing at all (MNN's loop decodes the "
    "character at the end of the text, not the last one)",
    'strip_right on "a ": HF "a", MNN "a "; strip_left on "\\u2028a": HF "a", MNN "\\u2028a"', f"{TOK}:1200",
    stage="normalizer", applies=_has(t.StripNormalizer), predict=_predict_strip)

RULES: tuple[Rule, ...] = (TABLE_NORMALIZER, BERT_NORMALIZER, STRIP_NORMALIZER)
