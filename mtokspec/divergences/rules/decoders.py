"""Decoding: MNN's decode(ids), its decoder chain, and what the engine prints id by id."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mtokspec.divergences.rule import LintContext, Prediction, Rule
from mtokspec.divergences.rules import TOK
from mtokspec.format import tree as t
from mtokspec.format.validate import INFO, WARNING
from mtokspec.runtime.mnn._text import META
from mtokspec.runtime.shared.vocab_rows import looked_up, texts_by_id


def _decoders(tree, *kinds: type) -> list[str]:
    """The paths of the file's decoders of these kinds."""
    if not isinstance(tree, t.MtokFile):
        return []
    return [p for n, p in t.walk_stage(tree.decoder, "decoder") if isinstance(n, kinds)]


def _predict_skips_special(ctx: LintContext) -> Iterator[Prediction]:
    h = ctx.tree.header
    if isinstance(ctx.tree, t.MtokFile) and h.special:
        yield (INFO, "header.special",
               f"MNN's decode(ids) always leaves out the {len(h.special)} header special ids; the engine's "
               "streaming decode prints them")


def _wordpiece(tree) -> tuple[t.WordPieceDecoder, list[bytes]] | None:
    """The file's first WordPiece decoder and its model's token texts."""
    if not isinstance(tree, t.MtokFile):
        return None
    node = next((n for n, _ in t.walk_stage(tree.decoder, "decoder") if isinstance(n, t.WordPieceDecoder)), None)
    return None if node is None else (node, [row[0] for row in getattr(tree.model, "vocab", [])])


def _predict_chain(ctx: LintContext) -> Iterator[Prediction]:
    found = _wordpiece(ctx.tree)
    if found is None:
        return
    node, vocab = found
    # HF's cleanup runs on each token with its space: " n't" needs a token starting with n't
    joined = [tok for tok in vocab if tok.startswith((b"n't", b"'m", b"'s", b"'ve", b"'re", b"do not"))]
    if node.cleanup and joined:
        for path in _decoders(ctx.tree, t.WordPieceDecoder)[:1]:
            yield (WARNING, path,
                   f"MNN's WordPiece decoder joins tokens without HF's cleanup: {len(joined)} tokens such as "
                   f"{joined[0].decode('utf-8', 'replace')!r} keep the space HF's cleanup removes before them")


def _predict_wordpiece_cleanup(ctx: LintContext) -> Iterator[Prediction]:
    found = _wordpiece(ctx.tree)
    if found is None:
        return
    node, vocab = found
    honoured = ctx.field(t.DecodeCleanupField)
    if honoured is not None and honoured.cleanup == node.cleanup:
        return  # the patched engine cleans up exactly when the decoder says so
    kept = not node.cleanup and any(tok[:1] in (b".", b"?", b"!", b",") for tok in vocab)
    for path in _decoders(ctx.tree, t.WordPieceDecoder)[:1]:
        yield (WARNING if kept else INFO, path,
               "MNN's decode(ids) removes the space before . ? ! , whatever the cleanup flag says"
               + (" (this decoder's cleanup is off: HF keeps it)" if kept else ""))


def _predict_clean_up(ctx: LintContext) -> Iterator[Prediction]:
    tree = ctx.tree
    if isinstance(tree, t.MtokFile) and (tree.flags or 0) & t.MtokFlags.clean_up_tokenization_spaces:
        yield (WARNING, "flags",
               "clean_up_tokenization_spaces is set: MNN's decode(ids) joins \" n't\", \" 's\", ... (as transformers "
               "does; HF tokenizers does not)")


def _predict_raw_bytes(ctx: LintContext) -> Iterator[Prediction]:
    for path in _decoders(ctx.tree, t.ByteLevelDecoder, t.ByteFallbackDecoder)[:1]:
        yield (INFO, path,
               "ids that end inside a character decode to bytes that are not UTF-8: MNN returns them as they "
               "are (HF: U+FFFD)")


def _joins_punctuation(tree: Any) -> bool:
    """Whether a WordPiece vocabulary spells '.' as a continuation of the decoder's prefix (the
    look-up of '.' finds an id whose text, its last row, starts with it), so the engine prints it
    without a space, as HF's clean-up joins it (``--target mnn`` writes BERT vocabularies so)."""
    m, dec = getattr(tree, "model", None), getattr(tree, "decoder", None)
    if not (isinstance(m, t.WordPieceModel) and isinstance(dec, t.WordPieceDecoder) and dec.prefix):
        return False
    dot = looked_up(m.vocab, b".")
    return dot is not None and texts_by_id(m.vocab)[dot].startswith(dec.prefix.encode("utf-8", "surrogatepass"))


