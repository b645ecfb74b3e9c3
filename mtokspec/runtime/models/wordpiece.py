"""WordPiece: greedy longest-match-first, like HF ``tokenizers/src/models/wordpiece``.

A word longer than ``max_input_chars_per_word`` characters, or one that cannot be covered by
vocabulary pieces (non-initial pieces carry ``continuing_subword_prefix``), becomes ``unk_token``.
Results are cached per word (bounded).
"""

from __future__ import annotations

from mtokspec import tree
from mtokspec.runtime.models.bpe import CACHE_MAX, vocab_dict

__all__ = ["WordPiece"]


class WordPiece:
    __slots__ = ("vocab", "unk_token", "prefix", "max_chars", "_maxlen", "_tokens", "_cache")

    _tokens: dict[int, str] | None

    def __init__(self, vocab: dict[str, int], unk_token: str, continuing_subword_prefix: str,
                 max_input_chars_per_word: int):
        self.vocab = vocab
        self.unk_token = unk_token
        self.prefix = continuing_subword_prefix
        self.max_chars = max_input_chars_per_word
        self._maxlen = max(map(len, vocab), default=0)
        self._tokens = None
        self._cache: dict[str, tuple[int, ...]] = {}

    @classmethod
    def from_tree(cls, node: tree.WordPieceModel) -> "WordPiece":
        vocab = vocab_dict(node.vocab)
        return cls(vocab, node.unk_token, node.continuing_subword_prefix,
                   node.max_input_chars_per_word)

    def _unk(self) -> list[int]:
        i = self.vocab.get(self.unk_token)
        if i is None:
            from mtokspec.runtime import TokenizerError
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
        vocab = self.vocab
        prefix = self.prefix
        maxlen = self._maxlen
        out = []
        start = 0
        while start < n:
            end = min(n, start + maxlen)
            found = None
            while start < end:
                sub = word[start:end]
                if start > 0:
                    sub = prefix + sub
                found = vocab.get(sub)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return self._unk()
            out.append(found)
            start = end
        return out

    def token_to_id(self, token: str) -> int | None:
        return self.vocab.get(token)

    def id_to_token(self, i: int) -> str | None:
        t = self._tokens
        if t is None:
            t = self._tokens = {v: k for k, v in self.vocab.items()}
        return t.get(i)
