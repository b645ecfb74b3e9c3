"""Characters every Unicode table involved agrees on, for text compared with HF ``tokenizers``.

Python's ``unicodedata`` (14.0 here), the ``regex`` module, HF's Oniguruma and its Rust crates each
ship their own Unicode tables, and they disagree on code points assigned or re-categorised recently
(e.g. U+2E52, Po since 14.0, is not punctuation for HF's BertPreTokenizer; U+1CF00, Mn since 14.0,
is not stripped as an accent by HF's BertNormalizer).  That is a documented Unicode-version
divergence (README), not a tokenizer difference, so generated text keeps to code points assigned
by Unicode 3.2 with the category they have today.
"""

from __future__ import annotations

import unicodedata

from hypothesis import strategies as st

__all__ = ["stable", "STABLE_CHARS"]


def stable(c: str) -> bool:
    cat = unicodedata.category(c)
    return cat not in ("Cn", "Cs") and unicodedata.ucd_3_2_0.category(c) == cat


STABLE_CHARS = st.characters(exclude_categories=("Cn", "Cs")).filter(stable)
