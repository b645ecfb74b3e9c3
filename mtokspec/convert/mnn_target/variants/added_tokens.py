"""Added tokens: how ``--target mnn`` carries each option of a ``tokenizer.json`` added token."""

from __future__ import annotations

from mtokspec.convert.mnn_target.variants.row import Variant, Verdict as V

__all__ = ["ROWS"]

ROWS: tuple[Variant, ...] = (
    Variant("added_tokens", "special", "special=true or false", V.EXACT,
            "an added token, with a BPE or Unigram vocabulary row when its id follows the vocabulary "
            "(MNN decodes ids from the vocabulary alone); no header special id (MNN's decode would drop it, "
            "HF's keeps it)",
            example={"content": "<|x|>", "special": True, "lstrip": False, "rstrip": False,
                     "normalized": False, "single_word": False}),
    Variant("added_tokens", "lstrip/rstrip", "lstrip or rstrip", V.APPROXIMATED, "the flags",
            "mnn-added-strip-ascii", why="MNN strips ASCII white space only",
            example={"content": "<|y|>", "special": True, "lstrip": True, "rstrip": True,
                     "normalized": False, "single_word": False}),
    Variant("added_tokens", "single_word", "single_word=true", V.IMPOSSIBLE, "an added token matched anywhere",
            "format:added_tokens.single_word", why="the format has no single_word flag",
            example={"content": "zz", "special": False, "lstrip": False, "rstrip": False,
                     "normalized": False, "single_word": True}),
    Variant("added_tokens", "normalized", "normalized=true", V.IMPOSSIBLE, "an added token matched on the raw text",
            "format:added_tokens.normalized", why="the format has no normalized flag: MNN matches the raw text",
            example={"content": "qq", "special": False, "lstrip": False, "rstrip": False,
                     "normalized": True, "single_word": False}),
)
