"""Unigram language model: HF ``tokenizers/src/models/unigram/model.rs`` ``encode_optimized``.

Design record: ``docs/design/runtime-hf.md``.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Collection
from itertools import repeat
from typing import Any

from mtokspec.format import tree as t
from mtokspec.runtime.hf.models._compiled import CompiledCore
from mtokspec.runtime.hf.models._vocab import ByteKeyedVocab, columns, decode_token, text_key, zip_dict
from mtokspec.runtime.hf.models.bpe import CACHE_MAX

__all__ = ["Unigram", "serde_f64", "serde_f64_min", "UNK_PENALTY"]

UNK_PENALTY = 10.0
_MISSING = object()
_SMALL_START = 64  # a start with at most this many longer pieces is loaded whole (_load_start)
LONG_PIECE = 256  # bytes: a longer piece is found in the text, not through the prefix table
_POW10 = [float(f"1e{k}") for k in range(309)]
_BYTE = [bytes((b,)) for b in range(256)]
# the length of a UTF-8 character from its first byte
_CHAR_LEN = bytes(1 if b < 0xC0 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4 for b in range(256))


class _Unloaded:
    """The table's entry for a key whose longer keys are not in the table yet: it holds the key's
    own entry (a piece or None), which replaces it once they are (``Unigram._load_start``).  Not
    subscriptable, so the lattice's ``v[1]`` fails on it as on an unread score."""

    __slots__ = ("value",)

    def __init__(self, value: list | None):
        self.value = value


def _prefix_end(ordered: list[bytes], g: bytes, lo: int) -> int:
    """The end of the run of ``ordered`` (sorted, from ``lo`` on) that starts with ``g``."""
    while g:
        c = g[-1]
        if c < 0xFF:
            return bisect_left(ordered, g[:-1] + _BYTE[c + 1], lo)
        g = g[:-1]  # nothing sorts between "...\xff" runs and the next shorter prefix
    return len(ordered)


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode()
    except UnicodeDecodeError:
        return False
    return True


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


