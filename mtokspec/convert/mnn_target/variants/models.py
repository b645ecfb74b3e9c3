"""Models: how ``--target mnn`` carries each HF model and its options on the released format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mtokspec.convert.mnn_target.variants.row import Variant, Verdict as V

__all__ = ["ROWS", "wordlevel_as_wordpiece", "NO_WORD_LIMIT"]

NO_WORD_LIMIT = 2**31 - 1
"""A WordPiece ``max_input_chars_per_word`` no word reaches (MNN reads the field as a signed int)."""


def wordlevel_as_wordpiece(model: Mapping[str, Any]) -> dict[str, Any]:
    """A HF ``WordLevel`` model node as the ``WordPiece`` node giving its answers on both runtimes:
    a continuing-subword prefix no vocabulary token starts with (so a word is one whole token or
    the unknown token, as WordLevel's look-up) and no length limit (:data:`NO_WORD_LIMIT`)."""
    vocab = model.get("vocab")
    tokens = [k for k in vocab if isinstance(k, str)] if isinstance(vocab, dict) else []
    prefix = "\x01" * (1 + max((len(tok) - len(tok.lstrip("\x01")) for tok in tokens), default=0))
    return {"type": "WordPiece", "vocab": vocab, "unk_token": model.get("unk_token", "<unk>"),
            "continuing_subword_prefix": prefix, "max_input_chars_per_word": NO_WORD_LIMIT}


def _set(node: Any, key: str) -> bool:
    return node.get(key) not in (None, "", False, 0, 0.0)


def _plain_bpe(node: Any) -> bool:
    return not any(_set(node, k) for k in ("end_of_word_suffix", "continuing_subword_prefix", "dropout",
                                           "ignore_merges"))


ROWS: tuple[Variant, ...] = (
    Variant("model", "BPE", "end_of_word_suffix", V.IMPOSSIBLE, "BPE without the suffix",
            "format:model.BPE[end_of_word_suffix]",
            why="MNN's BPE has no end-of-word suffix and no stage marks the last character of a word "
                "(format-next: end_of_word_suffix)", applies=lambda n: _set(n, "end_of_word_suffix"),
            example={"end_of_word_suffix": "</w>"}),
    Variant("model", "BPE", "continuing_subword_prefix", V.APPROXIMATED,
            "after a pre-tokenizer leaving no space in a piece and with HF's WordPiece decoder: a last Metaspace "
            "pre-tokenizer marks each word with U+2581, tokens renamed (a first piece t as U+2581 t, ##x as x; HF's "
            "merges kept by id then join the renamed texts), the mark's own id (text U+2581 U+0001) merged first "
            "with each first character, and with HF's unknown id; Metaspace decoder; else BPE without the prefix",
            "format:model.BPE[continuing_subword_prefix]",
            why="MNN's BPE has no continuing-subword prefix: a character HF has only as a first piece is a new id "
                "inside a word (HF's unknown id), text with U+2581 differs, and the decoder's clean-up of . , ? ! "
                "is lost",
            applies=lambda n: _set(n, "continuing_subword_prefix"), example={"continuing_subword_prefix": "##"}),
    Variant("model", "BPE", "dropout", V.IMPOSSIBLE, "BPE without dropout", "format:model.BPE[dropout]",
            why="dropout is random: no file (and no test) can give HF's answer", applies=lambda n: _set(n, "dropout")),
    Variant("model", "BPE", "ignore_merges", V.APPROXIMATED, "BPE (merges always applied)",
            "format:model.BPE[ignore_merges]",
            why="MNN always merges: a word that is a token but that the merges do not reach differs",
            applies=lambda n: _set(n, "ignore_merges"), example={"ignore_merges": True}),
    Variant("model", "BPE", "unk_token without byte_fallback, fuse_unk=false", V.BOUNDED,
            "BPE with a <0xHH> row of the unknown id for each byte that begins a character (MNN looks up the "
            "bytes of a character no token covers as <0xHH> pieces, and drops those it does not find)",
            "format:model.BPE[unk_token]", tag="unk_token",
            bound="a vocabulary without <0xHH> tokens whose unknown token sorts after them ([UNK], <unk>; else "
                  "written without it)",
            applies=lambda n: _plain_bpe(n) and _set(n, "unk_token") and not n.get("byte_fallback")
            and not n.get("fuse_unk"), model="bpe-unk", example={"unk_token": "<unk>", "fuse_unk": False}),
    Variant("model", "BPE", "unk_token without byte_fallback, fuse_unk=true", V.IMPOSSIBLE,
            "BPE without the unknown token", "format:model.BPE[unk_token]", tag="fuse_unk",
            why="MNN's BPE has no unknown token: a character no token covers is dropped; rows of the unknown id "
                "give one per character, and no row can fuse a run (MNN's merge of two would look up the id's text "
                "twice, which would have to be a row of the same id sorting after its own) (format-next: unk_token)",
            applies=lambda n: _plain_bpe(n) and _set(n, "unk_token") and not n.get("byte_fallback")
            and bool(n.get("fuse_unk")), model="bpe-unk", example={"unk_token": "<unk>", "fuse_unk": True}),
    Variant("model", "BPE", "byte_fallback", V.EXACT, "BPE with byte fallback", model="bpe-fallback",
            applies=lambda n: _plain_bpe(n) and bool(n.get("byte_fallback")), example={"byte_fallback": True}),
    Variant("model", "BPE", "", V.EXACT, "BPE: the vocabulary sorted by bytes, merges by pair",
            applies=_plain_bpe, example={}),
    Variant("model", "WordPiece", "", V.APPROXIMATED, "WordPiece", "mnn-wordpiece-bytes",
            why="MNN's length limit counts bytes (HF: characters)", model="wordpiece", example={}),
    Variant("model", "Unigram", "byte_fallback=false", V.APPROXIMATED, "Unigram with HF's scores (serde's parse)",
            "mnn-unigram-bytes", why="on an exact tie of scores MNN keeps another segmentation", model="unigram",
            applies=lambda n: not n.get("byte_fallback"), example={}),
    Variant("model", "Unigram", "byte_fallback=true", V.APPROXIMATED,
            "Unigram with HF's scores, the <0xHH> pieces at HF's unknown score (MNN tries a byte piece at every byte; "
            "HF an unknown node for a character no piece covers)", "mnn-unigram-bytes",
            why="on an exact tie of scores MNN keeps another segmentation; a literal '<0xHH>' in the text",
            model="unigram-fallback", lossy=True, applies=lambda n: bool(n.get("byte_fallback")),
            example={"byte_fallback": True}),
    Variant("model", "WordLevel", "", V.EXACT,
            "WordPiece whose continuing-subword prefix no token starts with and max_input_chars_per_word 2**31-1 "
            "(a word is one whole token or the unknown token)", model="wordlevel", example={}),
)
