"""Normalizers as MNN's C++ ``PipelineTokenizer`` runs them, on bytes.

``from_tree`` gives ``None`` where MNN's loader gives a null normalizer (type 0); a null child of a
sequence is skipped, as MNN skips it.

With the compiled module built, ``Bert`` and ``Table`` run their per-character loops in
``_csrc/mnn_stages.c`` (chosen at construction: :func:`._compiled.stages`); the loops here are the
reference, and the size checks before them are the same for both.
"""

from __future__ import annotations

from mtokspec.runtime.shared.registry import build_from_registry, run_chain, stage_registry
from mtokspec.runtime.mnn import unicode as U
from mtokspec.runtime.mnn._compiled import stages
from mtokspec.runtime.mnn._text import CHINESE as _CHINESE, TO_SPACE as _TO_SPACE, table_lookup, utf8
from mtokspec.runtime.shared.bounds import current, grown

_CHINESE_FROM = min(lo for lo, _ in _CHINESE)


def _chinese(cp: int) -> bool:
    if cp < _CHINESE_FROM:
        return False
    for lo, hi in _CHINESE:
        if lo <= cp <= hi:
            return True
    return False


class Table:
    """Types 1 and 6: look every character up in the table; controls become a space."""

    @classmethod
    def from_tree(cls, n) -> "Table":
        return cls(getattr(n, "table", []))  # LegacyNFKCNormalizer holds no table: an empty one

    def __init__(self, table):
        self.find = table_lookup(table)
        self.empty = not table
        self.longest = _longest(table)
        sp = stages()  # the compiled loop (mnn_stages.c), or None: the loop below
        self._compiled = None if sp is None or self.empty else (sp.mnn_table_normalize, sp.mnn_table(table))

    def normalize(self, text: bytes) -> bytes:
        if self.empty:
            return text
        find = self.find
        _check_table(text, self.longest, lambda off, r, cp: 1 if cp in _TO_SPACE else len(find(cp) or b"x" * r),
                     "normalizer table")
        if self._compiled is not None:
            run, table = self._compiled
            return run(text, table)
        out = bytearray()
        for off, r, cp in U.chars(text):
            if cp in _TO_SPACE:
                out += b" "
                continue
            rep = find(cp)
            out += text[off:off + r] if rep is None else rep
        return bytes(out)


def _longest(table) -> int:
    return max((len(rep) for _, rep in table), default=1)


def _check_table(text: bytes, longest: int, size, stage: str) -> None:
    """Refuse, before it is made, a table's output past the call's size bound: ``size(off, r, cp)``
    is the length one character becomes (counted only when the longest entry could pass it)."""
    b = current(len(text))
    if len(text) * longest > b.limit:
        b.size(stage, sum(size(off, r, cp) for off, r, cp in U.chars(text)))


class Prepend:
    @classmethod
    def from_tree(cls, n) -> "Prepend":
        return cls(utf8(n.prepend))

    def __init__(self, prepend: bytes):
        self.prepend = prepend

    def normalize(self, text: bytes) -> bytes:
        return self.prepend + text


class Replace:
    """A literal replacement, left to right; an empty pattern changes nothing."""

    @classmethod
    def from_tree(cls, n) -> "Replace":
        return cls(utf8(n.pattern), utf8(n.content))

    def __init__(self, pattern: bytes, content: bytes):
        self.pattern, self.content = pattern, content

    def normalize(self, text: bytes) -> bytes:
        if not self.pattern:
            return text
        if len(self.content) > len(self.pattern):
            current(len(text)).size("normalizer Replace", grown(text, self.pattern, self.content))
        return text.replace(self.pattern, self.content)


class Strip:
    """White space (ASCII and Zs) off either end, one character at a time."""

    @classmethod
    def from_tree(cls, n) -> "Strip":
        return cls(n.strip_left, n.strip_right)

    def __init__(self, left: bool, right: bool):
        self.left, self.right = left, right

    def normalize(self, text: bytes) -> bytes:
        begin, end = 0, len(text)
        if self.left:
            while begin < end:
                cp, r = U.utf8_decode(text[:end], begin)
                if not U.is_whitespace(cp):
                    break
                begin += r
        if self.right:
            while begin < end:
                pos = end
                while pos > begin and text[pos - 1] & 0xC0 == 0x80:
                    pos -= 1
                cp, _ = U.utf8_decode(text[:end], pos)
                if not U.is_whitespace(cp):
                    break
                end = pos
        return text[begin:end]


class Bert:
    """Types 5 and 7 (accents are stripped only with a non-empty NFD table: type 7)."""

    @classmethod
    def from_tree(cls, n) -> "Bert":
        return cls(n.clean_text, n.handle_chinese_chars, n.strip_accents, n.lowercase,
                   getattr(n, "nfd_table", None) if n.strip_accents else None)

    def __init__(self, clean: bool, chinese: bool, strip_accents: bool, lowercase: bool, nfd=None):
        self.clean, self.chinese, self.lowercase = clean, chinese, lowercase
        self.strip = strip_accents and bool(nfd)
        self.nfd = table_lookup(nfd or [])
        self.longest = _longest(nfd or [])
        sp = stages()  # the compiled loop (mnn_stages.c), or None: the loop below
        self._compiled = None if sp is None else (sp.mnn_bert_normalize, sp.mnn_table(nfd) if self.strip else None)

    def normalize(self, text: bytes) -> bytes:
        if self.strip:  # an upper bound: every character its NFD entry, padded as a Chinese one
            find = self.nfd
            _check_table(text, self.longest + 2, lambda off, r, cp: len(find(cp) or b"x" * r) + 2,
                         "normalizer BertNormalizer")
        if self._compiled is not None:
            run, nfd = self._compiled
            return run(text, self.clean, self.chinese, self.lowercase, nfd)
        out = bytearray()
        for off, r, cp in U.chars(text):
            ch = text[off:off + r]
            if self.clean:
                if cp in (9, 10, 13) or U.category(cp) == "Zs":
                    out += b" "
                    continue
                if cp == 0 or cp == 0xFFFD or U.category(cp) == "Cc":
                    continue
            if self.chinese and _chinese(cp):
                out += b" " + ch + b" "
                continue
            if self.strip:
                rep = self.nfd(cp)
                decomposed = ch if rep is None else rep
                for doff, dr, dcp in U.chars(decomposed):
                    if not U.is_mark(dcp):
                        out += decomposed[doff:doff + dr]
                continue
            out += ch
        if self.lowercase:
            text = bytes(out)
            if text.isascii():
                return text.lower()
            return b"".join(U.utf8_encode(U.to_lower(cp)) for _, _, cp in U.chars(text))
        return bytes(out)


class Sequence:
    @classmethod
    def from_tree(cls, n) -> "Sequence":
        return cls([from_tree(c) for c in n.normalizers])

    def __init__(self, children):
        self.children = [c for c in children if c is not None]

    def normalize(self, text: bytes) -> bytes:
        return run_chain(self.children, text, "normalize", "normalizer Sequence")


# tree class -> the normalizer MNN's loader builds for it (None: a null normalizer, skipped)
REGISTRY: dict[type, type | None] = stage_registry(
    "Normalizer", Prepend, Replace, Sequence, Bert, Table, Strip,
    NoNormalizer=None, LegacyNFKCNormalizer=Table, BertNFDNormalizer=Bert)



def from_tree(node):
    """The normalizer MNN's loader builds for a tree node, or ``None``."""
    return build_from_registry(REGISTRY, node, "normalizer")
