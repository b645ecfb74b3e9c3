"""Models: how ``--target mnn`` carries each HF model and its options on the released format."""

from __future__ import annotations

from typing import Any

from mtokspec.convert.mnn_target.variants.row import Variant, Verdict as V

__all__ = ["ROWS"]


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
    Variant("model", "BPE", "continuing_subword_prefix", V.IMPOSSIBLE, "BPE without the prefix",
            "format:model.BPE[continuing_subword_prefix]",
            why="MNN's BPE has no continuing-subword prefix", applies=lambda n: _set(n, "continuing_subword_prefix"),
            example={"continuing_subword_prefix": "##"}),
    Variant("model", "BPE", "dropout", V.IMPOSSIBLE, "BPE without dropout", "format:model.BPE[dropout]",
            why="dropout is random: no file (and no test) can give HF's answer", applies=lambda n: _set(n, "dropout")),
    Variant("model", "BPE", "ignore_merges", V.APPROXIMATED, "BPE (merges always applied)",
            "format:model.BPE[ignore_merges]",
            why="MNN always merges: a word that is a token but that the merges do not reach differs",
            applies=lambda n: _set(n, "ignore_merges"), example={"ignore_merges": True}),
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
            "Unigram with HF's scores, the <0xHH> pieces at -1e9 (MNN tries a byte piece at every byte; HF only for "
            "a character no piece covers)", "mnn-unigram-bytes",
            why="on an exact tie of scores MNN keeps another segmentation; a literal '<0xHH>' in the text",
            model="unigram-fallback", lossy=True, applies=lambda n: bool(n.get("byte_fallback")),
            example={"byte_fallback": True}),
    Variant("model", "WordLevel", "", V.IMPOSSIBLE, "refused (no file written)", "format:model.WordLevel",
            why="the format's models are BPE, WordPiece and Unigram, and the converter does not rewrite a "
                "WordLevel vocabulary as one of them (a WordPiece whose prefix no token holds might: not done)",
            model="wordlevel"),
)
