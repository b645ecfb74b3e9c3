"""What MNN leaves unbounded: a pipeline that grows its text geometrically, a pattern that
backtracks exponentially (mtokspec refuses both per call: :mod:`mtokspec.runtime.bounds`)."""

from __future__ import annotations

from collections.abc import Iterator

from mtokspec.divergences.growth import amplifying_findings, nested_quantifier
from mtokspec.divergences.rule import LintContext, Prediction, Rule
from mtokspec.divergences.rules import TOK
from mtokspec.format import tree as t
from mtokspec.format.validate import ERROR, WARNING


def _predict_growth(ctx: LintContext) -> Iterator[Prediction]:
    if isinstance(ctx.tree, t.MtokFile):
        for path, message in amplifying_findings(ctx.tree):
            yield ERROR, path, f"{message}; MNN bounds no stage, so the device runs out of memory"


def _predict_backtracking(ctx: LintContext) -> Iterator[Prediction]:
    if not isinstance(ctx.tree, t.MtokFile):
        return
    for node, path in t.walk_stage(ctx.tree.pre_tokenizer, "pre_tokenizer"):
        if isinstance(node, t.SplitPreTokenizer) and nested_quantifier(node.pattern):
            yield (WARNING, f"{path}.pattern",
                   "this pattern repeats a group that holds a quantifier or an alternation: MNN's backtracking "
                   "regex engines can take hours on a text that almost matches")


UNBOUNDED_GROWTH = Rule(
    "mnn-unbounded-growth", "pipeline",
    "MNN bounds no stage: a pipeline whose steps grow the text and compound (a Replace whose "
    "content holds its pattern, repeated in a sequence; ByteLevel after ByteLevel; tables mapping a "
    "character to a longer string holding it) runs until the device runs out of memory; mtokspec "
    "refuses past max_expansion x the input (TokenizerError naming the stage)",
    'normalizer Sequence of 40 Replace("a" -> "aa"), text "a" x 64: MNN allocates 2^46 bytes; '
    "mtokspec refuses at the 14th step", f"{TOK}:1219", predict=_predict_growth)
REGEX_BACKTRACKING = Rule(
    "mnn-regex-backtracking", "pre-tokenizer.Split",
    "MNN's own regex engine and std::wregex backtrack without bound: a pattern repeating a group "
    "that holds a quantifier or an alternation ((a+)+, (a|aa)*) can take hours on a short text that "
    "almost matches (or overflow std::wregex's stack); mtokspec refuses within a second or two of "
    "work (UndefinedInMnn)",
    'Split("(a+)+é"), 31 characters: MNN never returns', "transformers/llm/engine/src/tokenizer/unicode.cpp:511",
    predict=_predict_backtracking)

RULES: tuple[Rule, ...] = (UNBOUNDED_GROWTH, REGEX_BACKTRACKING)
