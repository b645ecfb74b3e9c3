"""Text facts both semantics and the converter share, declared once."""

from __future__ import annotations

import re

METASPACE = "\u2581"
"""SentencePiece's word marker ``▁`` (U+2581), which Metaspace and SentencePiece models put for a space."""

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
"""GPT-2's pre-tokenizer pattern: what HF ``ByteLevel(use_regex=True)`` splits with, and what MNN
uses for a pattern its regex engine cannot read."""

REGEX_META = frozenset(".^$*+?{}[]\\|()")
"""The characters that make a pattern a regular expression rather than a literal string."""

QUANTIFIER = re.compile(r"(?:[?*+]|\{\d+(?:,\d*)?\})\??")
"""A greedy or lazy quantifier, as Oniguruma, ECMAScript and Python's engines all read it."""


def flatten_sets(pattern: str) -> str:
    """``pattern`` (Oniguruma's syntax, as HF reads it) with each nested character set joined into
    the set around it (``[^(\\s|[.,])]`` -> ``[^(\\s|.,]``): the same characters, in the syntax
    Python's ``regex`` (VERSION0) and ``std::wregex`` read.  A negated nested set cannot be
    joined: the pattern is returned as given."""
    out: list[str] = []
    i, depth, n = 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            end = i + 2
            if pattern.startswith(("p{", "P{", "x{"), i + 1) and "}" in pattern[i + 3:]:
                end = pattern.index("}", i + 3) + 1
            out.append(pattern[i:end])
            i = end
            continue
        if c == "[":
            if depth and pattern.startswith("[:", i) and ":]" in pattern[i + 2:]:
                end = pattern.index(":]", i + 2) + 2  # a POSIX bracket: kept
                out.append(pattern[i:end])
                i = end
                continue
            start = i + 1 + (pattern.startswith("^", i + 1))
            if depth and start != i + 1:
                return pattern
            out.append(pattern[i:start] if not depth else "")
            i, depth = start, depth + 1
            if i < n and pattern[i] == "]":  # a "]" first in a set is a literal
                out.append("\\]")
                i += 1
            continue
        if c == "]" and depth:
            depth -= 1
            out.append("]" if not depth else "")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)
