"""Unigram language model: HF ``tokenizers/src/models/unigram/model.rs`` ``encode_optimized``.

Viterbi over the characters of a piece: candidates are visited by start position, then by length,
and a node keeps the first best score (ties go to the earliest candidate, as in HF).  A character
that starts no single-character piece gets an unknown node scored ``min_score - 10``; consecutive
unknown nodes are fused into one string, which becomes byte tokens under ``byte_fallback`` (when all
``<0xXX>`` exist) or ``unk_id``.  Results are cached per piece (bounded).  The candidates come
from a table of every prefix of every piece (HF walks a trie), built on the first encode for keys
of 1-2 characters and one character deeper at a time after that, as text meets them (``_build``).

Scores and HF parity (format-notes, "Float scores"): HF reads ``tokenizer.json`` with serde_json's
default float parser, which is not correctly rounded; the exporter writes Python's correctly rounded
value.  With ``serde_scores=True`` (the default) every score is re-parsed from its shortest decimal
form the way serde_json does (integer significand, then one multiplication or division by a power of
ten), which reproduces HF's values exactly, so exact Viterbi ties resolve as in HF.
``serde_scores=False`` uses the file's values unchanged.  A piece's score is re-read the first time
the lattice uses it (the shortest decimal form costs ~0.4 us per float: all of t5's 32k scores
would be 27 ms before the first encode); the lowest score, which prices unknown nodes, is read at
build time from the few stored scores that can round to it.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Collection
from itertools import repeat
from operator import itemgetter
from typing import Any

from mtokspec import tree
from mtokspec.runtime.models._vocab import ByteKeyedVocab, columns, decode_token
from mtokspec.runtime.models.bpe import CACHE_MAX

__all__ = ["Unigram", "serde_f64", "serde_f64_min", "UNK_PENALTY"]

UNK_PENALTY = 10.0
_MISSING = object()
_SMALL_START = 64  # a start with at most this many longer pieces is loaded whole (_load_start)
_FIRST = itemgetter(slice(0, 1))
_FIRST_TWO = itemgetter(slice(0, 2))
_POW10 = [float(f"1e{k}") for k in range(309)]


def _piece(i: int | None) -> list | None:
    """A piece's entry in the lattice's table: [id, score], the score read on first use."""
    return None if i is None else [i, None]


class _Unloaded:
    """The table's entry for a key whose longer keys are not in the table yet: it holds the key's
    own entry (a piece or None), which replaces it once they are (``Unigram._load_start``).  Not
    subscriptable, so the lattice's ``v[1]`` fails on it as on an unread score."""

    __slots__ = ("value",)

    def __init__(self, value: list | None):
        self.value = value


def _prefix_end(ordered: list[str], g: str, lo: int) -> int:
    """The end of the run of ``ordered`` (sorted, from ``lo`` on) that starts with ``g``."""
    while g:
        c = ord(g[-1])
        if c < 0x10FFFF:
            return bisect_left(ordered, g[:-1] + chr(c + 1), lo)
        g = g[:-1]  # nothing sorts between "...U+10FFFF" runs and the next shorter prefix
    return len(ordered)


def serde_f64(x: float) -> float:
    """The f64 serde_json (default features) reads from the shortest decimal form of ``x``."""
    if not math.isfinite(x) or x == 0.0:
        return x
    r = repr(x)
    neg = r[0] == "-"
    if neg:
        r = r[1:]
    mant, _, exp = r.partition("e")
    e10 = int(exp) if exp else 0
    ip, _, fp = mant.partition(".")
    if fp == "0":
        fp = ""
    sig = int(ip + fp)
    e10 -= len(fp)
    f = float(sig)
    while True:
        k = -e10 if e10 < 0 else e10
        if k < len(_POW10):
            if e10 >= 0:
                f *= _POW10[k]
            else:
                f /= _POW10[k]
            break
        if f == 0.0:
            break
        if e10 >= 0:
            return x  # serde would report an overflow; keep the file's value
        f /= 1e308
        e10 += 308
    return -f if neg else f


