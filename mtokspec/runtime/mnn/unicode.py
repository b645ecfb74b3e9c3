"""Character classes as MNN's C++ tokenizer computes them (``tokenizer/unicode.{hpp,cpp}``).

MNN decodes UTF-8 itself: a byte that does not start a well-formed sequence (overlong, surrogate,
past U+10FFFF, truncated) reads as U+FFFD of length 1 and decoding goes on at the next byte.  Its
categories are Unicode 15.0 (:mod:`._unicode_data`), whatever Python's ``unicodedata`` says.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator

from mtokspec.runtime.mnn._unicode_data import CATEGORIES, CATEGORY_STARTS, TO_LOWER

REPLACEMENT = 0xFFFD
_LOWER = dict(TO_LOWER)
_category_memo: dict[int, str] = {}


def utf8_decode(b: bytes, i: int) -> tuple[int, int]:
    """The code point at ``b[i]`` and its length, as MNN's ``Unicode::utf8_decode`` reads them."""
    n = len(b) - i
    if n <= 0:
        return REPLACEMENT, 1
    b0 = b[i]
    if b0 < 0x80:
        return b0, 1
    if b0 & 0xE0 == 0xC0 and n >= 2 and b[i + 1] & 0xC0 == 0x80:
        cp = (b0 & 0x1F) << 6 | b[i + 1] & 0x3F
        return (cp, 2) if cp >= 0x80 else (REPLACEMENT, 1)
    if b0 & 0xF0 == 0xE0 and n >= 3 and b[i + 1] & 0xC0 == 0x80 and b[i + 2] & 0xC0 == 0x80:
        cp = (b0 & 0x0F) << 12 | (b[i + 1] & 0x3F) << 6 | b[i + 2] & 0x3F
        return (cp, 3) if cp >= 0x800 and not 0xD800 <= cp <= 0xDFFF else (REPLACEMENT, 1)
    if (b0 & 0xF8 == 0xF0 and n >= 4 and b[i + 1] & 0xC0 == 0x80 and b[i + 2] & 0xC0 == 0x80
            and b[i + 3] & 0xC0 == 0x80):
        cp = (b0 & 0x07) << 18 | (b[i + 1] & 0x3F) << 12 | (b[i + 2] & 0x3F) << 6 | b[i + 3] & 0x3F
        return (cp, 4) if 0x10000 <= cp <= 0x10FFFF else (REPLACEMENT, 1)
    return REPLACEMENT, 1


def chars(b: bytes) -> list[tuple[int, int, int]]:
    """``(offset, length, code point)`` of each character MNN reads in ``b``."""
    out = []
    i, n = 0, len(b)
    if b.isascii():
        return [(k, 1, c) for k, c in enumerate(b)]
    while i < n:
        cp, r = utf8_decode(b, i)
        out.append((i, r, cp))
        i += r
    return out


def utf8_encode(cp: int) -> bytes:
    """MNN's ``Unicode::utf8_encode`` (no checks: surrogates are written as three bytes)."""
    return chr(cp).encode("utf-8", "surrogatepass")


def category(cp: int) -> str:
    """The two-letter general category of ``cp`` in MNN's Unicode 15.0 table (``Cn`` outside)."""
    c = _category_memo.get(cp)
    if c is None:
        c = CATEGORIES[bisect_right(CATEGORY_STARTS, cp) - 1] if 0 <= cp < 0x110000 else "Cn"
        _category_memo[cp] = c
    return c


def is_punctuation(cp: int) -> bool:
    return category(cp)[0] == "P"


def is_mark(cp: int) -> bool:
    return category(cp)[0] == "M"


def code_points_of(category_prefix: str) -> Iterator[int]:
    """Every code point whose category in MNN's table starts with ``category_prefix`` (``"M"``: the
    marks, ``"Zs"``), from the table's runs (no per-code-point look-up, nothing memoized)."""
    ends = (*CATEGORY_STARTS[1:], 0x110000)
    for start, end, cat in zip(CATEGORY_STARTS, ends, CATEGORIES):
        if cat.startswith(category_prefix):
            yield from range(start, end)


_ASCII_SPACE = frozenset(b" \t\n\r\f\v")


def is_whitespace(cp: int) -> bool:
    """ASCII white space or category Zs (not Zl/Zp: U+2028 is not white space for MNN)."""
    return cp in _ASCII_SPACE or category(cp) == "Zs"


def to_lower(cp: int) -> int:
    return _LOWER.get(cp, cp)


# The one-byte stand-ins MNN's regex engine matches non-ASCII characters by (``fold_text``).
FOLD_LETTER, FOLD_NUMBER, FOLD_SPACE, FOLD_OTHER, FOLD_MARK, FOLD_PUNCT, FOLD_SYMBOL = 1, 2, 3, 4, 5, 6, 7
_fold_memo: dict[int, int] = {}


def holds_stand_ins(text: str) -> bool:
    """Whether ``text`` holds an ASCII control that MNN's regex engine reads as a stand-in
    (U+0001-U+0007: it cannot tell them from the non-ASCII characters it folds to them)."""
    return any(FOLD_LETTER <= ord(c) <= FOLD_SYMBOL for c in text)



def fold(cp: int) -> int:
    """The byte MNN's ``cp_to_folded`` maps a code point to: ASCII as is, else its class marker."""
    if cp < 0x80:
        return cp
    f = _fold_memo.get(cp)
    if f is None:
        cat = category(cp)
        if cat[0] == "L":
            f = FOLD_LETTER
        elif cat[0] == "N":
            f = FOLD_NUMBER
        elif cat == "Zs":
            f = FOLD_SPACE
        elif cat[0] == "M":
            f = FOLD_MARK
        elif cat[0] == "P":
            f = FOLD_PUNCT
        elif cat[0] == "S":
            f = FOLD_SYMBOL
        else:
            f = FOLD_OTHER
        _fold_memo[cp] = f
    return f
