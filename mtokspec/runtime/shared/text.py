"""Text facts both semantics and the converter share, declared once."""

from __future__ import annotations

METASPACE = "\u2581"
"""SentencePiece's word marker ``▁`` (U+2581), which Metaspace and SentencePiece models put for a space."""

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
"""GPT-2's pre-tokenizer pattern: what HF ``ByteLevel(use_regex=True)`` splits with, and what MNN
uses for a pattern its regex engine cannot read."""

REGEX_META = frozenset(".^$*+?{}[]\\|()")
"""The characters that make a pattern a regular expression rather than a literal string."""
