"""Byte-pair encoding, with the merge order of HF ``tokenizers/src/models/bpe/word.rs``.

HF merges, at every step, the adjacent pair with the lowest rank, the leftmost one among equal
ranks.  Here a word is a list of symbol strings with a parallel list of pair ranks; a step takes
``min`` of the rank list (leftmost minimum via ``list.index``) and updates the two neighbouring
ranks.  Results are cached per piece (bounded: the cache is cleared when full).

Lossy places (format-notes ⚠), followed as the file says: ``unk_token`` is not stored, so a
character that is neither in the vocabulary nor covered by byte fallback is dropped (HF with
``unk_token=None`` does the same); ``dropout``, ``continuing_subword_prefix``,
``end_of_word_suffix`` and ``ignore_merges`` are not stored and not applied.

Long pieces (SentencePiece-style files without a pre-tokenizer encode whole lines) are cut where no
merge can cross: (1) before every ``▁`` that follows a non-``▁`` character, when no merge output
contains a non-``▁`` character followed by ``▁`` — checked on the loaded merges, never assumed;
(2) for a cache miss, between two characters (both single-character tokens) whose two-character
string occurs in no merge output.  Merges on either side of such a cut are independent, so the
result is exactly that of the whole piece.
"""

from __future__ import annotations

import regex

from mtokspec import tree
from mtokspec.runtime.pre_tokenizers import byte_level_map

__all__ = ["BPE", "CACHE_MAX"]

CACHE_MAX = 200_000
_INF = 1 << 62
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


def vocab_dict(rows) -> dict[str, int]:
    """``{token text: id}`` of ``(token bytes, id, ...)`` rows (C-level loops when all are UTF-8)."""
    if not rows:
        return {}
    cols = list(zip(*rows))
    try:
        return dict(zip(map(bytes.decode, cols[0]), cols[1]))
    except UnicodeDecodeError:
        return {decode_token(t): i for t, i in zip(cols[0], cols[1])}


