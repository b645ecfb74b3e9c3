"""Files on which MNN's C++ code has no defined behaviour."""

from __future__ import annotations

from collections.abc import Iterator

from mtokspec.divergences.rule import LintContext, Prediction, Rule
from mtokspec.divergences.rules import TOK
from mtokspec.format import tree as t
from mtokspec.format.growth import amplifying_findings
from mtokspec.format.validate import ERROR


def _predict(ctx: LintContext) -> Iterator[Prediction]:
    tree = ctx.tree
    if ctx.mnn is None:
        yield ERROR, "model.vocab", str(ctx.undefined)
    if not isinstance(tree, t.MtokFile):
        return
    m = tree.model
    if isinstance(m, t.UnigramModel) and m.byte_fallback:
        have = {tok for tok, _, _ in m.vocab}
        missing = [b for b in range(256) if b"<0x%02X>" % b not in have]
        if missing:
            yield (ERROR, "model.byte_fallback",
                   f"byte_fallback is on but {len(missing)} of the 256 <0xHH> pieces are missing: for such a "
                   "byte MNN's Unigram reads scores[-1], out of bounds")
    for node, path in t.walk_stage(tree.decoder, "decoder"):
        if isinstance(node, t.ReplaceDecoder) and not node.pattern:
            yield (ERROR, path,
                   "a Replace decoder with an empty pattern (the exporter writes a Regex pattern so): MNN's "
                   "decode never returns")
        if isinstance(node, t.MetaspaceDecoder) and not node.replacement:
            yield ERROR, path, "a Metaspace decoder with an empty replacement: MNN's decode never returns"


UNDEFINED = Rule(
    "mnn-undefined", "loader",
    "the file makes MNN read or write out of bounds or loop forever (an id outside its table, "
    "an empty Replace/Metaspace decoder pattern, byte fallback to a missing <0xHH> piece)",
    "decoder Replace with an empty pattern: MNN's decode never returns", f"{TOK}:1815", predict=_predict)

def _predict_growth(ctx: LintContext) -> Iterator[Prediction]:
    if isinstance(ctx.tree, t.MtokFile):
        for path, message in amplifying_findings(ctx.tree):
            yield ERROR, path, f"{message}; MNN bounds no stage, so the device runs out of memory"


UNBOUNDED_GROWTH = Rule(
    "mnn-unbounded-growth", "pipeline",
    "MNN bounds no stage: a pipeline whose steps grow the text and compound (a Replace whose "
    "content holds its pattern, repeated in a sequence; ByteLevel after ByteLevel; tables mapping a "
    "character to a longer string holding it) runs until the device runs out of memory; mtokspec "
    "refuses past max_expansion x the input (TokenizerError naming the stage)",
    'normalizer Sequence of 40 Replace("a" -> "aa"), text "a" x 64: MNN allocates 2^46 bytes; '
    "mtokspec refuses at the 14th step", f"{TOK}:1219", predict=_predict_growth)

RULES: tuple[Rule, ...] = (UNDEFINED, UNBOUNDED_GROWTH)
