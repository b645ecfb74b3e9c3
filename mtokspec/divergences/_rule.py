"""The record every divergence rule is written as."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    """One way MNN's runtime differs from Hugging Face.

    ``code`` is stable (tests, lint findings and ``compare`` output name it); ``component`` is the
    pipeline stage or file part it concerns (``post-processor``, ``pre-tokenizer.Metaspace``,
    ``legacy.type2``, ``chat_template``, ...); ``summary`` is one line; ``example`` a minimal case,
    HF's result against MNN's; ``mnn_ref`` the MNN source it follows (path and line at the commit
    the reference outputs were recorded with).
    """

    code: str
    component: str
    summary: str
    example: str
    mnn_ref: str = ""
