"""Models: MNN's BPE, WordPiece and Unigram."""

from __future__ import annotations

from collections.abc import Iterator

from mtokspec.divergences.rule import LintContext, Prediction, Rule
from mtokspec.divergences.rules import TOK
from mtokspec.format import tree as t
from mtokspec.runtime.shared.vocab_rows import unknown_rows_id
from mtokspec.format.validate import WARNING

# MNN's merge loop over a whole text (no pre-tokenizer), measured with MNN's own C++ code (phi-3's
# vocabulary, one x86-64 core at -O2, 2026-12-01): characters -> seconds for one encode
QUADRATIC_MEASURED = ((1000, 0.044), (4000, 1.33), (16000, 25.2))


def _model(kind: type):
    return lambda tree: isinstance(tree, t.MtokFile) and isinstance(tree.model, kind)


def _predict_bpe_merges(ctx: LintContext) -> Iterator[Prediction]:
    m = getattr(ctx.tree, "model", None)
    if isinstance(m, t.BPEModel) and not m.byte_level:
        byte_pieces = sum(1 for tok, _ in m.vocab if len(tok) == 6 and tok.startswith(b"<0x") and tok.endswith(b">"))
        if byte_pieces and not m.byte_fallback and unknown_rows_id(m.vocab, m.byte_fallback) is None:
            yield (WARNING, "model.byte_fallback",
                   f"byte_fallback is off but the vocabulary has {byte_pieces} <0xHH> pieces: MNN falls back "
                   "to them for characters not in the vocabulary anyway (HF: unk or dropped)")


def _predict_bpe_quadratic(ctx: LintContext) -> Iterator[Prediction]:
    tree = ctx.tree
    if _model(t.BPEModel)(tree) and isinstance(tree.pre_tokenizer, t.NoPreTokenizer):
        (n1, t1), (n2, t2), (n3, t3) = QUADRATIC_MEASURED
        yield (WARNING, "pre_tokenizer",
               "BPE without a pre-tokenizer: MNN merges over the whole text with a loop that rescans "
               f"every pair, quadratic in its length (measured with MNN's code on one desktop core: "
               f"{n1} characters {t1} s, {n2} {t2} s, {n3} {t3} s; a phone is slower)")


def _predict_wordpiece(ctx: LintContext) -> Iterator[Prediction]:
    m = getattr(ctx.tree, "model", None)
    if isinstance(m, t.WordPieceModel) and any(not tok.isascii() for tok, _ in m.vocab):
        yield (WARNING, "model",
               "MNN's WordPiece matches bytes and counts max_input_chars_per_word "
               f"({m.max_input_chars_per_word}) in bytes: non-ASCII words reach the limit 2-4x sooner "
               "and become the unknown token")


def _predict_unigram(ctx: LintContext) -> Iterator[Prediction]:
    if _model(t.UnigramModel)(ctx.tree):
        yield (WARNING, "model",
               "MNN's Unigram lattice runs over bytes with its own unknown handling: characters the "
               "vocabulary lacks are segmented differently from HF")


BPE_MERGES = Rule(
    "mnn-bpe-merges", "model.BPE",
    "BPE merges adjacent ids by rank and stops for the whole split at the first merge whose "
    "joined text is not a token; characters not in the vocabulary fall back to <0xHH> pieces "
    "whatever byte_fallback says, else are dropped (HF: unk or error)",
    'merge (a, b) -> "ab" missing from the vocabulary: HF refuses the file, MNN stops merging',
    f"{TOK}:1570", stage="model", applies=_model(t.BPEModel), predict=_predict_bpe_merges)
WORDPIECE_BYTES = Rule(
    "mnn-wordpiece-bytes", "model.WordPiece",
    "WordPiece matches over bytes (a piece may end inside a character), never matches the unk "
    "token itself, and the length limit counts bytes",
    'max_input_chars_per_word=5 on "ééé" (6 bytes): HF 3 pieces, MNN [UNK]', f"{TOK}:1648",
    stage="model", applies=_model(t.WordPieceModel), predict=_predict_wordpiece)
UNIGRAM_BYTES = Rule(
    "mnn-unigram-bytes", "model.Unigram",
    "Unigram's lattice runs over byte offsets with its own tie-breaking and unknown handling: "
    "an offset no piece reaches takes the unknown id for the character before it; adjacent "
    "unknowns fuse",
    'pieces b"\\xc3" and b"\\xa9" (the two bytes of é): "é" HF [unk], MNN the two pieces',
    f"{TOK}:1723", stage="model", applies=_model(t.UnigramModel), predict=_predict_unigram)
BPE_QUADRATIC = Rule(
    "mnn-bpe-quadratic", "model.BPE",
    "BPE without a pre-tokenizer runs MNN's merge loop over the whole text: each merge rescans "
    "every pair, so time grows with the square of the input length",
    "phi-3 (no pre-tokenizer): a 20 kB line takes seconds on a device", f"{TOK}:1570",
    predict=_predict_bpe_quadratic)

RULES: tuple[Rule, ...] = (BPE_MERGES, WORDPIECE_BYTES, UNIGRAM_BYTES)
LINT_ONLY: tuple[Rule, ...] = (BPE_QUADRATIC,)
