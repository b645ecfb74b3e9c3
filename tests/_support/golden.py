"""The annotated golden files (``tests/golden/*.hex``, fontTools' ``deHexStr`` style) and their reader."""

from __future__ import annotations

import re

from tests._support import TESTS

__all__ = ["GOLDEN", "de_hex"]

GOLDEN = TESTS / "golden"


def de_hex(text: str) -> bytes:
    """Hex digits with white space, ``#`` comments to the end of the line."""
    digits = "".join(re.sub(r"#.*", "", line) for line in text.splitlines())
    return bytes.fromhex("".join(digits.split()))