def serde_f64_min(xs: Collection[float]) -> float:
    """``min(map(serde_f64, xs))`` without re-reading every value: serde's value is within a few
    ULP of the stored one, so only values that close to the stored minimum can become the minimum.
    ``xs`` is read twice (a list or a dict view, not an iterator)."""
    lowest = min(xs)
    bound = lowest + abs(lowest) * 2.0 ** -45
    if not math.isfinite(bound):  # inf/nan in the table: compare everything
        return min(map(serde_f64, xs))
    return min(map(serde_f64, filter(bound.__ge__, xs)))


class Unigram(ByteKeyedVocab):
    __slots__ = ("_rows", "unk_id", "byte_fallback", "serde_scores", "_ids_scores", "_stored",
                 "_pref", "_sorted", "_unk_score", "_cache")

    # built on first use: str -> [id, score or None until read], None (a prefix only) or _Unloaded
    _pref: dict[str, Any] | None

    def __init__(self, rows, unk_id: int, byte_fallback: bool = False, serde_scores: bool = True):
        self._rows = rows  # (token bytes, id, score)
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        self.serde_scores = serde_scores
        self._pref = None
        self._cache: dict[str, tuple[int, ...]] = {}
        # like BPE and WordPiece, the vocabulary is kept by token bytes at load (models/_vocab.py)
        tokens, ids, scores = columns(rows, 3)
        self._ids_scores = (ids, scores)  # for the lattice tables (_build): decoded once
        bvocab = dict(zip(tokens, ids))
        if len(bvocab) < len(rows):  # duplicated pieces: HF keeps the later id
            bvocab = {}
            for t, i, _s in rows:
                j = bvocab.get(t)
                if j is None or i > j:
                    bvocab[t] = i
        self._init_vocab(bvocab)

    @classmethod
    def from_tree(cls, node: tree.UnigramModel, serde_scores: bool = True) -> "Unigram":
        return cls(node.vocab, node.unk_id, node.byte_fallback, serde_scores)

    def _build(self):
        ids, raw = self._ids_scores
        stored: dict[int, float] = dict(zip(ids, raw))  # id -> score as the file stores it
        self._stored = stored
        if not stored:
            lowest = 0.0
        elif self.serde_scores:
            lowest = serde_f64_min(stored.values())
        else:
            lowest = min(stored.values())
        self._unk_score = lowest - UNK_PENALTY
        # the lattice's table: every prefix of every piece -> None (a prefix only) or, for a piece,
        # [id, score] (the score None until the lattice first reads it: _score).
        # Keys of 1-2 characters are there from the start; longer ones are added one character
        # deeper when the lattice first meets their prefix (_load_start): the whole table is 57k
        # strings for t5, 25 ms, and a line of text needs a few hundred of them.  Until then the
        # prefix maps to an _Unloaded holding its own entry, so the lattice pays nothing until then.
        tok2id = self.vocab
        self._sorted = ordered = sorted(tok2id)  # the pieces with one prefix are a run of this list
        starts = dict.fromkeys(map(_FIRST_TWO, ordered))  # of every piece: its first 1-2 characters
        pref: dict[str, Any] = dict.fromkeys(map(_FIRST, starts))
        for c in pref:
            pref[c] = _piece(tok2id.get(c))
        # each 2-character start is unloaded: its longer keys come when the lattice meets it
        for g in starts:
            if len(g) == 2:
                pref[g] = _Unloaded(_piece(tok2id.get(g)))
        pref.pop("", None)
        self._pref = pref

    def _load_start(self, pref: dict[str, Any], g: str, own: list | None) -> None:
        """Add the keys one character longer than ``g`` (an unloaded prefix whose own entry is
        ``own``) to the lattice's table ``pref``; all longer keys too when few pieces start with
        ``g``, else each new key that more pieces start with is unloaded in turn.  ``g``'s own entry
        goes in last, so a reader that sees it sees the rest; loading twice writes the same.  The
        caller passes the table it reads: two threads building at once each read their own."""
        ordered = self._sorted
        lo = bisect_left(ordered, g)
        if lo < len(ordered) and ordered[lo] == g:
            lo += 1
        hi = _prefix_end(ordered, g, lo)
        tok2id = self.vocab
        if hi - lo <= _SMALL_START:
            members = ordered[lo:hi]
            for t in members:
                for k in range(len(g) + 1, len(t)):
                    p = t[:k]
                    if p not in pref:
                        pref[p] = None
            pref.update(zip(members, map(list, zip(map(tok2id.__getitem__, members), repeat(None)))))
        else:
            n = len(g) + 1
            j = lo
            while j < hi:  # one run per key of n characters; a run starts with the key if it is a piece
                t = ordered[j]
                k = t[:n]
                end = _prefix_end(ordered, k, j + 1)
                piece = [tok2id[t], None] if len(t) == n else None
                pref[k] = piece if piece is not None and end == j + 1 else _Unloaded(piece)
                j = end
        pref[g] = own

    def _score(self, piece: list) -> float:
        """A piece's score, re-read serde-style the first time the lattice asks for it (``piece`` is
        its [id, None] entry in the table)."""
        x = self._stored[piece[0]]
        sc = piece[1] = serde_f64(x) if self.serde_scores else x
        return sc

    def tokenize(self, word: str) -> tuple[int, ...]:
        r = self._cache.get(word)
        if r is not None:
            return r
        ids = self._encode(word)
        if len(self._cache) >= CACHE_MAX:
            self._cache.clear()
        self._cache[word] = r = tuple(ids)
        return r

    def segment(self, s: str) -> list[str]:
        """The Viterbi segmentation of ``s`` as strings (unknown runs fused)."""
        if self._pref is None:
            self._build()
        n = len(s)
        if n == 0:
            return []
        pref = self._pref
        assert pref is not None  # built above
        unk_id = self.unk_id
        unk_score = self._unk_score
        bscore = [0.0] * (n + 1)
        bstart = [-1] * (n + 1)
        bid = [0] * (n + 1)
        get = pref.get
        missing: Any = _MISSING
        for i in range(n):
            base = bscore[i]
            v = get(s[i], missing)
            if v is missing or v is None:  # no single-character piece: an unknown node
                sc = unk_score + base
                j = i + 1
                if bstart[j] < 0 or sc > bscore[j]:
                    bscore[j] = sc
                    bstart[j] = i
                    bid[j] = unk_id
                if v is missing:  # not even a prefix: no longer piece starts here
                    continue
            else:
                try:
                    sc = v[1] + base
                except TypeError:  # not read yet
                    sc = self._score(v) + base
                j = i + 1
                if bstart[j] < 0 or sc > bscore[j]:
                    bscore[j] = sc
                    bstart[j] = i
                    bid[j] = v[0]
            j = i + 2
            while j <= n:
                v = get(s[i:j], missing)
                if v is missing:
                    break
                if v is not None:
                    try:
                        sc = v[1] + base
                    except TypeError:
                        if v.__class__ is _Unloaded:  # a prefix met for the first time
                            self._load_start(pref, s[i:j], v.value)
                            continue  # the same j again
                        sc = self._score(v) + base  # a score not read yet
                    if bstart[j] < 0 or sc > bscore[j]:
                        bscore[j] = sc
                        bstart[j] = i
                        bid[j] = v[0]
                j += 1
        out: list[str] = []
        fused: list[str] = []
        e = n
        while e > 0:
            st = bstart[e]
            if bid[e] == unk_id:
                fused.append(s[st:e])
            else:
                if fused:
                    fused.reverse()
                    out.append("".join(fused))
                    fused = []
                out.append(s[st:e])
            e = st
        if fused:
            fused.reverse()
            out.append("".join(fused))
        out.reverse()
        return out

    def _encode(self, s: str) -> list[int]:
        ids: list[int] = []
        pieces = self.segment(s)  # builds the tables on first use
        tok2id = self.vocab
        for piece in pieces:
            i = tok2id.get(piece)
            if i is None:
                if self.byte_fallback:
                    bts: list = [tok2id.get("<0x%02X>" % b) for b in piece.encode("utf-8", "surrogatepass")]
                    if None not in bts:
                        ids.extend(bts)
                        continue
                i = self.unk_id
            ids.append(i)
        return ids

    def id_to_token_table(self) -> dict[int, str]:
        # from the rows, not the vocabulary: a repeated piece keeps each of its ids
        t = self._tokens
        if t is None:
            t = self._tokens = {int(i): decode_token(tok) for tok, i, _s in self._rows}
        return t
