"""HF's ``Precompiled`` normalizer run exactly: SentencePiece's character map over the double-array
trie in its blob.

The blob (``precompiled_charsmap``, base64 in ``tokenizer.json``) is ``[u32 trie size][trie: that
many bytes of darts-clone u32 units][replacement strings, each NUL-terminated]``; a key's value is
the offset of its replacement.  HF ``tokenizers`` (``spm_precompiled``) cuts the text into extended
grapheme clusters; a cluster under 6 bytes that has a key as a prefix becomes the replacement of
the *shortest* such key (the rest of the cluster is dropped); otherwise each character is looked
up alone and kept when it has no key.  :meth:`CharsMap.per_code_point` is the map restricted to
single characters: what a per-code-point table (MNN's table normalizer) can hold.
"""

from __future__ import annotations

import base64
import struct
from functools import lru_cache

from mtokspec.errors import Error

__all__ = ["CharsMap", "PrecompiledError", "charsmap_from_json"]


class PrecompiledError(Error, ValueError):
    """A ``precompiled_charsmap`` that is not a SentencePiece character map."""


class CharsMap:
    """A SentencePiece character map (see the module doc)."""

    def __init__(self, blob: bytes):
        if len(blob) < 4:
            raise PrecompiledError(f"precompiled_charsmap: {len(blob)} bytes, too short for its trie size")
        (size,) = struct.unpack_from("<I", blob)
        if size % 4 or 4 + size > len(blob):
            raise PrecompiledError(f"precompiled_charsmap: trie size {size} does not fit the {len(blob)}-byte blob")
        self.units = struct.unpack_from(f"<{size // 4}I", blob, 4)
        self.pool = blob[4 + size:]
        self._cache: dict[str, str | None] = {}

    def _unit(self, pos: int) -> int:
        if not 0 <= pos < len(self.units):
            raise PrecompiledError(f"precompiled_charsmap: the trie points outside itself (unit {pos})")
        return self.units[pos]

    @staticmethod
    def _offset(unit: int) -> int:
        return (unit >> 10) << ((unit & (1 << 9)) >> 6)

    def prefixes(self, key: bytes) -> list[tuple[int, int]]:
        """``(length, replacement offset)`` of every key that is a prefix of ``key``, shortest first
        (darts-clone's ``commonPrefixSearch``; a NUL byte ends the key)."""
        out = []
        if not self.units:
            return out
        pos = self._offset(self._unit(0))
        for i, c in enumerate(key):
            if c == 0:
                break
            pos ^= c
            unit = self._unit(pos)
            if unit & ((1 << 31) | 0xFF) != c:
                break
            pos ^= self._offset(unit)
            if (unit >> 8) & 1:
                out.append((i + 1, self._unit(pos) & ((1 << 31) - 1)))
        return out

    def replacement(self, offset: int) -> str:
        end = self.pool.find(b"\0", offset)
        raw = self.pool[offset:end if end >= 0 else len(self.pool)]
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise PrecompiledError(f"precompiled_charsmap: replacement at {offset} is not UTF-8") from e

    def transform(self, chunk: str) -> str | None:
        """The replacement of the shortest key that is a prefix of ``chunk`` (``spm_precompiled``)."""
        got = self._cache.get(chunk, self)
        if got is not self:
            return got  # type: ignore[return-value]
        found = self.prefixes(chunk.encode("utf-8", "surrogatepass"))
        res = self.replacement(found[0][1]) if found else None
        if len(self._cache) < 100_000:
            self._cache[chunk] = res
        return res

    def normalize(self, text: str) -> str:
        """HF ``tokenizers``' ``Precompiled`` normalizer on ``text``."""
        import regex

        out = []
        for g in regex.findall(r"\X", text):
            if len(g.encode("utf-8", "surrogatepass")) < 6:
                rep = self.transform(g)
                if rep is not None:
                    out.append(rep)
                    continue
            for c in g:
                rep = self.transform(c)
                out.append(c if rep is None else rep)
        return "".join(out)

    def per_code_point(self) -> list[tuple[int, bytes]]:
        """Each single character that is a key, with its replacement, ascending by code point (what
        a per-code-point table holds; characters whose replacement is themselves are left out).
        Keys of several characters (e.g. a letter and a combining mark) are not in it."""
        return list(self._single_keys())

    @lru_cache(maxsize=1)
    def _single_keys(self) -> tuple[tuple[int, bytes], ...]:
        out: list[tuple[int, bytes]] = []
        if not self.units:
            return ()
        n = len(self.units)
        units = self.units
        off = self._offset
        # (node, key so far, bytes still needed to complete the character)
        stack = [(off(self._unit(0)), b"", 0)]
        while stack:
            base, key, need = stack.pop()
            labels = range(0x80, 0xC0) if need else range(1, 0xF5)
            for c in labels:
                pos = base ^ c
                if pos >= n:
                    continue
                unit = units[pos]
                if unit & ((1 << 31) | 0xFF) != c:
                    continue
                k = key + bytes([c])
                left = need - 1 if need else (0 if c < 0x80 else 1 if c >= 0xC0 and c < 0xE0 else
                                              2 if c >= 0xE0 and c < 0xF0 else 3 if c >= 0xF0 else -1)
                if left < 0:
                    continue  # a continuation byte cannot start a character
                nxt = pos ^ off(unit)
                if left == 0:
                    if (unit >> 8) & 1:
                        rep = self.replacement(self._unit(nxt) & ((1 << 31) - 1))
                        try:
                            ch = k.decode("utf-8")
                        except UnicodeDecodeError:
                            continue  # an overlong or surrogate spelling never matches text
                        if rep != ch:
                            out.append((ord(ch), rep.encode("utf-8")))
                else:
                    stack.append((nxt, k, left))
        out.sort()
        return tuple(out)


@lru_cache(maxsize=8)
def _from_b64(b64: str) -> CharsMap:
    try:
        blob = base64.b64decode(b64, validate=True)
    except ValueError as e:
        raise PrecompiledError(f"precompiled_charsmap: not base64: {e}") from e
    return CharsMap(blob)


def charsmap_from_json(node: dict) -> CharsMap | None:
    """The character map of a ``tokenizer.json`` ``Precompiled`` node (None when it holds none)."""
    b64 = node.get("precompiled_charsmap")
    if b64 is None or b64 == "":
        return None
    if not isinstance(b64, str):
        raise PrecompiledError("precompiled_charsmap: expected a base64 string")
    return _from_b64(b64)
