"""Pre-tokenizers: split a normalised string into pieces, like HF ``tokenizers/src/pre_tokenizers``.

Design record: ``docs/design/runtime-hf.md``.
"""

from __future__ import annotations

import re

import regex

from mtokspec.format import tree as t
from mtokspec.format.byte_level import BYTE_TO_CHAR, CHAR_TO_BYTE
from mtokspec.runtime.shared.registry import build_from_registry, pieces_size, run_chain, stage_registry
from mtokspec.runtime.hf.normalizers import WHITESPACE_STR
from mtokspec.runtime.shared.bounds import current, pattern_cost, pattern_refusal
from mtokspec.runtime.shared.text import flatten_sets

__all__ = [
    "PreTokenizer", "NoPreTokenizer", "ByteLevel", "Digits", "Metaspace", "Split",
    "Bert", "Sequence", "REGISTRY", "from_tree", "BYTES_TO_UNICODE", "UNICODE_TO_BYTES",
    "byte_level_map", "ISOLATED", "REMOVED", "MERGED_WITH_PREVIOUS", "MERGED_WITH_NEXT",
    "CONTIGUOUS", "split_spans", "compile_split", "BERT_PUNCTUATION",
]

# Split behaviours: the file's codes (spec/mtok.py declares them), then two HF behaviours that only
# the fixed pre-tokenizers here use.
ISOLATED, REMOVED, MERGED_WITH_PREVIOUS = t.SplitBehavior
MERGED_WITH_NEXT, CONTIGUOUS = 3, 4

# The pattern searches of one call (every segment and step of an encode) share one time budget:
# mtokspec.runtime.shared.bounds.

ONIG_MAX_REPEAT = 100_000  # Oniguruma's ONIG_MAX_REPEAT_NUM: HF refuses a{100001} ("too big number for repeat range")


BYTES_TO_UNICODE: list[str] = list(BYTE_TO_CHAR)  # GPT-2's byte -> printable character map
UNICODE_TO_BYTES: dict[str, int] = CHAR_TO_BYTE
_LATIN1_TO_BL = {b: c for b, c in enumerate(BYTES_TO_UNICODE)}


_ASCII = "".join(map(chr, range(128)))


def _ascii_class(cls: str) -> str:
    """The ASCII characters the ``regex`` class ``cls`` holds, escaped for a ``re`` class: the
    ASCII form of a pattern, which the standard ``re`` module runs faster than ``regex``."""
    return "".join(map(re.escape, regex.findall(cls, _ASCII)))


_ASCII_WS = _ascii_class(r"\s")  # the ASCII white space (``\s``) of the fixed patterns' ASCII forms


def byte_level_map(s: str) -> str:
    """The UTF-8 bytes of ``s`` as GPT-2 byte-level characters."""
    return s.encode("utf-8", "surrogatepass").decode("latin-1").translate(_LATIN1_TO_BL)


def _error(msg: str):
    from mtokspec.errors import TokenizerError
    return TokenizerError(msg)


def split_spans(s: str, spans, behavior: int, invert: bool = False) -> list[str]:
    """HF ``NormalizedString::split`` for match spans ``[(start, end), ...]`` (ascending, disjoint).

    Returns the non-empty pieces.  ``invert`` swaps matches and gaps (HF ``Invert``).
    """
    if not s:
        return []
    parts: list[tuple[int, int, bool]] = []
    prev = 0
    for a, b in spans:
        if prev != a:
            parts.append((prev, a, invert))
        parts.append((a, b, not invert))
        prev = b
    if prev != len(s):
        parts.append((prev, len(s), invert))
    if behavior == ISOLATED:
        return [s[a:b] for a, b, _ in parts if a != b]
    if behavior == REMOVED:
        return [s[a:b] for a, b, m in parts if not m and a != b]
    acc: list[list[int]] = []
    if behavior == CONTIGUOUS:
        previous = False
        for a, b, m in parts:
            if m == previous and acc:
                acc[-1][1] = b
            else:
                acc.append([a, b])
            previous = m
    elif behavior == MERGED_WITH_PREVIOUS:
        previous = False
        for a, b, m in parts:
            if m and not previous and acc:
                acc[-1][1] = b
            else:
                acc.append([a, b])
            previous = m
    elif behavior == MERGED_WITH_NEXT:
        previous = False
        for a, b, m in reversed(parts):
            if m and not previous and acc:
                acc[-1][0] = a
            else:
                acc.append([a, b])
            previous = m
        acc.reverse()
    else:
        raise _error(f"unknown split behaviour {behavior}")
    return [s[a:b] for a, b in acc if a != b]


