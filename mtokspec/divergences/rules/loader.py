"""Files on which MNN's C++ code has no defined behaviour."""

from __future__ import annotations

from collections.abc import Iterator

from mtokspec.divergences.rule import LintContext, Prediction, Rule
from mtokspec.divergences.rules import TOK
from mtokspec.format import tree as t
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

RULES: tuple[Rule, ...] = (UNDEFINED,)
