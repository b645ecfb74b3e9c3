"""Pre-tokenizers as MNN's C++ ``PipelineTokenizer`` runs them: a list of byte strings in, out.

With the compiled module built, ``Bert``, ``ByteLevel`` (its byte map) and ``Metaspace`` run their
loops in ``_csrc/mnn_stages.c`` (chosen at construction: :func:`._compiled.stages`); the loops here
are the reference.
"""

from __future__ import annotations

from mtokspec.format import tree as t
from mtokspec.runtime.shared.registry import build_from_registry, pieces_size, run_chain, stage_registry
from mtokspec.runtime.mnn._compiled import stages
from mtokspec.runtime.mnn._text import ASCII_PUNCT as _ASCII_PUNCT, BYTE_MAP, utf8
from mtokspec.runtime.shared.bounds import current, grown
from mtokspec.runtime.mnn import regex as R
from mtokspec.runtime.mnn import unicode as U
from mtokspec.runtime.shared.text import GPT2_PATTERN

_GPT2 = GPT2_PATTERN.encode()
_BYTE_TABLE = {b: BYTE_MAP[b] for b in range(256)}
# MNN's loader reads Isolated and MergedWithPrevious by their codes and anything else as Removed
_KEPT_BEHAVIORS = (t.SplitBehavior.Isolated, t.SplitBehavior.MergedWithPrevious)


def byte_level_map(s: bytes) -> bytes:
    return b"".join(map(_BYTE_TABLE.__getitem__, s))


class ByteLevel:
    @classmethod
    def from_tree(cls, n) -> "ByteLevel":
        return cls(n.use_regex)

    def __init__(self, use_regex: bool):
        self.use_regex = use_regex
        sp = stages()  # the compiled map (mnn_stages.c), or None: byte_level_map
        self._compiled = None if sp is None else sp.mnn_byte_level_map
        # the scan and the map of a split in one compiled call, or None: R.scan, then the map
        self._scan_mapped, self.scan_counted = (R.scan_compiled(_GPT2) if use_regex else None) or (None, None)

    def pre_tokenize(self, splits: list[bytes]) -> list[bytes]:
        scan_mapped = self._scan_mapped
        if scan_mapped is not None:
            if len(splits) == 1:
                return scan_mapped(splits[0]) if splits[0] else []
            return [piece for s in splits if s for piece in scan_mapped(s)]
        if self.use_regex:
            splits = [piece for s in splits if s for piece in R.scan(s, _GPT2)]
        if self._compiled is not None:
            return self._compiled(splits)
        return [byte_level_map(s) for s in splits]


class Digits:
    @classmethod
    def from_tree(cls, n) -> "Digits":
        return cls(n.individual_digits)

    def __init__(self, individual: bool):
        self.individual = individual

    def pre_tokenize(self, splits: list[bytes]) -> list[bytes]:
        out = []
        for s in splits:
            if not self.individual:
                if s:  # no digit is ever split off: the split stays whole
                    out.append(s)
                continue
            cur = bytearray()
            for off, r, _ in U.chars(s):
                if r == 1 and 48 <= s[off] <= 57:
                    if cur:
                        out.append(bytes(cur))
                        cur = bytearray()
                    out.append(s[off:off + 1])
                else:
                    cur += s[off:off + r]
            if cur:
                out.append(bytes(cur))
        return out


class Metaspace:
    """Every split that does not start with a space gets one (HF: only the first), then each
    space becomes the replacement."""

    @classmethod
    def from_tree(cls, n) -> "Metaspace":
        return cls(utf8(n.replacement), n.add_prefix_space)

    def __init__(self, replacement: bytes, add_prefix_space: bool):
        self.replacement, self.add_prefix_space = replacement, add_prefix_space
        sp = stages()  # the compiled loops (mnn_stages.c), or None: the loops below
        self._compiled = None if sp is None else (sp.mnn_metaspace_size, sp.mnn_metaspace)

    def pre_tokenize(self, splits: list[bytes]) -> list[bytes]:
        out = []
        rep = self.replacement
        if self._compiled is not None:
            size, run = self._compiled
            if len(rep) > 1:
                current(sum(map(len, splits))).size("pre-tokenizer Metaspace", size(splits, rep))
            return run(splits, rep, self.add_prefix_space)
        if len(rep) > 1:
            n = sum(map(len, splits))
            current(n).size("pre-tokenizer Metaspace", n + len(splits) * len(rep) +
                            sum(grown(s, b" ", rep) - len(s) for s in splits))
        for s in splits:
            if self.add_prefix_space and s and s[0] != 32:
                s = b" " + s
            out.append(s.replace(b" ", rep))
        return out


class Split:
    @classmethod
    def from_tree(cls, n) -> "Split":
        return cls(utf8(n.pattern), n.invert, n.behavior)

    def __init__(self, pattern: bytes, invert: bool, behavior: int):
        self.pattern, self.invert = pattern, invert
        self.behavior = t.SplitBehavior(behavior).name if behavior in _KEPT_BEHAVIORS else "Removed"

    def pre_tokenize(self, splits: list[bytes]) -> list[bytes]:
        out = []
        for s in splits:
            if s:
                out.extend(R.split(s, self.pattern, self.invert, self.behavior))
        return out




class Bert:
    @classmethod
    def from_tree(cls, n) -> "Bert":
        return cls()

    def __init__(self):
        sp = stages()  # the compiled loop (mnn_stages.c), or None: the loop below
        self._compiled = None if sp is None else sp.mnn_bert_pre_tokenize

    def pre_tokenize(self, splits: list[bytes]) -> list[bytes]:
        if self._compiled is not None:
            return self._compiled(splits)
        out = []
        for s in splits:
            cur = bytearray()
            for off, r, cp in U.chars(s):
                if U.is_whitespace(cp):
                    if cur:
                        out.append(bytes(cur))
                        cur = bytearray()
                elif cp in _ASCII_PUNCT or U.is_punctuation(cp):
                    if cur:
                        out.append(bytes(cur))
                        cur = bytearray()
                    out.append(s[off:off + r])
                else:
                    cur += s[off:off + r]
            if cur:
                out.append(bytes(cur))
        return out


class Sequence:
    @classmethod
    def from_tree(cls, n) -> "Sequence":
        return cls([from_tree(c) for c in n.pretokenizers])

    def __init__(self, children):
        self.children = [c for c in children if c is not None]

    def pre_tokenize(self, splits: list[bytes]) -> list[bytes]:
        return run_chain(self.children, splits, "pre_tokenize", "pre-tokenizer Sequence", pieces_size)


# tree class -> the pre-tokenizer MNN's loader builds for it (None: a null one, skipped)
REGISTRY: dict[type, type | None] = stage_registry(
    "PreTokenizer", ByteLevel, Digits, Metaspace, Split, Bert, Sequence, NoPreTokenizer=None)



def from_tree(node):
    """The pre-tokenizer MNN's loader builds for a tree node, or ``None``."""
    return build_from_registry(REGISTRY, node, "pre-tokenizer")