class PreTokenizer:
    """Base class."""

    __slots__ = ()

    def split(self, s: str) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        out: list[str] = []
        split = self.split
        for p in pieces:
            out.extend(split(p))
        return out


class NoPreTokenizer(PreTokenizer):
    __slots__ = ()

    def split(self, s: str) -> list[str]:
        return [s] if s else []

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        return [p for p in pieces if p]

    @classmethod
    def from_tree(cls, node) -> "NoPreTokenizer":
        return cls()


class ByteLevel(PreTokenizer):
    """HF ``ByteLevel`` (add_prefix_space false): GPT-2 split, then bytes to printable characters."""

    __slots__ = ("use_regex",)

    # HF's pattern ('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+|...) with the contractions in one group: at
    # most one of them can match at a place (their second characters differ), so it splits the
    # same, and the regex module runs it 10-20% faster.  Every character is covered by one
    # alternative, so findall partitions the text.
    PATTERN = regex.compile(
        r"'(?:[stmd]|re|ve|ll)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
    )
    # The same pattern for ASCII text, its classes cut to the ASCII characters ``PATTERN`` puts in
    # them: the standard ``re`` module runs it about twice as fast as ``regex`` runs ``PATTERN``.
    ASCII_PATTERN = re.compile(
        "'(?:[stmd]|re|ve|ll)| ?[{L}]+| ?[{N}]+| ?[^{W}{L}{N}]+|[{W}]+(?![^{W}])|[{W}]+".format(
            L=_ascii_class(r"\p{L}"), N=_ascii_class(r"\p{N}"), W=_ASCII_WS)
    )

    def __init__(self, use_regex: bool = True):
        self.use_regex = use_regex

    def split_raw(self, s: str) -> list[str]:
        """The pieces before the byte mapping."""
        if not s:
            return []
        if not self.use_regex:
            return [s]
        return (self.ASCII_PATTERN if s.isascii() else self.PATTERN).findall(s)

    def split(self, s: str) -> list[str]:
        return [byte_level_map(p) for p in self.split_raw(s)]

    @classmethod
    def from_tree(cls, node: t.ByteLevelPreTokenizer) -> "ByteLevel":
        return cls(node.use_regex)


class Digits(PreTokenizer):
    """HF ``Digits``: numeric characters (Nd, Nl, No) isolated one by one, or grouped in runs."""

    __slots__ = ("individual_digits", "_re")

    def __init__(self, individual_digits: bool):
        self.individual_digits = individual_digits
        self._re = regex.compile(r"\p{N}|\P{N}+" if individual_digits else r"\p{N}+|\P{N}+")

    def split(self, s: str) -> list[str]:
        return self._re.findall(s)

    @classmethod
    def from_tree(cls, node: t.DigitsPreTokenizer) -> "Digits":
        return cls(node.individual_digits)


class Metaspace(PreTokenizer):
    """HF ``Metaspace`` (split=true; prepend_scheme always/never from ``add_prefix_space``)."""

    __slots__ = ("replacement", "add_prefix_space", "_re")

    def __init__(self, replacement: str, add_prefix_space: bool):
        if len(replacement) != 1:
            raise _error(f"Metaspace replacement must be one character, got {replacement!r}")
        self.replacement = replacement
        self.add_prefix_space = add_prefix_space
        r = regex.escape(replacement)
        # MergedWithNext on the replacement character: a new piece starts at each replacement
        self._re = regex.compile(f"{r}[^{r}]*|[^{r}]+")

    def split(self, s: str) -> list[str]:
        if not s:
            return []
        r = self.replacement
        s = s.replace(" ", r)
        if self.add_prefix_space and not s.startswith(r):
            s = r + s
        return self._re.findall(s)

    @classmethod
    def from_tree(cls, node: t.MetaspacePreTokenizer) -> "Metaspace":
        return cls(node.replacement, node.add_prefix_space)


