"""Byte-pair encoding, with the merge order of HF ``tokenizers/src/models/bpe/word.rs``.

HF merges, at every step, the adjacent pair with the lowest rank, the leftmost one among equal
ranks.  Here a word is a list of symbol ids with a parallel list of pair keys ``rank << 32 | merged
id`` (looked up by ``(left id, right id)``); a step takes ``min`` of the key list (leftmost minimum
via ``list.index``) and updates the two neighbouring keys.  At load only ``{(left, right): rank}`` is
built, at C speed from the merge rows; the merged ids are resolved in one pass on first use (a merge
whose output is missing fails when it is applied).  Merge tables with repeated ranks (not in real
files) use a slower loop that keeps HF's leftmost-first tie rule.  Results are cached per piece as
tuples, and the parts of cut pieces have a cache of their own (both bounded: cleared when full).

Lossy places (format-notes ⚠), followed as the file says: ``unk_token`` is not stored, so a
character that is neither in the vocabulary nor covered by byte fallback is dropped (HF with
``unk_token=None`` does the same); ``dropout``, ``continuing_subword_prefix``,
``end_of_word_suffix`` and ``ignore_merges`` are not stored and not applied.

Long pieces (SentencePiece-style files without a pre-tokenizer encode whole lines) are cut where no
merge can cross: (1) before every ``▁`` that follows a non-``▁`` character, when no merge output
contains a non-``▁`` character followed by ``▁`` — checked on the loaded merges, never assumed;
(2) for a cache miss, between two characters (both single-character tokens) whose two-character
string occurs in no merge output, and around a character spelled by byte-fallback tokens when no
merge uses a byte token.  Merges on either side of such a cut are independent, so the
result is exactly that of the whole piece.
"""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import Any

import regex

from mtokspec import tree
from mtokspec.runtime.pre_tokenizers import byte_level_map

__all__ = ["BPE", "CACHE_MAX"]

CACHE_MAX = 200_000
_INF = 1 << 62
_BAD = 0xFFFFFFFF  # merged id of a merge whose output is missing from the vocab
_SP = "\u2581"


def _err(msg: str):
    from mtokspec.runtime import TokenizerError
    return TokenizerError(msg)


def decode_token(b: bytes) -> str:
    """A vocab token as text (bytes that are not UTF-8 keep their identity via surrogates)."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return b.decode("utf-8", "surrogateescape")


def columns(rows, width: int) -> tuple:
    """A table's columns without a tuple per row (``Table.columns``), or from plain row lists."""
    if hasattr(rows, "columns"):
        cols = rows.columns()
        if cols:
            return cols
    return tuple(zip(*rows)) if rows else ((),) * width


def vocab_dict(rows) -> dict[str, int]:
    """``{token text: id}`` of ``(token bytes, id, ...)`` rows (C-level loops when all are UTF-8)."""
    if not rows:
        return {}
    tokens, ids = columns(rows, 2)[:2]
    try:
        return dict(zip(map(bytes.decode, tokens), ids))
    except UnicodeDecodeError:
        return {decode_token(t): i for t, i in zip(tokens, ids)}


_first = itemgetter(0)
_second = itemgetter(1)