class Unigram(CompiledCore, ByteKeyedVocab):
    __slots__ = ("_rows", "unk_id", "byte_fallback", "serde_scores", "_brow", "_ids", "_scores", "_bvocab",
                 "_pref", "_sorted", "_long", "_unk_score", "_cache", "_core", "_core_long")

    # built on first use: str -> [id, score or None until read, row], None (a prefix only) or _Unloaded
    _pref: dict[str, Any] | None

    def __init__(self, rows, unk_id: int, byte_fallback: bool = False, serde_scores: bool = True):
        self._rows = rows  # (token bytes, id, score)
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        self.serde_scores = serde_scores
        self._pref = None
        self._core: Any = None  # None until the first encode, then the compiled core or False
        self._cache: dict[str, tuple[int, ...]] = {}
        # Like BPE and WordPiece, the vocabulary is kept by token bytes at load (models/_vocab.py),
        # here mapped to the row, which gives both the id and the score the lattice needs.
        tokens, ids, scores = columns(rows, 3)
        self._ids, self._scores = ids, scores
        brow = zip_dict(tokens, range(len(tokens)))
        if len(brow) < len(tokens):  # duplicated pieces: HF keeps the later id
            brow = {}
            for r, (t, i) in enumerate(zip(tokens, ids)):
                j = brow.get(t)
                if j is None or i > ids[j]:
                    brow[t] = r
        self._brow = brow
        self._bvocab: dict[bytes, int] | None = None
        self._vocab = None
        self._tokens = None

    @property
    def bvocab(self) -> dict[bytes, int]:  # type: ignore[override]  # read-only here: built from the rows
        """``{token bytes: id}`` (built on first use: the lattice and ``encode`` use the rows)."""
        v = self._bvocab
        if v is None:
            brow = self._brow
            v = self._bvocab = dict(zip(brow, map(self._ids.__getitem__, brow.values())))
        return v

    def token_to_id(self, token: str) -> int | None:
        k = text_key(token)
        r = None if k is None else self._brow.get(k)
        return None if r is None else self._ids[r]

    @classmethod
    def from_tree(cls, node: t.UnigramModel, serde_scores: bool = True) -> "Unigram":
        return cls(node.vocab, node.unk_id, node.byte_fallback, serde_scores)

    def _build(self):
        self._unk_score = None  # read when the lattice first needs it (_lowest)
        # The lattice's table: every prefix of every piece -> None (a prefix only) or, for a piece,
        # [id, score, row] (the score None until the lattice first reads it: _score).  It starts
        # with the keys of one character; a key with longer keys under it is an _Unloaded holding
        # its own entry until the lattice meets it (_load_start): the whole table is 57k strings
        # for t5, 25 ms, and a line of text needs a few hundred of them.
        # pieces longer than LONG_PIECE bytes stay out of the table (all their prefixes would be keys:
        # a piece of L characters costs L^2 / 2 of them); the lattice finds them in the text instead
        self._sorted = sorted(b for b in self._brow if len(b) <= LONG_PIECE)
        brow, ids = self._brow, self._ids
        self._long = [(b.decode(), [ids[brow[b]], None, brow[b]]) for b in self._brow
                      if len(b) > LONG_PIECE and _is_utf8(b)]
        pref: dict[str, Any] = {}
        self._load_start(pref, "", None)
        self._pref = pref

    def _lowest(self) -> float:
        """The score of an unknown node: the lowest piece score (of every row, as HF) minus the
        penalty."""
        scores = self._scores
        if not scores:
            lowest = 0.0
        elif self.serde_scores:
            lowest = serde_f64_min(scores)
        else:
            lowest = min(scores)
        sc = self._unk_score = lowest - UNK_PENALTY
        return sc

    def _load_start(self, pref: dict[str, Any], g: str, own: list | None) -> None:
        """Add the keys one character longer than ``g`` (an unloaded prefix whose own entry is
        ``own``; "" for the table's first keys) to the lattice's table ``pref``; all longer keys
        too when few pieces start with ``g``, else each new key that more pieces start with is
        unloaded in turn.  ``g``'s own entry goes in last, so a reader that sees it sees the rest;
        loading twice writes the same.  The caller passes the table it reads: two threads building
        at once each read their own."""
        ordered = self._sorted
        key = g.encode()  # a key of the table: decoded from UTF-8, so it encodes back
        lo = bisect_left(ordered, key)
        if lo < len(ordered) and ordered[lo] == key:
            lo += 1
        hi = _prefix_end(ordered, key, lo)
        brow, ids = self._brow, self._ids
        if g and hi - lo <= _SMALL_START:
            members = ordered[lo:hi]
            try:
                texts = list(map(bytes.decode, members))
            except UnicodeDecodeError:  # pieces that are not UTF-8 stay out
                members = [m for m in members if _is_utf8(m)]
                texts = list(map(bytes.decode, members))
            for t in texts:
                for k in range(len(g) + 1, len(t)):
                    p = t[:k]
                    if p not in pref:
                        pref[p] = None
            rows = list(map(brow.__getitem__, members))
            pref.update(zip(texts, map(list, zip(map(ids.__getitem__, rows), repeat(None), rows))))
        else:
            n = len(key)
            j = lo
            while j < hi:  # one run per key one character longer; it starts with the key if that is a piece
                t = ordered[j]
                m = n + _CHAR_LEN[t[n]]
                if len(t) < m:  # ends inside its last character: not UTF-8 (alone: longer pieces may be)
                    j += 1
                    continue
                k = t[:m]
                end = _prefix_end(ordered, k, j + 1)
                piece = [ids[brow[t]], None, brow[t]] if len(t) == m else None
                try:
                    pref[k.decode()] = piece if piece is not None and end == j + 1 else _Unloaded(piece)
                except UnicodeDecodeError:
                    pass  # k is not UTF-8, nor is any piece it starts
                j = end
        if g:
            pref[g] = own

    def _score(self, piece: list) -> float:
        """A piece's score, re-read serde-style the first time the lattice asks for it (``piece`` is
        its [id, None, row] entry in the table)."""
        x = self._scores[piece[2]]
        sc = piece[1] = serde_f64(x) if self.serde_scores else x
        return sc

    def _row_score(self, row: int) -> float:
        """The score the lattice uses for the piece of ``row`` (the compiled core asks once per row)."""
        x = self._scores[row]
        return serde_f64(x) if self.serde_scores else x

    def _make_core(self, sp) -> Any:
        brow = self._brow
        keys = sorted(brow)  # the core's trie is runs of this list
        self._core_long = max(map(len, keys), default=0) > LONG_PIECE
        return sp.UnigramCore(keys, list(map(brow.__getitem__, keys)), list(self._ids), self.unk_id,
                              self._row_score, self._lowest, self._piece_ids)

    def tokenize(self, word: str) -> tuple[int, ...]:
        r = self._cache.get(word)
        if r is not None:
            return r
        core = self._core
        if core is None:
            core = self._accel()
        # the core walks its trie as far as the text follows a piece from each start: with pieces
        # longer than LONG_PIECE that is quadratic in a long word, which the pure lattice is not
        if core and not (self._core_long and len(word) > LONG_PIECE):
            r = core.word(word)  # None: not UTF-8 (lone surrogates), left to the pure path
        if r is None:
            r = tuple(self._encode(word))
        if len(self._cache) >= CACHE_MAX:
            self._cache.clear()
        self._cache[word] = r
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
        unk_score = self._unk_score  # None until the first unknown node
        bscore = [0.0] * (n + 1)
        bstart = [-1] * (n + 1)
        bid = [0] * (n + 1)
        get = pref.get
        missing: Any = _MISSING
        long_at = self._long_pieces(s) if self._long else {}
        for i in range(n):
            base = bscore[i]
            if i in long_at:
                self._relax_long(long_at[i], i, base, bscore, bstart, bid)
            v = get(s[i], missing)
            if v.__class__ is _Unloaded:  # a first character met for the first time
                self._load_start(pref, s[i], v.value)
                v = v.value
            if v is missing or v is None:  # no single-character piece: an unknown node
                if unk_score is None:
                    unk_score = self._lowest()
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

    def _long_pieces(self, s: str) -> dict[int, list]:
        """Where the long pieces occur in ``s``: ``{start: [(length, entry), ...]}``."""
        at: dict[int, list] = {}
        for text, entry in self._long:
            pos = s.find(text)
            while pos != -1:
                at.setdefault(pos, []).append((len(text), entry))
                pos = s.find(text, pos + 1)
        return at

    def _relax_long(self, found: list, i: int, base: float, bscore: list, bstart: list, bid: list) -> None:
        """The lattice's edges from ``i`` along long pieces (each to its own end: their order among
        the other candidates from ``i`` does not matter)."""
        for length, v in found:
            sc = (v[1] if v[1] is not None else self._score(v)) + base
            j = i + length
            if bstart[j] < 0 or sc > bscore[j]:
                bscore[j] = sc
                bstart[j] = i
                bid[j] = v[0]

    def _encode(self, s: str) -> list[int]:
        ids: list[int] = []
        for piece in self.segment(s):  # builds the tables on first use
            self._piece_ids(piece, ids)
        return ids

    def _piece_ids(self, piece: str, ids: list[int] | None = None) -> Any:
        """The ids of one piece of the segmentation (a fused unknown run: its own piece, else byte
        tokens under ``byte_fallback``, else ``unk_id``), appended to ``ids``; without ``ids``, a tuple."""
        out: list[int] = [] if ids is None else ids
        get = self._brow.get
        try:
            r = get(piece.encode())
        except UnicodeEncodeError:  # lone surrogates: a key only if a token's bytes decode to them
            k = text_key(piece)
            r = None if k is None else get(k)
        if r is not None:
            out.append(self._ids[r])
        elif self.byte_fallback and None not in (rows := [get(b"<0x%02X>" % b)
                                                          for b in piece.encode("utf-8", "surrogatepass")]):
            out.extend(map(self._ids.__getitem__, rows))
        else:
            out.append(self.unk_id)
        return tuple(out) if ids is None else None

    def id_to_token_table(self) -> dict[int, str]:
        # from the rows, not the vocabulary: a repeated piece keeps each of its ids
        t = self._tokens
        if t is None:
            t = self._tokens = {int(i): decode_token(tok) for tok, i, _s in self._rows}
        return t