_NON_SPACE = regex.compile(r"[^\s]+")
_ASCII_NON_SPACE = re.compile("[^" + _ASCII_WS + "]+")


def _words(s: str) -> list[str]:
    """The runs of characters that are not white space (``\\s``, Unicode White_Space): HF's
    WhitespaceSplit.  A fixed linear pattern, so no timeout.  Printable ASCII has no white space
    but " ", which ``str.split`` cuts at C speed; other ASCII takes the pattern cut to ASCII."""
    if s.isascii():
        return s.split() if s.isprintable() else _ASCII_NON_SPACE.findall(s)
    return _NON_SPACE.findall(s)


def compile_split(pattern: str):
    """``pattern`` compiled as HF's ``Split`` runs it (``regex``, Oniguruma's syntax), or
    ``TokenizerError``: what HF's Oniguruma refuses, and what passes the bounds of
    :func:`~mtokspec.runtime.shared.bounds.pattern_refusal`, checked before compiling."""
    cost = pattern_cost(pattern)
    why = pattern_refusal(pattern, cost)
    if cost.largest_repeat > ONIG_MAX_REPEAT:
        why = f"a repeat count past Oniguruma's {ONIG_MAX_REPEAT:,} (HF refuses it too: too big number for repeat range)"
    if why is not None:
        raise _error(f"Split: pattern {pattern!r:.80}: {why}")
    try:
        return regex.compile(flatten_sets(pattern), regex.VERSION0)
    except (regex.error, OverflowError, RecursionError, ValueError, MemoryError) as e:
        raise _error(f"Split: cannot compile pattern {pattern!r:.80}: {str(e) or type(e).__name__}") from None


class Split(PreTokenizer):
    """HF ``Split`` with a regular expression, ``invert`` and a behaviour (0, 1 or 2)."""

    __slots__ = ("pattern", "invert", "behavior", "_re", "_fast")

    def __init__(self, pattern: str, invert: bool = False, behavior: int = ISOLATED):
        if behavior not in (ISOLATED, REMOVED, MERGED_WITH_PREVIOUS, MERGED_WITH_NEXT, CONTIGUOUS):
            raise _error(f"Split: unknown behaviour {behavior}")
        self._re = compile_split(pattern)
        self.pattern = pattern
        self.invert = invert
        self.behavior = behavior
        # White space split (the exporter's WhitespaceSplit): the pieces are the non-space runs.
        self._fast = _words if pattern == r"\s+" and not invert and behavior == REMOVED else None

    def _spans(self, s: str):
        """Match spans in Oniguruma's iteration order (HF ``SysRegex::find_iter``).

        Python's engines accept an empty match right after the previous match; Oniguruma's
        iterator rejects it and moves one character on.  Both agree until the first empty match,
        so the quick ``finditer`` result is used unless it holds one.  The searches run within the
        call's one regex deadline (:mod:`mtokspec.runtime.shared.bounds`).
        """
        b = current(len(s))
        try:
            spans = b.regex(lambda timeout: [m.span() for m in self._re.finditer(s, timeout=timeout)])
            for a, z in spans:
                if a == z:
                    return self._onig_spans(s, b)
            return spans
        except TimeoutError:
            raise _error(
                f"Split pattern {self.pattern!r:.80} ran out of the call's regex time "
                f"({b.regex_seconds():.1f} s of CPU for an input of {b.n} characters; pathological pattern?)") from None

    def _onig_spans(self, s: str, b):
        search = self._re.search
        out = []
        pos = 0
        last_end = -1
        n = len(s)
        while pos <= n:
            m = b.regex(lambda timeout: search(s, pos, timeout=timeout))  # noqa: B023 - called at once
            if m is None:
                break
            a, z = m.span()
            if a == z and z == last_end:
                pos += 1
                continue
            out.append((a, z))
            pos = last_end = z
        return out

    def split(self, s: str) -> list[str]:
        if not s:
            return []
        if self._fast is not None:
            return self._fast(s)
        return split_spans(s, self._spans(s), self.behavior, self.invert)

    @classmethod
    def from_tree(cls, node: t.SplitPreTokenizer) -> "Split":
        return cls(node.pattern, node.invert, node.behavior)


