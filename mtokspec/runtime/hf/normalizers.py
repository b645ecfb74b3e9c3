"""Normalizers: ``str -> str`` with the semantics of HF ``tokenizers/src/normalizers``.

Design record: ``docs/design/runtime-hf.md``.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import regex

from mtokspec.format import tree as t
from mtokspec.runtime.shared.registry import build_from_registry, run_chain, stage_registry
from mtokspec.runtime.shared.bounds import current, grown

__all__ = [
    "Normalizer", "NoNormalizer", "LegacyNFKC", "Prepend", "Replace", "Sequence", "Bert",
    "Table", "Strip", "REGISTRY", "from_tree", "WHITESPACE", "lowercase", "lower_table", "strip_accents_table", "hangul_nfd", "strip_ws",
]

# Unicode White_Space: Rust char::is_whitespace, Oniguruma's and `regex`'s \s.
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)
WHITESPACE_STR: str = "".join(sorted(WHITESPACE))


def strip_ws(s: str, left: bool = True, right: bool = True) -> str:
    """Strip Unicode White_Space (not Python's wider ``isspace`` set)."""
    if left and right:
        return s.strip(WHITESPACE_STR)
    if left:
        return s.lstrip(WHITESPACE_STR)
    if right:
        return s.rstrip(WHITESPACE_STR)
    return s


def lower_table() -> dict[int, str]:
    """``{code point: lower case}`` for each code point HF's lower-casing changes (measured on HF
    ``tokenizers`` itself: ``_normalizer_data``, ``tools/make_hf_normalizers.py``)."""
    from mtokspec.runtime.hf import _normalizer_data as data

    return data.LOWER


HANGUL_SYLLABLES = range(0xAC00, 0xD7A4)


def hangul_nfd(cp: int) -> str:
    """The canonical decomposition of a Hangul syllable (Unicode's arithmetic)."""
    s = cp - 0xAC00
    lead, vowel, trail = 0x1100 + s // 588, 0x1161 + s % 588 // 28, 0x11A7 + s % 28
    return chr(lead) + chr(vowel) + (chr(trail) if trail != 0x11A7 else "")


def strip_accents_table() -> dict[int, str]:
    """``{code point: result}`` for each code point HF's BertNormalizer ``strip_accents`` (NFD, then
    the nonspacing marks dropped) changes, as measured on HF (``_normalizer_data``), Hangul included."""
    from mtokspec.runtime.hf import _normalizer_data as data

    return {**data.STRIP, **{cp: hangul_nfd(cp) for cp in HANGUL_SYLLABLES}}


def lowercase(s: str) -> str:
    """Per-character lower-casing as HF's (Rust ``char::to_lowercase`` of HF's Unicode version, not
    Python's; no final-sigma context)."""
    if s.isascii():
        return s.lower()
    return s.translate(lower_table())


class Normalizer:
    """Base class: ``normalize(s)`` returns the normalised string."""

    __slots__ = ()

    def normalize(self, s: str) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def is_identity(self) -> bool:
        return False


class NoNormalizer(Normalizer):
    __slots__ = ()

    def normalize(self, s: str) -> str:
        return s

    @property
    def is_identity(self) -> bool:
        return True

    @classmethod
    def from_tree(cls, node) -> "NoNormalizer":
        return cls()


class LegacyNFKC(Normalizer):
    """Normalizer tag 1 (NFKC without a table): this Python's ``unicodedata`` NFKC."""

    __slots__ = ()

    def normalize(self, s: str) -> str:
        if s.isascii():
            return s
        return unicodedata.normalize("NFKC", s)

    @classmethod
    def from_tree(cls, node) -> "LegacyNFKC":
        return cls()


class Prepend(Normalizer):
    """HF ``Prepend``: put ``prepend`` before a non-empty string."""

    __slots__ = ("prepend",)

    def __init__(self, prepend: str):
        self.prepend = prepend

    def normalize(self, s: str) -> str:
        return self.prepend + s if s else s

    @classmethod
    def from_tree(cls, node: t.PrependNormalizer) -> "Prepend":
        return cls(node.prepend)


class Replace(Normalizer):
    """HF ``Replace`` with a literal pattern (non-overlapping, left to right, like ``str.replace``).

    An empty pattern is what the exporter writes for an HF ``Regex`` pattern (which it cannot
    carry): it is a no-op here, because the file does not say what to replace.
    """

    __slots__ = ("pattern", "content")

    def __init__(self, pattern: str, content: str):
        self.pattern = pattern
        self.content = content

    def normalize(self, s: str) -> str:
        if not self.pattern:
            return s
        if len(self.content) > len(self.pattern):
            current(len(s)).size("normalizer Replace", grown(s, self.pattern, self.content))
        return s.replace(self.pattern, self.content)

    @property
    def is_identity(self) -> bool:
        return not self.pattern

    @classmethod
    def from_tree(cls, node: t.ReplaceNormalizer) -> "Replace":
        return cls(node.pattern, node.content)


class Sequence(Normalizer):
    """HF ``Sequence``: each normalizer in turn."""

    __slots__ = ("normalizers",)

    def __init__(self, normalizers: list[Normalizer]):
        self.normalizers = [n for n in normalizers if not n.is_identity]

    def normalize(self, s: str) -> str:
        return run_chain(self.normalizers, s, "normalize", "normalizer Sequence")

    @property
    def is_identity(self) -> bool:
        return not self.normalizers

    @classmethod
    def from_tree(cls, node: t.SequenceNormalizer) -> "Sequence":
        return cls([from_tree(n) for n in node.normalizers])


# --- Bert -------------------------------------------------------------------------------
# clean_text: drop NUL, U+FFFD and "other" characters (Cc, Cf, Co; \t \n \r excepted), then map
# white space to ' ', by HF's own tables (measured: its Cf is of an older Unicode, unassigned code
# points are kept); strip_accents: NFD, then HF's nonspacing marks dropped.
def _class(ranges) -> str:
    return "[" + "".join(regex.escape(chr(a)) + ("-" + regex.escape(chr(b)) if b != a else "") for a, b in ranges) + "]"


@lru_cache(maxsize=1)
def _bert_classes() -> tuple[regex.Pattern, regex.Pattern, dict[int, None]]:
    """BertNormalizer's classes as HF's own tables have them (measured on HF: ``_normalizer_data``):
    what ``clean_text`` deletes, what it turns into a space (patterns), and the nonspacing marks
    ``strip_accents`` drops after NFD, the characters HF's stripping deletes whole (a
    ``str.translate`` map: a class of their ~300 ranges runs 40 times slower in ``regex``)."""
    from mtokspec.runtime.hf import _normalizer_data as data

    return (regex.compile(_class(data.CLEAN_DELETED) + "+"), regex.compile(_class(data.CLEAN_SPACED)),
            dict.fromkeys(cp for cp, r in data.STRIP.items() if not r))


_CJK = regex.compile(
    "([\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df\U0002a700-\U0002b73f\U0002b740-\U0002b81f"
    "\U0002b920-\U0002ceaf\uf900-\ufaff\U0002f800-\U0002fa1f])"
)


def _table_map(table) -> tuple[dict[int, str], int]:
    """The table as a ``str.translate`` map, and its longest entry's length."""
    # a normal form that is not UTF-8 (only a crafted file holds one) keeps its bytes as surrogates,
    # as vocabulary tokens do, instead of failing the load
    from mtokspec.runtime.hf.models._vocab import decode_token  # (models imports this module)

    m = {cp: decode_token(b) for cp, b in table}
    return m, max(map(len, m.values()), default=1)


def _translate(s: str, mapped: tuple[dict[int, str], int], stage: str) -> str:
    """``s.translate(m)``, refused by the call's size bound before a file's table (whose entries
    may be long) makes an oversize string."""
    m, longest = mapped
    b = current(len(s))
    if len(s) * longest > b.limit:
        get = m.get
        b.size(stage, sum(len(get(ord(c), c)) for c in s))
    return s.translate(m)


class Bert(Normalizer):
    """HF ``BertNormalizer`` (tags 5 and 7).

    ``nfd`` is the embedded NFD table (tag 7) or ``None`` (tag 5, where a set ``strip_accents``
    falls back to this Python's ``unicodedata`` NFD).  The file stores the resolved
    ``strip_accents`` (HF's ``None`` means "same as lowercase"; the exporter resolves it).
    """

    __slots__ = ("clean_text", "handle_chinese_chars", "strip_accents", "lowercase", "_nfd_table",
                 "_nfd")

    _nfd: tuple[dict[int, str], int] | None

    def __init__(self, clean_text: bool, handle_chinese_chars: bool, strip_accents: bool,
                 lowercase: bool, nfd_table=None):
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = strip_accents
        self.lowercase = lowercase
        self._nfd_table = nfd_table
        self._nfd = None

    def _decompose(self, s: str) -> str:
        if self._nfd_table is None:
            return unicodedata.normalize("NFD", s)
        nfd = self._nfd
        if nfd is None:
            nfd = self._nfd = _table_map(self._nfd_table)
        # table per code point, then canonical reordering (NFD of an NFD-equivalent string)
        return unicodedata.normalize("NFD", _translate(s, nfd, "normalizer BertNormalizer"))

    def normalize(self, s: str) -> str:
        # printable ASCII has nothing to drop and no white space but " " (isprintable: C speed)
        if self.clean_text and not (s.isascii() and s.isprintable()):
            drop, space, _ = _bert_classes()
            s = space.sub(" ", drop.sub("", s))
        if self.handle_chinese_chars and not s.isascii():
            s = _CJK.sub(r" \1 ", s)
        if self.strip_accents and not s.isascii():
            s = self._decompose(s).translate(_bert_classes()[2])
        if self.lowercase:
            s = lowercase(s)
        return s

    @property
    def is_identity(self) -> bool:
        return not (self.clean_text or self.handle_chinese_chars or self.strip_accents
                    or self.lowercase)

    @classmethod
    def from_tree(cls, node) -> "Bert":
        table = getattr(node, "nfd_table", None)
        return cls(node.clean_text, node.handle_chinese_chars, node.strip_accents, node.lowercase,
                   table)


class Table(Normalizer):
    """Tag 6: the embedded per-code-point table, then canonical composition (see module doc)."""

    __slots__ = ("_table", "_map", "_ascii_kept")

    _ascii_kept: bool | None

    def __init__(self, table):
        self._table = table
        self._map = None
        self._ascii_kept = None

    def normalize(self, s: str) -> str:
        if s.isascii():
            kept = self._ascii_kept
            if kept is None:
                # no ASCII code point changes under NFC or NFKC; a table that maps one (a
                # SentencePiece map's tab and newline, ``--target mnn``'s tables) reads every text
                kept = self._ascii_kept = not any(row[0] < 0x80 for row in self._table)
            if kept:
                return s
        m = self._map
        if m is None:
            m = self._map = _table_map(self._table)
        return unicodedata.normalize("NFC", _translate(s, m, "normalizer table"))

    @property
    def is_identity(self) -> bool:
        return not self._table

    @classmethod
    def from_tree(cls, node: t.TableNormalizer) -> "Table":
        return cls(node.table)


class Strip(Normalizer):
    """HF ``Strip`` normalizer (Unicode White_Space)."""

    __slots__ = ("left", "right")

    def __init__(self, left: bool, right: bool):
        self.left = left
        self.right = right

    def normalize(self, s: str) -> str:
        return strip_ws(s, self.left, self.right)

    @property
    def is_identity(self) -> bool:
        return not (self.left or self.right)

    @classmethod
    def from_tree(cls, node: t.StripNormalizer) -> "Strip":
        return cls(node.strip_left, node.strip_right)


REGISTRY: dict[type, type[Normalizer]] = stage_registry(
    "Normalizer", Prepend, Replace, Sequence, Bert, Table, Strip,
    NoNormalizer=NoNormalizer, LegacyNFKCNormalizer=LegacyNFKC, BertNFDNormalizer=Bert)


def from_tree(node) -> Normalizer:
    """The runtime normalizer for a tree node."""
    return build_from_registry(REGISTRY, node, "normalizer")
