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


def _predict_table(ctx: LintContext) -> Iterator[Prediction]:
    for node, path in _nodes(ctx.tree, (t.TableNormalizer,)):
        if node.table:
            yield (WARNING, path,
                   "MNN maps code point by code point through this table (no composition or reordering) "
                   "and turns control and format characters (ZWJ, ZWSP, BOM, bidi marks, C1 controls) into "
                   "a space")


def _predict_bert(ctx: LintContext) -> Iterator[Prediction]:
    for node, path in _nodes(ctx.tree, (t.BertNormalizer, t.BertNFDNormalizer)):
        if node.clean_text or node.lowercase:
            yield (WARNING, path,
                   "MNN's BertNormalizer keeps format characters (Cf) HF's clean_text drops and lower-cases "
                   "one code point to one (HF: full lower-casing, e.g. 'İ')")


def _predict_strip(ctx: LintContext) -> Iterator[Prediction]:
    for node, path in _nodes(ctx.tree, (t.StripNormalizer,)):
        if node.strip_left or node.strip_right:
            yield (WARNING if node.strip_right else INFO, path,
                   "MNN strips ASCII white space and Zs only (HF also U+0085, U+2028, U+2029)"
                   + ("; its strip_right strips nothing (it reads past the end of the text)" if node.strip_right else ""))


TABLE_NORMALIZER = Rule(
    "mnn-table-normalizer", "normalizer.Table",
    "a table normalizer maps code point by code point (no composition, no reordering) and "
    "turns control and format characters (C0/C1 controls but tab/CR/LF, ZWJ, ZWNJ, ZWSP, BOM, "
    "bidi marks, U+2060-2069, U+FFF0-FFF8) into a space",
    'NFKC table on "e\\u0301": HF "é" (composed), MNN "e\\u0301"; t5 "a\\u200db": HF [3, 9, 2, 115], MNN [3, 9, 3, 115]',
    f"{TOK}:1121", stage="normalizer", applies=_has(t.TableNormalizer, t.LegacyNFKCNormalizer), predict=_predict_table)
BERT_NORMALIZER = Rule(
    "mnn-bert-normalizer", "normalizer.Bert",
    "BertNormalizer: clean_text drops only Cc, NUL and U+FFFD (HF: every C* category); "
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