BERT_PUNCTUATION = r"\p{P}!-/:-@\[-`{-~"
"""The characters BERT's pre-tokenizer isolates, as the inside of a regex class: Unicode's P
categories and every ASCII punctuation or symbol character."""


class Bert(PreTokenizer):
    """HF ``BertPreTokenizer``: drop white space, isolate each punctuation character."""

    __slots__ = ()

    _P = BERT_PUNCTUATION
    _RE = regex.compile(f"[^{regex.escape(WHITESPACE_STR)}{_P}]+|[{_P}]")
    # for ASCII text: the same classes cut to ASCII, run by ``re`` (see ByteLevel.ASCII_PATTERN)
    _ASCII_RE = re.compile("[^{W}{P}]+|[{P}]".format(W=_ascii_class(f"[{regex.escape(WHITESPACE_STR)}]"),
                                                    P=_ascii_class(f"[{_P}]")))

    def split(self, s: str) -> list[str]:
        return (self._ASCII_RE if s.isascii() else self._RE).findall(s)

    @classmethod
    def from_tree(cls, node) -> "Bert":
        return cls()


class Sequence(PreTokenizer):
    """HF ``Sequence``: each pre-tokenizer splits the pieces of the previous one."""

    __slots__ = ("pretokenizers", "_ws_meta")

    def __init__(self, pretokenizers: list[PreTokenizer]):
        self.pretokenizers = [p for p in pretokenizers if not isinstance(p, NoPreTokenizer)]
        # T5 style [WhitespaceSplit, Metaspace]: the words hold no white space, so Metaspace only
        # prepends the replacement to a word without it (and splits the others as usual)
        ps = self.pretokenizers
        self._ws_meta = (ps[0]._fast, ps[1]) if (
            len(ps) == 2 and type(ps[0]) is Split and ps[0]._fast is not None
            and type(ps[1]) is Metaspace) else None

    def split(self, s: str) -> list[str]:
        if self._ws_meta is not None:
            fast, meta = self._ws_meta
            r = meta.replacement
            pre = r if meta.add_prefix_space else ""
            out: list[str] = []
            for w in fast(s):
                if r in w:
                    out += meta.split(w)
                else:
                    out.append(pre + w)
            return out
        return run_chain(self.pretokenizers, [s] if s else [], "pre_tokenize", "pre-tokenizer Sequence", pieces_size)

    @classmethod
    def from_tree(cls, node: t.SequencePreTokenizer) -> "Sequence":
        return cls([from_tree(p) for p in node.pretokenizers])


REGISTRY: dict[type, type[PreTokenizer]] = stage_registry(
    "PreTokenizer", ByteLevel, Digits, Metaspace, Split, Bert, Sequence, NoPreTokenizer=NoPreTokenizer)


def from_tree(node) -> PreTokenizer:
    """The runtime pre-tokenizer for a tree node."""
    return build_from_registry(REGISTRY, node, "pre-tokenizer")


def contains(pt: PreTokenizer, cls: type) -> bool:
    """Whether ``pt`` is or contains (in a Sequence) a pre-tokenizer of class ``cls``."""
    if isinstance(pt, cls):
        return True
    if isinstance(pt, Sequence):
        return any(contains(p, cls) for p in pt.pretokenizers)
    return False