class BPE:
    __slots__ = ("vocab", "_tokens", "_ranks", "byte_fallback", "byte_level", "_cache",
                 "_merges_rows", "_sp_chunk", "_bigrams", "_chunk_re", "map_bytes")

    def __init__(self, vocab: dict[str, int], merges_rows, byte_fallback: bool = False,
                 byte_level: bool = False, tokens: list | None = None):
        self.vocab = vocab
        self._tokens = tokens  # id -> token, built lazily
        self._merges_rows = merges_rows
        self._ranks = None
        self.byte_fallback = byte_fallback
        self.byte_level = byte_level
        self.map_bytes = byte_level  # the tokenizer turns this off when a ByteLevel pre-tokenizer maps
        self._cache: dict[str, list[int]] = {}
        self._sp_chunk = None
        self._bigrams = None
        self._chunk_re = regex.compile(f"{_SP}*[^{_SP}]+|{_SP}+")

    @classmethod
    def from_tree(cls, node: tree.BPEModel) -> "BPE":
        return cls(vocab_dict(node.vocab), node.merges, node.byte_fallback, node.byte_level)

    # --- tables ---------------------------------------------------------------------------------
    def id_to_token_table(self) -> dict[int, str]:
        t = self._tokens
        if t is None:
            t = self._tokens = {i: s for s, i in self.vocab.items()}
        return t

    def ranks(self) -> dict[tuple[str, str], int]:
        r = self._ranks
        if r is None:
            toks = self.id_to_token_table()
            r = {}
            try:
                for a, b, k in self._merges_rows:
                    r[(toks[a], toks[b])] = k
            except KeyError as e:
                raise _err(f"BPE merge names id {e.args[0]} which is not in the vocabulary") from None
            self._ranks = r
        return r

    def _merge_outputs(self):
        return [a + b for a, b in self.ranks()]

    def sp_chunking(self) -> bool:
        """Whether cutting before each ``▁`` that follows a non-``▁`` is safe (checked once)."""
        ok = self._sp_chunk
        if ok is None:
            joined = "\n".join(self._merge_outputs())
            ok = self._sp_chunk = regex.search(f"[^{_SP}\n]{_SP}", joined) is None
        return ok

    def bigrams(self) -> frozenset:
        bg = self._bigrams
        if bg is None:
            s = "\n".join(self._merge_outputs())
            bg = self._bigrams = frozenset(map("".join, zip(s, s[1:])))
        return bg

    # --- encoding -------------------------------------------------------------------------------
    def get_cache(self) -> dict:
        return self._cache

    def tokenize(self, piece: str) -> list[int]:
        """Ids of one pre-tokenized piece (already in the model's alphabet unless ``map_bytes``)."""
        cache = self._cache
        r = cache.get(piece)
        if r is not None:
            return r
        word = byte_level_map(piece) if self.map_bytes else piece
        if len(word) > 24:
            r = []
            for part in self._cut(word):
                r.extend(self._bpe(part))
        else:
            r = self._bpe(word)
        if len(cache) >= CACHE_MAX:
            cache.clear()
        cache[piece] = r
        return r

    def tokenize_text(self, text: str, out: list[int]) -> None:
        """Encode a whole un-pre-tokenized segment (SentencePiece style), appending to ``out``."""
        if len(text) > 24 and not self.map_bytes and self.sp_chunking():
            cache = self._cache
            get = cache.get
            tok = self.tokenize
            for chunk in self._chunk_re.findall(text):
                r = get(chunk)
                if r is None:
                    r = tok(chunk)
                out.extend(r)
        else:
            out.extend(self.tokenize(text))

    def _cut(self, word: str) -> list[str]:
        """Split a long word where no merge can cross (bigram rule)."""
        bg = self.bigrams()
        vocab = self.vocab
        parts = []
        start = 0
        prev = word[0]
        prev_known = prev in vocab
        for i in range(1, len(word)):
            c = word[i]
            known = c in vocab
            if known and prev_known and (prev + c) not in bg:
                parts.append(word[start:i])
                start = i
            prev = c
            prev_known = known
        parts.append(word[start:])
        return parts

    def _symbols(self, word: str) -> list[str]:
        vocab = self.vocab
        syms = list(word)
        for c in syms:
            if c not in vocab:
                break
        else:
            return syms
        out = []
        for c in syms:
            if c in vocab:
                out.append(c)
            elif self.byte_fallback:
                bts = ["<0x%02X>" % b for b in c.encode("utf-8", "surrogatepass")]
                if all(b in vocab for b in bts):
                    out.extend(bts)
                # else: unknown and no unk token stored: dropped
        return out

    def _bpe(self, word: str) -> list[int]:
        vocab = self.vocab
        if len(word) == 1:
            i = vocab.get(word)
            if i is not None:
                return [i]
        syms = self._symbols(word)
        n = len(syms)
        if n > 1:
            ranks = self._ranks
            if ranks is None:
                ranks = self.ranks()
            get = ranks.get
            inf = _INF
            rk = [get(p, inf) for p in zip(syms, syms[1:])]
            best = min(rk)
            while best != inf:
                i = rk.index(best)
                merged = syms[i] + syms[i + 1]
                if i:
                    rk[i - 1] = get((syms[i - 1], merged), inf)
                if i + 2 < len(syms):
                    rk[i:i + 2] = (get((merged, syms[i + 2]), inf),)
                else:
                    del rk[i]
                syms[i:i + 2] = (merged,)
                if not rk:
                    break
                best = min(rk)
        try:
            return [vocab[s] for s in syms]
        except KeyError as e:
            raise _err(f"BPE merge output {e.args[0]!r} is not in the vocabulary") from None

    # --- vocabulary -----------------------------------------------------------------------------
    def token_to_id(self, token: str) -> int | None:
        return self.vocab.get(token)

    def id_to_token(self, i: int) -> str | None:
        return self.id_to_token_table().get(i)
