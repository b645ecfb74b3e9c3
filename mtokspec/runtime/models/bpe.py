"""Byte-pair encoding, with the merge order of HF ``tokenizers/src/models/bpe/word.rs``.

HF merges, at every step, the adjacent pair with the lowest rank, the leftmost one among equal
ranks.  Here a word is a list of symbol ids with a parallel list of pair keys ``rank << 32 | merged
id`` (looked up by the pair ``left id | right id << 32``: an int, no tuple per lookup); a step takes
``min`` of the key list (leftmost minimum via ``list.index``) and updates the two neighbouring
keys.  At load only ``{pair: rank}`` is built, at C speed from the merge rows (read with the pair
packed, ``Table.columns(pack=True)``); the merged ids are resolved in one pass on first use (a merge
whose output is missing fails when it is applied).  The vocabulary is keyed by token bytes
(``models/_vocab.py``); characters are looked up once and cached.  Merge tables with repeated ranks (not in real
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
from operator import and_, rshift
from typing import Any

import regex

from mtokspec import tree
from mtokspec.runtime.models._vocab import bytes_vocab, columns, decode_token, id_texts, text_key, text_vocab, vocab_dict
from mtokspec.runtime.pre_tokenizers import byte_level_map

__all__ = ["BPE", "CACHE_MAX", "columns", "decode_token", "vocab_dict"]

CACHE_MAX = 200_000
_INF = 1 << 62
_BAD = 0xFFFFFFFF  # merged id of a merge whose output is missing from the vocab
_LOW = 0xFFFFFFFF  # a pair key's left id: key & _LOW; its right id: key >> 32
_SP = "\u2581"


def _rank(v: tuple) -> int:
    return v[0]


def _err(msg: str):
    from mtokspec.runtime import TokenizerError
    return TokenizerError(msg)


def pair_ranks(rows) -> dict[int, int]:
    """``{left id | right id << 32: rank}`` of ``(left, right, rank)`` merge rows; HF keeps the
    later (higher rank) entry of a repeated pair."""
    if hasattr(rows, "columns"):
        keys, ranks = rows.columns(pack=True)
    else:
        keys = [a | b << 32 for a, b, _ in rows]
        ranks = [k for _, _, k in rows]
    d = dict(zip(keys, ranks))
    if len(d) < len(keys):
        d = {}
        for key, k in zip(keys, ranks):
            if d.get(key, -1) < k:
                d[key] = k
    return d


def _lefts(keys):
    return map(and_, keys, repeat(_LOW))


def _rights(keys):
    return map(rshift, keys, repeat(32))


class BPE:
    __slots__ = ("bvocab", "_vocab", "_chars", "_byte_ids", "_tokens", "_btokens", "_ranks", "_merged", "_tied", "byte_fallback", "byte_level", "_cache",
                 "_parts", "_sp_chunk", "_bigrams", "_solo", "_chunk_re", "map_bytes")

    _vocab: dict[str, int] | None
    _tokens: dict[int, str] | None
    _btokens: dict[int, bytes] | None
    _byte_ids: list[int | None] | None
    _ranks: dict[int, int]  # left id | right id << 32 -> rank
    # values are ``rank << 32 | merged id``, or ``(rank, merged id)`` when ``_tied``
    _merged: dict[int, Any] | None
    _sp_chunk: bool | None
    _bigrams: frozenset[str] | None
    _solo: dict[str, bool] | None
    _chunk_re: regex.Pattern[str] | None

    def __init__(self, bvocab: dict[bytes, int], merges_rows, byte_fallback: bool = False,
                 byte_level: bool = False):
        self.bvocab = bvocab  # token bytes -> id
        self._vocab = None  # token text -> id, built when asked for
        self._chars: dict[str, int] = {}  # character -> id of the one-character tokens seen so far
        self._byte_ids = None  # byte value -> id of its byte-fallback token <0xNN>
        self._tokens = None  # id -> token text, built lazily
        self._btokens = None  # id -> token bytes, built with the merge table
        self._ranks = pair_ranks(merges_rows)
        self._merged = None  # pair -> rank << 32 | merged id, built on first use
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
        return cls(bytes_vocab(node.vocab), node.merges, node.byte_fallback, node.byte_level)

    # --- tables ---------------------------------------------------------------------------------
    @property
    def vocab(self) -> dict[str, int]:
        """``{token text: id}`` (built on first use; encoding works on :attr:`bvocab`)."""
        v = self._vocab
        if v is None:
            v = self._vocab = text_vocab(self.bvocab)
        return v

    def id_to_token_table(self) -> dict[int, str]:
        t = self._tokens
        if t is None:
            t = self._tokens = id_texts(self.bvocab)
        return t

    def _char_id(self, c: str) -> int | None:
        """The id of the token spelled by the text ``c`` (cached when found)."""
        i = self._chars.get(c)
        if i is None:
            k = text_key(c)
            i = None if k is None else self.bvocab.get(k)
            if i is not None:
                chars = self._chars
                if len(chars) >= CACHE_MAX:
                    chars.clear()
                chars[c] = i
        return i

    def _byte_token_ids(self) -> list[int | None]:
        b = self._byte_ids
        if b is None:
            get = self.bvocab.get
            b = self._byte_ids = [get(b"<0x%02X>" % x) for x in range(256)]
        return b

    def ranks(self) -> dict[tuple[str, str], int]:
        """The merges as ``{(left token, right token): rank}``."""
        toks = self.id_to_token_table()
        try:
            return {(toks[key & _LOW], toks[key >> 32]): k for key, k in self._ranks.items()}
        except KeyError as e:
            raise _err(f"BPE merge names id {e.args[0]} which is not in the vocabulary") from None

    def _merge_outputs(self) -> str:
        """Every merge output, joined by newlines (C-level maps; kept until both checks ran)."""
        toks = self.id_to_token_table()
        pairs = self._ranks.keys()
        try:
            outs = map(str.__add__, map(toks.__getitem__, _lefts(pairs)), map(toks.__getitem__, _rights(pairs)))
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
                bts = set(self._byte_token_ids()) - {None}
                r = self._ranks
                self._solo = {} if bts.isdisjoint(_lefts(r)) and bts.isdisjoint(_rights(r)) else None
        return bg

    def _spelled_by_bytes(self, c: str) -> bool:
        """Whether ``c`` (not in the vocab) becomes byte tokens under byte fallback, all present."""
        # not None: callers check it (no narrowing here, it runs per character)
        solo: dict[str, bool] = self._solo  # type: ignore[assignment]
        ok = solo.get(c)
        if ok is None:
            bids = self._byte_token_ids()
            ok = solo[c] = all(bids[b] is not None for b in c.encode("utf-8", "surrogatepass"))
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
        chars = self._chars
        char_id = self._char_id
        solo = self._solo
        parts = []
        start = 0
        prev = word[0]
        prev_known = prev in chars or char_id(prev) is not None
        prev_solo = solo is not None and not prev_known and self._spelled_by_bytes(prev)
        for i in range(1, len(word)):
            c = word[i]
            known = c in chars or char_id(c) is not None
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
        try:
            return list(map(self._chars.__getitem__, word))
        except KeyError:
            pass
        char_id = self._char_id
        out: list[int] = []
        for c in word:
            i = char_id(c)
            if i is not None:
                out.append(i)
            elif self.byte_fallback:
                bids = self._byte_token_ids()
                bts: list = [bids[b] for b in c.encode("utf-8", "surrogatepass")]
                if None not in bts:  # all ints (no cast: this runs per character)
                    out.extend(bts)
                # else: unknown and no unk token stored: dropped
        return out

    def _merge_table(self) -> dict:
        """``{left id | right id << 32: rank << 32 | merged id}`` (C-level maps over the merges)."""
        bv = self.bvocab
        toks = self._btokens = dict(zip(bv.values(), bv))
        ranks = self._ranks
        pairs = list(ranks)
        try:
            # bytes concatenate like the texts they spell (both are UTF-8 or neither merges in HF)
            outs = list(map(bytes.__add__, map(toks.__getitem__, _lefts(pairs)), map(toks.__getitem__, _rights(pairs))))
        except KeyError as e:
            raise _err(f"BPE merge names id {e.args[0]} which is not in the vocabulary") from None
        # a merge whose output is not in the vocab (HF refuses such files) fails when applied
        mids = list(map(bv.get, outs, repeat(_BAD)))
        m: dict[int, Any]
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
        toks = self._btokens
        assert toks is not None  # built with the merge table
        i = self.bvocab.get(toks[a] + toks[b])
        if i is None:
            raise _err(f"BPE merge output {decode_token(toks[a] + toks[b])!r} is not in the vocabulary")
        return i  # the id really is _BAD

    def _bpe_tied(self, syms: list[int]) -> tuple:
        """The merge loop for merge tables with repeated ranks (ties go to the leftmost pair)."""
        merged = self._merged
        assert merged is not None  # built by _bpe() before it calls this
        get = merged.get
        inf = (_INF, 0)
        rk = [get(a | b << 32, inf) for a, b in zip(syms, syms[1:])]
        best = min(rk)
        while best[0] != _INF:
            i = rk.index(min(rk, key=_rank))
            m = rk[i][1]
            if m == _BAD:
                m = self._bad_merge(syms[i], syms[i + 1])
            if i:
                rk[i - 1] = get(syms[i - 1] | m << 32, inf)
            if i + 2 < len(syms):
                rk[i:i + 2] = (get(m | syms[i + 2] << 32, inf),)
            else:
                del rk[i]
            syms[i:i + 2] = (m,)
            if not rk:
                break
            best = min(rk, key=_rank)
        return tuple(syms)

    def _bpe(self, word: str) -> tuple:
        if len(word) == 1:
            i = self._char_id(word)
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
            rk = [get(a | b << 32, inf) for a, b in zip(syms, syms[1:])]
            best = min(rk)
            while best != inf:
                i = rk.index(best)
                m = best & 0xFFFFFFFF
                if m == _BAD:
                    m = self._bad_merge(syms[i], syms[i + 1])
                if i:
                    rk[i - 1] = get(syms[i - 1] | m << 32, inf)
                if i + 2 < len(syms):
                    rk[i:i + 2] = (get(m | syms[i + 2] << 32, inf),)
                else:
                    del rk[i]
                syms[i:i + 2] = (m,)
                if not rk:
                    break
                best = min(rk)
        return tuple(syms)

    # --- vocabulary -----------------------------------------------------------------------------
    def token_to_id(self, token: str) -> int | None:
        k = text_key(token)
        return None if k is None else self.bvocab.get(k)

    def id_to_token(self, i: int) -> str | None:
        return self.id_to_token_table().get(i)
