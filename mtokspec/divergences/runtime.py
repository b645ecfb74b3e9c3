"""Where MNN's C++ tokenizer encodes or decodes differently from HF `tokenizers`."""

from __future__ import annotations

from mtokspec.divergences._rule import Rule

RUNTIME_RULES: tuple[Rule, ...] = ()
