"""Byte-pair encoding, with the merge order of HF ``tokenizers/src/models/bpe/word.rs``.

Design record: ``docs/design/runtime-hf.md``.
"""

from __future__ import annotations

import sys
from itertools import chain, compress, repeat
from operator import and_, contains, itemgetter, lshift, not_, or_, rshift
from typing import Any

import regex

from mtokspec.format import tree as t
from mtokspec.runtime.hf.models._vocab import ByteKeyedVocab, bytes_vocab, decode_token, text_key
from mtokspec.runtime.shared.vocab_rows import texts_by_id, unknown_rows_id
from mtokspec import speedups
from mtokspec.runtime.hf.models._compiled import CompiledCore, extend_pieces
from mtokspec.runtime.hf.pre_tokenizers import BYTES_TO_UNICODE, byte_level_map
from mtokspec.runtime.shared.merge import merge_lowest_pairs
from mtokspec.runtime.shared.text import METASPACE

__all__ = ["BPE", "CACHE_MAX", "pair_ranks"]

CACHE_MAX = 200_000
_INF = 1 << 62
_LOW = 0xFFFFFFFF  # a pair key's left id: key & _LOW; its right id: key >> 32
_SP = METASPACE
_SP_UTF8 = _SP.encode()
_LAST = itemgetter(-1)
_LONG_WORD = 256  # symbols: from here the pure merge loop is the heap's (list scans are O(n^2))


def _err(msg: str):
    from mtokspec.errors import TokenizerError
    return TokenizerError(msg)


def _pair_columns(rows) -> tuple:
    """``(keys, ranks)`` of ``(left, right, rank)`` merge rows, a key being ``left | right << 32``."""
    if hasattr(rows, "columns"):
        return rows.columns(pack=True)
    return [a | b << 32 for a, b, _ in rows], [k for _, _, k in rows]


def pair_ranks(rows) -> dict[int, int]:
    """``{left id | right id << 32: rank}`` of ``(left, right, rank)`` merge rows; HF keeps the
    later (higher rank) entry of a repeated pair."""
    keys, ranks = _pair_columns(rows)
    d = dict(zip(keys, ranks))
    if len(d) < len(keys):
        d = {}
        for key, k in zip(keys, ranks):
            if d.get(key, -1) < k:
                d[key] = k
    return d


