"""WordPiece: greedy longest-match-first, like HF ``tokenizers/src/models/wordpiece``.

A word longer than ``max_input_chars_per_word`` characters, or one that cannot be covered by
vocabulary pieces (non-initial pieces carry ``continuing_subword_prefix``), becomes ``unk_token``.
Results are cached per word (bounded).  The vocabulary is keyed by token bytes (``_vocab.py``):
an ASCII word is matched on its bytes directly, any other word piece by piece through
:func:`text_key`.  As in HF, each match is tried from the longest candidate down; a candidate is
never longer than the longest token (in bytes, so in characters too), measured once, the first time
a word is longer than :data:`SHORT_WORD`: a long word costs O(length x longest token).
"""

from __future__ import annotations

from mtokspec.format import tree as t
from mtokspec.runtime.hf.models._vocab import ByteKeyedVocab, bytes_vocab, text_key
from mtokspec.runtime.hf.models.bpe import CACHE_MAX

__all__ = ["WordPiece", "SHORT_WORD"]

SHORT_WORD = 64  # characters: up to here a word tries its whole rest (no bound needed)


class WordPiece(ByteKeyedVocab):
    __slots__ = ("unk_token", "prefix", "_bprefix", "max_chars", "_cache", "_longest")

    def __init__(self, bvocab: dict[bytes, int], unk_token: str, continuing_subword_prefix: str,
                 max_input_chars_per_word: int, rows=None):
        self._init_vocab(bvocab, rows)
        self.unk_token = unk_token
        self.prefix = continuing_subword_prefix
        self._bprefix = text_key(continuing_subword_prefix)
        self.max_chars = max_input_chars_per_word
        self._cache: dict[str, tuple[int, ...]] = {}
        self._longest: int | None = None

    @classmethod
    def from_tree(cls, node: t.WordPieceModel) -> "WordPiece":
        """The file's WordPiece; a text whose (first) row is the unknown id under another text
        marks a piece that is not a token (MNN's look-up passes over the unknown id)."""
        bvocab = bytes_vocab(node.vocab)
        unk = node.unk_token.encode("utf-8", "surrogateescape")
        unk_id = bvocab.get(unk)
        if unk_id is not None and len(bvocab) < len(node.vocab):
            bvocab = {tok: i for tok, i in bvocab.items() if i != unk_id or tok == unk}
        return cls(bvocab, node.unk_token, node.continuing_subword_prefix, node.max_input_chars_per_word, node.vocab)

    def _unk(self) -> list[int]:
        i = self.token_to_id(self.unk_token)
        if i is None:
            from mtokspec.errors import TokenizerError
            raise TokenizerError(f"WordPiece: unk token {self.unk_token!r} is not in the vocabulary")
        return [i]

    def tokenize(self, word: str) -> tuple[int, ...]:
        r = self._cache.get(word)
        if r is not None:
            return r
        ids = self._tokenize(word)
        if len(self._cache) >= CACHE_MAX:
            self._cache.clear()
        self._cache[word] = r = tuple(ids)
        return r

    def _tokenize(self, word: str) -> list[int]:
        n = len(word)
        if n > self.max_chars:
            return self._unk()
        get = self.bvocab.get
        out = []
        start = 0
        longest = n
        if n > SHORT_WORD:
            longest = self._longest
            if longest is None:
                longest = self._longest = max(map(len, self.bvocab), default=0)
        prefix = self._bprefix
        word_b = word.encode("utf-8", "surrogatepass")
        if len(word_b) == n and prefix is not None:
            # ASCII: a character is a byte, slice the bytes
            while start < n:
                end = min(n, start + longest)
                found = None
                while start < end:
                    found = get(prefix + word_b[start:end] if start else word_b[:end])
                    if found is not None:
                        break
                    end -= 1
                if found is None:
                    return self._unk()
                out.append(found)
                start = end
            return out
        tprefix = self.prefix
        while start < n:
            end = min(n, start + longest)
            found = None
            while start < end:
                sub = word[start:end]
                key = text_key(tprefix + sub if start else sub)
                found = None if key is None else get(key)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return self._unk()
            out.append(found)
            start = end
        return out