class BPE:
    __slots__ = ("vocab", "_tokens", "_ranks", "_merged", "_tied", "byte_fallback", "byte_level", "_cache",
                 "_parts", "_sp_chunk", "_bigrams", "_solo", "_chunk_re", "map_bytes")

    _tokens: dict[int, str] | None
    # values are ``rank << 32 | merged id``, or ``(rank, merged id)`` when ``_tied``
    _merged: dict[tuple[int, int], Any] | None
    _sp_chunk: bool | None
    _bigrams: frozenset[str] | None
    _solo: dict[str, bool] | None
    _chunk_re: regex.Pattern[str] | None

    def __init__(self, vocab: dict[str, int], merges_rows, byte_fallback: bool = False,
                 byte_level: bool = False, tokens: dict[int, str] | None = None):
        self.vocab = vocab
        self._tokens = tokens  # id -> token, built lazily
        # (left id, right id) -> rank, built at C speed from the rows; HF keeps the later (higher
        # rank) entry of a repeated pair
        lefts, rights, order = columns(merges_rows, 3)
        ranks = dict(zip(zip(lefts, rights), order))
        if len(ranks) < len(merges_rows):
            ranks = {}
            for a, b, k in merges_rows:
                if ranks.get((a, b), -1) < k:
                    ranks[(a, b)] = k
        self._ranks = ranks
        self._merged = None  # (left id, right id) -> rank << 32 | merged id, built on first use
        self._tied = False
        self.byte_fallback = byte_fallback
        self.byte_level = byte_level
        self.map_bytes = byte_level  # the tokenizer turns this off when a ByteLevel pre-tokenizer maps
        self._cache: dict[str, tuple] = {}
        self._parts: dict[str, tuple] = {}  # results of the pieces of cut words
        self._sp_chunk = None
        self._bigrams = None
        self._solo = None  # char -> spelled by unmergeable byte tokens (None: rule not safe)
        self._chunk_re = None

    @classmethod
    def from_tree(cls, node: tree.BPEModel) -> "BPE":
        return cls(vocab_dict(node.vocab), node.merges, node.byte_fallback, node.byte_level)

    # --- tables ---------------------------------------------------------------------------------
    def id_to_token_table(self) -> dict[int, str]:
        t = self._tokens
        if t is None:
            v = self.vocab
            t = self._tokens = dict(zip(v.values(), v.keys()))
        return t

    def ranks(self) -> dict[tuple[str, str], int]:
        """The merges as ``{(left token, right token): rank}``."""
        toks = self.id_to_token_table()
        try:
            return {(toks[a], toks[b]): k for (a, b), k in self._ranks.items()}
        except KeyError as e:
            raise _err(f"BPE merge names id {e.args[0]} which is not in the vocabulary") from None

    def _merge_outputs(self) -> str:
        """Every merge output, joined by newlines (C-level maps; kept until both checks ran)."""
        toks = self.id_to_token_table()
        pairs = self._ranks.keys()
        try:
            outs = map(str.__add__, map(toks.__getitem__, map(_first, pairs)),
                       map(toks.__getitem__, map(_second, pairs)))
            return "\n".join(outs)
        except KeyError as e:
            raise _err(f"BPE merge names id {e.args[0]} which is not in the vocabulary") from None

    def sp_chunking(self) -> bool:
        """Whether cutting before each ``▁`` that follows a non-``▁`` is safe (checked once)."""
        ok = self._sp_chunk
        if ok is None:
            joined = self._merge_outputs()
            ok = self._sp_chunk = regex.search(f"[^{_SP}\n]{_SP}", joined) is None
            self._chunk_re = regex.compile(f"{_SP}*[^{_SP}]+|{_SP}+")
        return ok

    def bigrams(self) -> frozenset[str]:
        bg = self._bigrams
        if bg is None:
            s = self._merge_outputs()
            bg = self._bigrams = frozenset(map("".join, zip(s, s[1:])))
            if self.byte_fallback:
                # byte tokens that take part in no merge: a character spelled with them is a part
                # of its own (nothing merges across it), which keeps the parts short and repeating
                bts = {self.vocab.get("<0x%02X>" % b) for b in range(256)} - {None}
                r = self._ranks
                self._solo = {} if bts.isdisjoint(map(_first, r)) and bts.isdisjoint(map(_second, r)) else None
        return bg

    def _spelled_by_bytes(self, c: str) -> bool:
        """Whether ``c`` (not in the vocab) becomes byte tokens under byte fallback, all present."""
        # not None: callers check it (no narrowing here, it runs per character)
        solo: dict[str, bool] = self._solo  # type: ignore[assignment]
        ok = solo.get(c)
        if ok is None:
            vocab = self.vocab
            ok = solo[c] = all("<0x%02X>" % b in vocab for b in c.encode("utf-8", "surrogatepass"))
        return ok

    # --- encoding -------------------------------------------------------------------------------
    def get_cache(self) -> dict:
        return self._cache

    def tokenize(self, piece: str):
        """Ids of one pre-tokenized piece (already in the model's alphabet unless ``map_bytes``)."""
        cache = self._cache
        r = cache.get(piece)
        if r is not None:
            return r
        word = byte_level_map(piece) if self.map_bytes else piece
        if len(word) > 24:
            parts = self._parts
            get = parts.get
            out: list[int] = []
            for part in self._cut(word):
                pr = get(part)
                if pr is None:
                    pr = self._bpe(part)
                    if len(parts) >= CACHE_MAX:
                        parts.clear()
                    parts[part] = pr
                out += pr
            r = tuple(out)
        else:
            r = self._bpe(word)
        if len(cache) >= CACHE_MAX:
            cache.clear()
        cache[piece] = r  # tuples of ints: the cycle collector stops tracking them
        return r

    def tokenize_text(self, text: str, out: list[int]) -> None:
        """Encode a whole un-pre-tokenized segment (SentencePiece style), appending to ``out``."""
        if len(text) > 24 and not self.map_bytes and self.sp_chunking():
            cache = self._cache
            get = cache.get
            tok = self.tokenize
            chunk_re = self._chunk_re
            assert chunk_re is not None  # set by sp_chunking()
            for chunk in chunk_re.findall(text):
                r = get(chunk)
                if r is None:
                    r = tok(chunk)
                out += r
        else:
            out += self.tokenize(text)

    def _cut(self, word: str) -> list[str]:
        """Split a long word where no merge can cross: between two characters that are tokens and
        whose two-character string occurs in no merge output (bigram rule), and around a character
        spelled by byte-fallback tokens that take part in no merge."""
        bg = self._bigrams
        if bg is None:
            bg = self.bigrams()
        vocab = self.vocab
        solo = self._solo
        parts = []
        start = 0
        prev = word[0]
        prev_known = prev in vocab
        prev_solo = solo is not None and not prev_known and self._spelled_by_bytes(prev)
        for i in range(1, len(word)):
            c = word[i]
            known = c in vocab
            cur_solo = not known and solo is not None and self._spelled_by_bytes(c)
            if prev_solo or cur_solo or (known and prev_known and (prev + c) not in bg):
                parts.append(word[start:i])
                start = i
            prev = c
            prev_known = known
            prev_solo = cur_solo
        parts.append(word[start:])
        return parts

    def _symbols(self, word: str) -> list[int]:
        vocab = self.vocab
        try:
            return list(map(vocab.__getitem__, word))
        except KeyError:
            pass
        out: list[int] = []
        for c in word:
            i = vocab.get(c)
            if i is not None:
                out.append(i)
            elif self.byte_fallback:
                bts: list = [vocab.get("<0x%02X>" % b) for b in c.encode("utf-8", "surrogatepass")]
                if None not in bts:  # all ints (no cast: this runs per character)
                    out.extend(bts)
                # else: unknown and no unk token stored: dropped
        return out

    def _merge_table(self) -> dict:
        """``{(left id, right id): rank << 32 | merged id}`` (C-level maps over the merges)."""
        toks = self.id_to_token_table()
        ranks = self._ranks
        pairs = list(ranks)
        try:
            outs = list(map(str.__add__, map(toks.__getitem__, map(_first, pairs)),
                            map(toks.__getitem__, map(_second, pairs))))
        except KeyError as e:
            raise _err(f"BPE merge names id {e.args[0]} which is not in the vocabulary") from None
        # a merge whose output is not in the vocab (HF refuses such files) fails when applied
        mids = list(map(self.vocab.get, outs, repeat(_BAD)))
        m: dict[tuple[int, int], Any]
        if len(set(ranks.values())) < len(ranks):
            # two merges share a rank (not in real files): HF then takes the leftmost pair, which a
            # combined key cannot express; keep (rank, merged id) pairs for the general loop
            m = self._merged = dict(zip(pairs, zip(ranks.values(), mids)))
            self._tied = True
        else:
            m = self._merged = dict(zip(pairs, map(int.__or__, map(int.__lshift__, ranks.values(),
                                                                     repeat(32)), mids)))
        return m

    def _bad_merge(self, a: int, b: int) -> int:
        toks = self.id_to_token_table()
        i = self.vocab.get(toks[a] + toks[b])
        if i is None:
            raise _err(f"BPE merge output {toks[a] + toks[b]!r} is not in the vocabulary")
        return i  # the id really is _BAD

    def _bpe_tied(self, syms: list[int]) -> tuple:
        """The merge loop for merge tables with repeated ranks (ties go to the leftmost pair)."""
        merged = self._merged
        assert merged is not None  # built by _bpe() before it calls this
        get = merged.get
        inf = (_INF, 0)
        rk = [get(p, inf) for p in zip(syms, syms[1:])]
        best = min(rk)
        while best[0] != _INF:
            i = rk.index(min(rk, key=_first))
            m = rk[i][1]
            if m == _BAD:
                m = self._bad_merge(syms[i], syms[i + 1])
            if i:
                rk[i - 1] = get((syms[i - 1], m), inf)
            if i + 2 < len(syms):
                rk[i:i + 2] = (get((m, syms[i + 2]), inf),)
            else:
                del rk[i]
            syms[i:i + 2] = (m,)
            if not rk:
                break
            best = min(rk, key=_first)
        return tuple(syms)

    def _bpe(self, word: str) -> tuple:
        if len(word) == 1:
            i = self.vocab.get(word)
            if i is not None:
                return (i,)
        syms = self._symbols(word)
        if len(syms) > 1:
            merged = self._merged
            if merged is None:
                merged = self._merge_table()
            if self._tied:
                return self._bpe_tied(syms)
            get = merged.get
            inf = _INF
            rk = [get(p, inf) for p in zip(syms, syms[1:])]
            best = min(rk)
            while best != inf:
                i = rk.index(best)
                m = best & 0xFFFFFFFF
                if m == _BAD:
                    m = self._bad_merge(syms[i], syms[i + 1])
                if i:
                    rk[i - 1] = get((syms[i - 1], m), inf)
                if i + 2 < len(syms):
                    rk[i:i + 2] = (get((m, syms[i + 2]), inf),)
                else:
                    del rk[i]
                syms[i:i + 2] = (m,)
                if not rk:
                    break
                best = min(rk)
        return tuple(syms)

    # --- vocabulary -----------------------------------------------------------------------------
    def token_to_id(self, token: str) -> int | None:
        return self.vocab.get(token)

    def id_to_token(self, i: int) -> str | None:
        return self.id_to_token_table().get(i)