def _bigram_keys(s: str) -> frozenset[int]:
    """``{ord(x) | ord(y) << 32}`` for every two adjacent characters of ``s``: the UTF-32 code units
    read as u64 at both alignments (C speed; a set of 2-character strings costs several times more)."""
    if sys.byteorder != "little":
        o = list(map(ord, s))
        return frozenset(map(int.__or__, o, map(int.__lshift__, o[1:], repeat(32))))
    # surrogatepass: a token that is not UTF-8 is held as lone surrogates (decode_token)
    u = s.encode("utf-32-le", "surrogatepass")
    mv = memoryview(u)
    keys = set(mv[:len(u) // 8 * 8].cast("Q"))
    keys.update(mv[4:4 + (len(u) - 4) // 8 * 8].cast("Q"))
    return frozenset(keys)


def _lefts(keys):
    return map(and_, keys, repeat(_LOW))


def _rights(keys):
    return map(rshift, keys, repeat(32))


class BPE(CompiledCore, ByteKeyedVocab):
    __slots__ = ("_chars", "_spell", "_byte_ids", "_btokens", "_btokens_full", "_merge_rows", "_ranks_d", "_mids",
                 "byte_fallback", "byte_level", "map_bytes", "_cache", "_parts", "_units", "_cross", "_unit_gain",
                 "_sp_chunk", "_bigrams", "_solo", "_chunk_re", "_core", "unk_id")

    _btokens: dict[int, bytes]
    _btokens_full: bool
    _byte_ids: list[int | None] | None
    _ranks_d: dict[int, int] | None  # left id | right id << 32 -> rank (built on first use: _ranks)
    _mids: dict[int, int]  # pair -> the id it merges into, for the merges applied so far
    _sp_chunk: bool | None
    _bigrams: frozenset[int] | None
    _solo: dict[str, bool] | None
    _chunk_re: regex.Pattern[str] | None
    _core: Any  # None until the first encode, then the compiled core or False (pure path)

    def __init__(self, bvocab: dict[bytes, int], merges_rows, byte_fallback: bool = False,
                 byte_level: bool = False, unk_id: int | None = None):
        self._init_vocab(bvocab)
        self.unk_id = unk_id  # a character no token covers: this id (HF's unk_token without fuse_unk), else dropped
        self._chars: dict[str, int] = {}  # character -> id of the one-character tokens seen so far
        self._spell: dict[str, tuple[int, ...]] = {}  # character -> its symbols (byte fallback, or none)
        self._byte_ids = None  # byte value -> id of its byte-fallback token <0xNN>
        # id -> token bytes of the ids met so far (characters, byte tokens, merge outputs): every
        # symbol a merge names is one of them; the whole table only if one is missing
        self._btokens = {}
        self._btokens_full = False
        # The pure path's {pair: rank} is built when first needed; the compiled core reads the merge
        # rows' columns instead (the dict costs as much as the rest of a load)
        self._merge_rows = merges_rows
        self._ranks_d = None
        self._mids = {}
        self.byte_fallback = byte_fallback
        self.byte_level = byte_level
        self.map_bytes = byte_level  # the tokenizer turns this off when a ByteLevel pre-tokenizer maps
        self._cache: dict[str, tuple] = {}
        self._parts: dict[str, tuple] = {}  # results of the pieces of cut words
        self._units: dict[str, tuple] = {}  # character -> its merge trace (see _unit)
        self._cross: dict[str, int] = {}  # two characters -> lowest rank a merge across them can have
        # [multi-byte characters seen, symbols their own merges saved]: whether _bpe_units pays
        self._unit_gain = [0, 0]
        self._sp_chunk = None
        self._bigrams = None
        self._solo = None  # {} once the solo rule (byte tokens in no merge) is known safe, else None
        self._chunk_re = None
        self._core = None

    @classmethod
    def from_tree(cls, node: t.BPEModel) -> "BPE":
        bvocab = bytes_vocab(node.vocab)
        bpe = cls(bvocab, node.merges, node.byte_fallback, node.byte_level,
                  unknown_rows_id(node.vocab, node.byte_fallback))
        if len(bvocab) != len(node.vocab) or len(set(bvocab.values())) != len(bvocab):
            # an id of several rows: its text (what a merge joins) is its last row, not the one a
            # look-up found (MNN's loader keeps the last)
            bpe._btokens = texts_by_id(node.vocab)
            bpe._btokens_full = True
        return bpe

    # --- tables ---------------------------------------------------------------------------------
    @property
    def _ranks(self) -> dict[int, int]:
        r = self._ranks_d
        if r is None:
            r = self._ranks_d = pair_ranks(self._merge_rows)
        return r

    def _char_id(self, c: str) -> int | None:
        """The id of the token spelled by the text ``c`` (cached when found)."""
        i = self._chars.get(c)
        if i is None:
            k = text_key(c)
            i = None if k is None else self.bvocab.get(k)
            if i is not None:
                # never cleared (callers read it right after filling it); bounded anyway: the
                # strings HF splits into characters are single code points
                self._chars[c] = i
                if not self._btokens_full:
                    self._btokens[i] = k  # type: ignore[assignment]  # found, so not None
        return i

    def _spelling(self, c: str) -> tuple[int, ...]:
        """The symbols of ``c``: its token, else its byte-fallback tokens (all must exist), else
        the unknown id the rows carry (:func:`~mtokspec.runtime.shared.vocab_rows.unknown_rows_id`),
        else none (dropped)."""
        i = self._char_id(c)
        if i is not None:
            return (i,)
        if self.byte_fallback:
            bids = self._byte_token_ids()
            bts = [bids[b] for b in c.encode("utf-8", "surrogatepass")]
            if None not in bts:
                return tuple(bts)  # type: ignore[arg-type]  # no None left
        return () if self.unk_id is None else (self.unk_id,)

    def _spell_all(self, word: str) -> dict[str, tuple[int, ...]]:
        """The spelling table, with every character of ``word`` in it.  Never cleared (callers
        index it right after, from any thread); one entry per code point at most."""
        spell = self._spell
        for c in set(word).difference(spell):
            spell[c] = self._spelling(c)
        return spell

    def _byte_token_ids(self) -> list[int | None]:
        b = self._byte_ids
        if b is None:
            get = self.bvocab.get
            b = [get(b"<0x%02X>" % x) for x in range(256)]
            if not self._btokens_full:
                self._btokens.update((i, b"<0x%02X>" % x) for x, i in enumerate(b) if i is not None)
            self._byte_ids = b
        return b

    def ranks(self) -> dict[tuple[str, str], int]:
        """The merges as ``{(left token, right token): rank}``."""
        toks = self.id_to_token_table()
        try:
            return {(toks[key & _LOW], toks[key >> 32]): k for key, k in self._ranks.items()}
        except KeyError as e:
            raise _err(f"BPE merge names id {e.args[0]} which is not in the vocabulary") from None

    def _vocab_text(self) -> str:
        """Every token's text, joined by newlines (one join, one decode).  The two cut rules below
        ask it instead of the merge outputs: an output is a token (HF refuses files where one is
        not; here such a merge fails when applied), so what no token contains no output does."""
        bv = self.bvocab
        try:
            return b"\n".join(bv).decode("utf-8")
        except UnicodeDecodeError:
            return "\n".join(map(decode_token, bv))

    def sp_chunking(self) -> bool:
        """Whether cutting before each ``▁`` that follows a non-``▁`` is safe (checked once): ``▁``
        is a token (else it can vanish from the symbols, an unknown character without an unknown
        token, and the characters around it merge) and no token holds it after another character."""
        ok = self._sp_chunk
        if ok is None:
            sp = speedups.module()
            ok = _SP_UTF8 in self.bvocab and not (sp.sp_crossing(self.bvocab) if sp is not None
                                                  else self._sp_crossing())
            # the pattern first: another thread that sees the answer uses it
            self._chunk_re = regex.compile(f"{_SP}*[^{_SP}]+|{_SP}+")
            self._sp_chunk = ok
        return ok

    def _sp_crossing(self) -> bool:
        """Whether some token has a ``▁`` right after another character (then a merge could cross
        a cut before that ``▁``).  The newline that joins the tokens counts only inside a token.
        Read on the bytes (no decode): the text before each ``▁`` (UTF-8 E2 96 81) is empty after
        another ``▁``, and ends with byte 10 only after a newline."""
        joined = b"\n".join(self.bvocab)
        if not set(map(_LAST, filter(None, joined.split(_SP_UTF8)[:-1]))) <= {10}:
            return True
        if joined.count(b"\n") == len(self.bvocab) - 1:  # no token has a newline of its own
            return False
        nl = compress(self.bvocab, map(contains, self.bvocab, repeat(b"\n")))
        return any(f"\n{_SP}" in decode_token(t) for t in nl)

    def bigrams(self) -> frozenset[int]:
        """Every two adjacent characters ``x``, ``y`` inside a token (so inside any merge output),
        as ``ord(x) | ord(y) << 32`` (plus pairs with the joining newline: more, never fewer)."""
        bg = self._bigrams
        if bg is None:
            bg = self._bigrams = _bigram_keys(self._vocab_text())
            if self.byte_fallback:
                # byte tokens that take part in no merge: a character spelled with them is a part
                # of its own (nothing merges across it), which keeps the parts short and repeating
                bts = set(self._byte_token_ids()) - {None}
                r = self._ranks
                self._solo = {} if bts.isdisjoint(_lefts(r)) and bts.isdisjoint(_rights(r)) else None
        return bg

    # --- encoding -------------------------------------------------------------------------------
    def _make_core(self, sp) -> Any:
        ranks: Any = self._ranks_d
        if ranks is None:
            rows = self._merge_rows
            # the stored rows, read by the core as they are (no int per row), when the codec says
            # they are (left, right, rank) u32s; else their columns
            ranks = rows.fixed_rows() if hasattr(rows, "fixed_rows") else None
            if ranks is None or ranks[1] != "<III":
                ranks = _pair_columns(rows)
        return sp.BPECore(ranks, self._spelling, self._resolve, BYTES_TO_UNICODE)

    def tokenize(self, piece: str):
        """Ids of one pre-tokenized piece (already in the model's alphabet unless ``map_bytes``)."""
        cache = self._cache
        r = cache.get(piece)
        if r is not None:
            return r
        core = self._core
        if core is None:
            core = self._accel()
        if core:
            r = core.word(byte_level_map(piece) if self.map_bytes else piece)
        elif self.map_bytes and len(piece) <= 64 and not piece.isascii() and self._units_pay():
            r = self._bpe_units(piece)
        else:
            r = self._tokenize_pure(piece)
        if len(cache) >= CACHE_MAX:
            cache.clear()
        cache[piece] = r  # tuples of ints: the cycle collector stops tracking them
        return r

    def _tokenize_pure(self, piece: str) -> tuple:
        word = byte_level_map(piece) if self.map_bytes else piece
        # cut long words (see _cut); measured best: byte-level words from 25 symbols (3 per CJK
        # character), other words (SentencePiece chunks, code identifiers) from 11 characters
        if len(word) > (24 if self.map_bytes else 10):
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
            return tuple(out)
        return self._bpe(word)

    def tokenize_pieces(self, pieces: list[str], out: list[int]) -> None:
        """Encode pre-tokenized pieces, appending to ``out``."""
        core = self._core
        if core is None:
            core = self._accel()
        if core:
            core.words(pieces, self._cache, CACHE_MAX, out, self.map_bytes)
        else:
            extend_pieces(pieces, self._cache, self.tokenize, out)

    def tokenize_text(self, text: str, out: list[int]) -> None:
        """Encode a whole un-pre-tokenized segment (SentencePiece style), appending to ``out``: cut
        into ``▁`` chunks when that is exact (the pure path only for texts long enough to repeat
        their chunks: the chunks' cache is what pays)."""
        core = self._core
        if core is None:
            core = self._accel()
        if (core or len(text) > 24) and not self.map_bytes and self.sp_chunking():
            if core:
                core.text(text, self._cache, CACHE_MAX, out)
            else:
                chunk_re = self._chunk_re
                assert chunk_re is not None  # set by sp_chunking()
                extend_pieces(chunk_re.findall(text), self._cache, self.tokenize, out)
        else:
            out += self.tokenize(text)

    def _cut(self, word: str) -> list[str]:
        """Split a long word where no merge can cross: between two characters that are tokens and
        whose two-character string occurs in no token (bigram rule), and around a character
        spelled by byte-fallback tokens that take part in no merge (solo rule)."""
        bg = self._bigrams
        if bg is None:
            bg = self.bigrams()
        chars = self._chars
        if all(map(chars.__contains__, word)):
            # every character a known token (byte-level words always): only the bigram rule
            # applies; find the cuts with C-level maps
            o = list(map(ord, word))
            pairs = map(or_, o, map(lshift, o[1:], repeat(32)))
            cuts = list(compress(range(1, len(word)), map(not_, map(bg.__contains__, pairs))))
            if not cuts:
                return [word]
            return list(map(word.__getitem__, map(slice, [0] + cuts, cuts + [len(word)])))
        # some character is no token: it cannot take part in the bigram rule, and with the solo rule
        # (byte tokens that no merge uses) a character spelled by byte tokens is a part of its own
        spell = self._spell_all(word)
        known = list(map(chars.__contains__, word))
        o = list(map(ord, word))
        flags: Any = map(and_, map(and_, known, known[1:]),
                         map(not_, map(bg.__contains__, map(or_, o, map(lshift, o[1:], repeat(32))))))
        if self._solo is not None:
            solo_of = {c: c not in chars and len(spell[c]) > 0 for c in set(word)}
            solo = list(map(solo_of.__getitem__, word))
            flags = map(or_, map(or_, solo, solo[1:]), flags)
        cuts = list(compress(range(1, len(word)), flags))
        if not cuts:
            return [word]
        return list(map(word.__getitem__, map(slice, [0] + cuts, cuts + [len(word)])))

    def _symbols(self, word: str) -> list[int]:
        try:
            return list(map(self._chars.__getitem__, word))
        except KeyError:
            pass
        return list(chain.from_iterable(map(self._spell_all(word).__getitem__, word)))

    def _resolve(self, pair: int) -> int:
        """The id the merge ``pair`` produces (cached): its two tokens' bytes joined, looked up."""
        toks = self._btokens
        a, b = pair & _LOW, pair >> 32
        if (a not in toks or b not in toks) and not self._btokens_full:
            bv = self.bvocab
            toks = self._btokens = dict(zip(bv.values(), bv))
            self._btokens_full = True
        if a not in toks or b not in toks:
            raise _err(f"BPE merge names id {a if a not in toks else b} which is not in the vocabulary")
        out = toks[a] + toks[b]  # bytes join like the texts they spell (HF's tokens are UTF-8)
        i = self.bvocab.get(out)
        if i is None:
            raise _err(f"BPE merge output {decode_token(out)!r} is not in the vocabulary")
        if not self._btokens_full:
            toks[i] = out
        self._mids[pair] = i
        return i

    def _bpe(self, word: str) -> tuple:
        if len(word) == 1:
            i = self._char_id(word)
            if i is not None:
                return (i,)
        return tuple(self._merge(self._symbols(word)))

    def _merge(self, syms: list[int]) -> list[int]:
        """BPE over a symbol list (changed in place and returned): list scans for short words, the
        linked list and heap of :meth:`_merge_long` (the compiled core's loop) for long ones."""
        n = len(syms)
        if n > _LONG_WORD:
            syms[:] = self._merge_long(syms)
            return syms
        if n > 1:
            get = self._ranks.get
            mid = self._mids.get
            inf = _INF
            rk = [get(a | b << 32, inf) for a, b in zip(syms, syms[1:])]
            best = min(rk)
            while best != inf:
                i = rk.index(best)
                j = i + 1
                m = mid(syms[i] | syms[j] << 32)
                if m is None:
                    m = self._resolve(syms[i] | syms[j] << 32)
                n -= 1
                if i:
                    rk[i - 1] = get(syms[i - 1] | m << 32, inf)
                if j < n:
                    rk[i] = get(m | syms[i + 2] << 32, inf)
                    del rk[j]
                else:
                    del rk[i]
                syms[i] = m
                del syms[j]
                if n == 1:
                    break
                best = min(rk)
        return syms

    def _merge_long(self, syms: list[int]) -> list[int]:
        """HF ``word.rs``'s merge loop, O(n log n) (:func:`merge_lowest_pairs`)."""
        get = self._ranks.get
        mid = self._mids.get

        def join(a: int, b: int) -> int:
            m = mid(a | b << 32)
            return self._resolve(a | b << 32) if m is None else m

        return merge_lowest_pairs(syms, lambda a, b: get(a | b << 32), join)

    # --- byte-level words, one character at a time --------------------------------------------
    # A character of a byte-level word is 1-4 byte symbols, and merging a word mostly merges inside
    # characters.  Let R be the lowest rank a pair across a character boundary can have before any
    # such merge happens (from each side, every symbol that is ever last / first there while the
    # character merges on its own).  No merge across characters happens before all merges ranked
    # below R are done, so a character whose own merges all rank below R ends that phase as its
    # own result, independently of the rest.  The word then merges from those results (cached per
    # character) and the other characters' symbols: the same state that phase reaches, so the same
    # end.

    def _unit(self, c: str) -> tuple:
        """``(symbols, tokens, highest rank merged, first ids, last ids)`` of ``c`` on its own."""
        syms = self._symbols(byte_level_map(c))
        if not syms:
            return ((), (), -1, (), ())
        # the same merge order as _merge (lowest rank, leftmost), on at most 4 symbols, recording
        # the highest rank applied and every id that is ever first or last
        get = self._ranks.get
        toks = list(syms)
        top = -1
        firsts, lasts = [toks[0]], [toks[-1]]
        while len(toks) > 1:
            rks = [get(a | b << 32, _INF) for a, b in zip(toks, toks[1:])]
            best = min(rks)
            if best == _INF:
                break
            i = rks.index(best)
            pair = toks[i] | toks[i + 1] << 32
            m = self._mids.get(pair)
            if m is None:
                m = self._resolve(pair)
            toks[i:i + 2] = (m,)
            top = best
            if i == 0:
                firsts.append(m)
            if i == len(toks) - 1:
                lasts.append(m)
        if len(syms) > 1:
            gain = self._unit_gain
            gain[0] += 1
            gain[1] += len(syms) - len(toks)
        return (tuple(syms), tuple(toks), top, tuple(firsts), tuple(lasts))

    def _units_pay(self) -> bool:
        """Whether merging characters on their own first saves work for this vocabulary: it does
        when its characters mostly merge into fewer symbols (multilingual vocabularies); English
        byte-level vocabularies leave most other characters as bytes, and the old cut-and-cache
        path is faster for them.  Decided on the first 64 characters seen; both paths are exact."""
        multi, saved = self._unit_gain
        return multi < 64 or saved >= multi

    def _cross_rank(self, left: tuple, right: tuple) -> int:
        get = self._ranks.get
        return min([get(a | b << 32, _INF) for a in left[4] for b in right[3]], default=_INF)

    def _bpe_units(self, piece: str) -> tuple:
        """The ids of a byte-level ``piece`` (raw text), its characters merged as far as they can
        be on their own first (see above)."""
        units = self._units
        if len(units) >= CACHE_MAX:
            units.clear()
        infos = []
        for c in piece:
            u = units.get(c)
            if u is None:
                u = units[c] = self._unit(c)
            if u[0]:
                infos.append((c, u))
        if len(infos) < 2:
            return infos[0][1][1] if infos else ()
        cross = self._cross
        if len(cross) >= CACHE_MAX:
            cross.clear()
        low = _INF
        prev_c, prev = infos[0]
        for c, u in infos[1:]:
            key = prev_c + c
            r = cross.get(key)
            if r is None:
                r = cross[key] = self._cross_rank(prev, u)
            if r < low:
                low = r
            prev_c, prev = c, u
        syms: list[int] = []
        if low == _INF:  # nothing merges across characters: each ends as it does on its own
            for _, u in infos:
                syms += u[1]
            return tuple(syms)
        for _, u in infos:
            syms += u[1] if u[2] < low else u[0]
        return tuple(self._merge(syms))