def _predict_stream(ctx: LintContext) -> Iterator[Prediction]:
    tree = ctx.tree
    if ctx.field(t.StreamDecodeField) is not None:
        return  # the patched engine prints what HF's DecodeStream prints
    wordpiece = _decoders(tree, t.WordPieceDecoder)
    if wordpiece:
        yield (WARNING, wordpiece[0],
               "the engine prints each id alone: every WordPiece token that is not a continuation, the "
               "first one too, gets a space before it" + ("" if _joins_punctuation(tree) else ", and ' .', ' ,' stay split"))
        return
    leading = [p for n, p in t.walk_stage(tree.decoder, "decoder")
               if isinstance(n, t.MetaspaceDecoder) and n.add_prefix_space] if isinstance(tree, t.MtokFile) else []
    strip = _decoders(tree, t.StripDecoder, t.FuseDecoder)
    meta_in_tokens = isinstance(tree, t.MtokFile) and isinstance(tree.model, (t.BPEModel, t.UnigramModel)) and any(
        row[0].startswith(META) for row in tree.model.vocab)
    if leading or (strip and meta_in_tokens):
        yield (WARNING, (leading or strip)[0],
               "the engine prints each id alone: '▁' becomes a space in every token, so the printed text "
               "starts with a space the sequence decode strips")


DECODE_SKIPS_SPECIAL = Rule(
    "mnn-decode-skips-special", "decoder",
    "decode(ids) always drops the header's special ids (HF keeps them unless asked)",
    'bert decode([101, 1188, 102]): HF "[CLS] This [SEP]", MNN "This"', f"{TOK}:2037",
    predict=_predict_skips_special)
DECODER_CHAIN = Rule(
    "mnn-decoder-chain", "decoder",
    "the decoder chain differs: WordPiece joins without HF's cleanup, Metaspace replaces "
    "multi-byte replacements byte-wise, Strip takes its content once at each end, ByteFallback "
    "accepts any <0x.. prefix",
    'WordPiece decode of ["a", "\'", "s"]: HF "a\'s", MNN "a \' s"', f"{TOK}:1815", predict=_predict_chain)
WORDPIECE_CLEANUP = Rule(
    "mnn-wordpiece-cleanup", "decoder.WordPiece",
    "after a WordPiece decoder the space before . ? ! , is always removed (HF: only with "
    "cleanup, which also joins \" ' \", \" n't\", ...)",
    'cleanup=false, "a ." : HF "a .", MNN "a."', f"{TOK}:2037", predict=_predict_wordpiece_cleanup)
CLEAN_UP_SPACES = Rule(
    "mnn-clean-up-spaces", "decoder",
    "decode applies clean_up_tokenization_spaces when the file's flag is set (HF tokenizers "
    "never does; transformers does)",
    'flag set, ids of "do", " n\'t": HF "do n\'t", MNN "don\'t"', f"{TOK}:2037", predict=_predict_clean_up)
DECODE_RAW_BYTES = Rule(
    "mnn-decode-raw-bytes", "decoder",
    "decoded bytes that are not UTF-8 are returned as they are (HF: U+FFFD)",
    'byte-level ids of "½" cut in two: HF "\\ufffd", MNN b"\\xbd"', f"{TOK}:2037", predict=_predict_raw_bytes)
STREAM_DECODE = Rule(
    "mnn-stream-decode", "decoder (engine)",
    "the engine prints each id's decode(id) alone: every ▁ becomes a space (the first one "
    "too), <0xHH> becomes a byte anywhere in a token, every WordPiece token that is not a "
    "continuation gets a space before it, no Strip/Fuse, special ids are printed",
    't5 stream of "▁Hello": HF "Hello", MNN " Hello"', f"{TOK}:2069", predict=_predict_stream)
UNK_DECODE = Rule(
    "mnn-unk-decode", "decoder",
    "decode looks every id up in the model's vocabulary only: an id outside it (an added token "
    "the vocabulary lacks) decodes as the unk token (WordPiece, Unigram) or as nothing (BPE)",
    'WordPiece decode([99999]): HF "", MNN "[UNK]"', f"{TOK}:1640")

RULES: tuple[Rule, ...] = (DECODE_SKIPS_SPECIAL, DECODER_CHAIN, WORDPIECE_CLEANUP, CLEAN_UP_SPACES,
                           DECODE_RAW_BYTES, STREAM_DECODE, UNK_DECODE)
