"""The legacy ``tokenizer.txt`` types 0-3: MNN runs each with an algorithm of its own."""

from __future__ import annotations

from collections.abc import Iterator

from mtokspec.divergences.rule import LintContext, Prediction, Rule
from mtokspec.divergences.rules import TOK
from mtokspec.format import tree as t
from mtokspec.format.validate import ERROR, WARNING
from mtokspec.runtime.mnn._text import META


def _is(kind: type):
    return lambda tree: isinstance(tree, kind)


def _predict_sentencepiece(ctx: LintContext) -> Iterator[Prediction]:
    tree = ctx.tree
    if not isinstance(tree, t.SentencePieceTxtFile):
        return
    spaced = sum(1 for tok, _, kind in tree.pieces if kind == 1 and tok.startswith(b" "))
    meta = sum(1 for tok, _, _ in tree.pieces if META in tok)
    scores = {score for _, score, _ in tree.pieces}
    if spaced and not meta:
        yield (ERROR, "pieces",
               f"{spaced} pieces start with a space (the exporter replaced '▁' by ' ') while MNN's type 0 "
               "encoder looks for '▁': no word-initial piece ever matches, ids differ on almost every text")
    elif len(tree.pieces) > 1 and len(scores) == 1:
        yield (ERROR, "pieces",
               f"every piece has the score {next(iter(scores))} (as the exporter writes a Unigram model): "
               "MNN's SentencePiece BPE then merges leftmost first, not by score, so ids "
               "differ on almost every text")
    else:
        yield WARNING, "pieces", "type 0 runs MNN's own SentencePiece BPE (scores as float32, byte fallback always on)"
    if tree.pieces and not any(kind == 2 for _, _, kind in tree.pieces):
        yield (WARNING, "pieces",
               f"no piece has type 2 (unknown): MNN uses id 0 ({tree.pieces[0][0]!r}) for unknown text "
               "and its byte fallback")


def _predict_tiktoken(ctx: LintContext) -> Iterator[Prediction]:
    if isinstance(ctx.tree, t.TiktokenTxtFile):
        yield (ERROR, "tokens",
               "type 1 is encoded by greedy longest match over the whole text, not by BPE ranks: most "
               "texts get other ids than HF/tiktoken")


def _predict_bert(ctx: LintContext) -> Iterator[Prediction]:
    if isinstance(ctx.tree, t.BertTxtFile):
        cased = sum(1 for tok in ctx.tree.tokens if tok.isascii() and tok.lower() != tok)
        yield (ERROR if cased else WARNING, "tokens",
               "type 2 lower-cases ASCII letters always and splits with its own rules"
               + (f": this vocabulary is cased ({cased} tokens with capitals), so cased words lose" if cased else ""))


def _predict_gpt2(ctx: LintContext) -> Iterator[Prediction]:
    if isinstance(ctx.tree, t.HuggingFaceTxtFile):
        yield (WARNING, "tokens",
               "type 3 splits with a C-locale regex: only ASCII letters and digits are letters and digits, "
               "so non-ASCII words split differently from HF")


LEGACY_SENTENCEPIECE = Rule(
    "mnn-legacy-sentencepiece", "legacy.type0",
    "type 0 runs MNN's own SentencePiece BPE over '▁' + text with spaces as '▁': pieces merge by "
    "their float32 scores (leftmost first when they tie, as with a Unigram model's file whose "
    "scores are all 0), byte fallback is always on, and unknown text gets the piece typed 2 or id 0",
    't5 mnn.txt (scores all 0, no unknown piece) " naïve": MNN [3, 3, 29, 9, 0, 0, 162], ï as id 0 per byte',
    f"{TOK}:462", stage="legacy", applies=_is(t.SentencePieceTxtFile), predict=_predict_sentencepiece)
LEGACY_TIKTOKEN_GREEDY = Rule(
    "mnn-legacy-tiktoken-greedy", "legacy.type1",
    "type 1 is encoded by greedy longest match over the whole text, not by BPE ranks",
    'whisper mnn.txt "tokenizer": BPE ["t", "oken", "izer"], MNN ["to", "ken", "izer"]', f"{TOK}:532",
    stage="legacy", applies=_is(t.TiktokenTxtFile), predict=_predict_tiktoken)
LEGACY_BERT = Rule(
    "mnn-legacy-bert", "legacy.type2",
    "type 2 has its own splitter: ASCII letters and digits lower-cased (a cased vocabulary "
    "loses), each non-ASCII character alone, no accent stripping; an uncovered word keeps its "
    "pieces and ends with [UNK]",
    'bert mnn.txt "Which": HF [5979], MNN [1134] ("which")', f"{TOK}:633",
    stage="legacy", applies=_is(t.BertTxtFile), predict=_predict_bert)
LEGACY_GPT2_REGEX = Rule(
    "mnn-legacy-gpt2-regex", "legacy.type3",
    "type 3 splits with a C-locale std::regex (only ASCII letters and digits are letters and "
    "digits) and merges with its own pair loop",
    'roberta mnn.txt " naïve": HF [39300], MNN ["Ġna", "Ã¯", "ve"] (ï is no letter in the C locale)', f"{TOK}:959",
    stage="legacy", applies=_is(t.HuggingFaceTxtFile), predict=_predict_gpt2)

RULES: tuple[Rule, ...] = (LEGACY_SENTENCEPIECE, LEGACY_TIKTOKEN_GREEDY, LEGACY_BERT, LEGACY_GPT2_REGEX)
