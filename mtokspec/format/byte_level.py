"""GPT-2's byte-level alphabet: each of the 256 byte values spelled as a printable character.

Byte-level BPE vocabularies (HF ``ByteLevel``) store tokens in this spelling: printable ASCII and
Latin-1 bytes stand for themselves, the others (controls, space, ...) are moved to U+0100 and up.
"""

from __future__ import annotations

__all__ = ["BYTE_TO_CHAR", "CHAR_TO_BYTE", "bytes_to_unicode"]


def _alphabet() -> tuple[str, ...]:
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + shifted)
            shifted += 1
    return tuple(chars[b] for b in range(256))


BYTE_TO_CHAR: tuple[str, ...] = _alphabet()
"""``BYTE_TO_CHAR[b]`` is the character that stands for byte ``b``."""

CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(BYTE_TO_CHAR)}


def bytes_to_unicode() -> dict[int, str]:
    """The map as HF and GPT-2 write it: byte value -> character, in GPT-2's order."""
    order = [b for b in range(256) if BYTE_TO_CHAR[b] == chr(b)] + [b for b in range(256) if BYTE_TO_CHAR[b] != chr(b)]
    return {b: BYTE_TO_CHAR[b] for b in order}
