"""Unicode normalisation tables built by the reference exporter's rule, from this Python's data.

MNN's exporter (``LlmTokenizer._generate_nfkc_table`` and friends) embeds, for a table-driven
normalizer, every code point ``0..0x10FFFF`` whose normal form differs from the code point itself,
ascending by code point, each with its normal form in UTF-8.  The result depends on the Unicode
version of the ``unicodedata`` module that builds it: :data:`UNIDATA_VERSION` names it, and two
Pythons with different Unicode versions write different tables (and different bytes).

Building scans 0x110000 code points; :func:`unicodedata.is_normalized` (a C quick check) skips
almost all of them, so one table takes about 0.1 s.  Tables are cached per process.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Callable, cast

from mtokspec.errors import ArgumentTypeError
from mtokspec.args import texts, token_text

__all__ = ["UNIDATA_VERSION", "FORMS", "normalization_table", "nfkc_table", "nfc_table",
           "nfd_table", "identify_table", "closest_form"]

UNIDATA_VERSION: str = unicodedata.unidata_version
"""The Unicode version the tables of this process are built from."""

FORMS = ("NFKC", "NFC", "NFD", "NFKD")


@lru_cache(maxsize=None)
def _table(form: str) -> tuple[tuple[int, bytes], ...]:
    if form not in FORMS:
        from mtokspec.convert.loss import ConversionError

        raise ConversionError(f"unknown normalization form {form!r} (known: {', '.join(FORMS)})")
    # typed for any str: ``form`` was checked against FORMS above
    is_normalized = cast(Callable[[str, str], bool], unicodedata.is_normalized)
    normalize = cast(Callable[[str, str], str], unicodedata.normalize)
    out = []
    for cp in range(0x110000):
        ch = chr(cp)
        # is_normalized(form, ch) is True exactly when normalize(form, ch) == ch; it is a fast C
        # check, so only the few thousand changed code points are normalised.
        if is_normalized(form, ch):
            continue
        norm = normalize(form, ch)
        if norm != ch:
            out.append((cp, norm.encode("utf-8")))
    return tuple(out)


def normalization_table(form: str) -> list[tuple[int, bytes]]:
    """The exporter's table for ``form`` (one of NFKC, NFC, NFD, NFKD); a fresh list each call."""
    token_text("form", form)
    return list(_table(form))


def nfkc_table() -> list[tuple[int, bytes]]:
    """What the exporter embeds for HF ``NFKC``, ``NFKD`` and ``Precompiled``."""
    return normalization_table("NFKC")


def nfc_table() -> list[tuple[int, bytes]]:
    """What the exporter embeds for HF ``NFC``."""
    return normalization_table("NFC")


def nfd_table() -> list[tuple[int, bytes]]:
    """What the exporter embeds with ``BertNormalizer(strip_accents)`` and ``StripAccents``."""
    return normalization_table("NFD")


def _rows(table) -> list[tuple[int, bytes]]:
    """``table`` as ``(code point, bytes)`` rows: any iterable of pairs of an int and bytes."""
    rows = []
    for i, row in enumerate(texts("table", table)):
        if not (isinstance(row, (tuple, list)) and len(row) == 2 and isinstance(row[0], int)
                and not isinstance(row[0], bool) and isinstance(row[1], (bytes, bytearray, memoryview))):
            raise ArgumentTypeError(f"table: expected (code point, bytes) rows, row {i} is a {type(row).__name__}")
        rows.append((int(row[0]), bytes(row[1])))
    return rows


def identify_table(table) -> str | None:
    """The form whose table (from this Python's Unicode data) equals ``table`` exactly, else None."""
    rows = tuple(_rows(table))
    for form in FORMS:
        if rows == _table(form):
            return form
    return None


def closest_form(table) -> tuple[str, bool]:
    """``(form, exact)``: the form whose table shares the most rows with ``table``.

    ``exact`` is True when the tables are identical.  A table written under another Unicode version
    differs in a few rows from every form built here; the overlap still tells NFKC from NFC etc.
    """
    exact = identify_table(table)
    if exact is not None:
        return exact, True
    rows = set(_rows(table))
    best, best_score = "NFKC", -1.0
    for form in FORMS:
        ref = set(_table(form))
        union = len(rows | ref) or 1
        score = len(rows & ref) / union
        if score > best_score:
            best, best_score = form, score
    return best, False
