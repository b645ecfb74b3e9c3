"""Vocabulary tables shared by the models.

BPE, WordPiece and Unigram index their vocabulary by the token's bytes, as the file stores them: building
``{bytes: id}`` takes the rows straight from the codec, while decoding every token to ``str`` first
costs as much again (and 50k short-lived bytes objects).  Text is turned into a key per lookup
(:func:`text_key`) or per character (the models cache those), and the ``{str: id}`` view is built
only when someone asks for it (``vocab``, ``get_vocab``).  Unigram keeps token bytes -> row instead
(the row gives the id and the score its lattice needs) and builds ``{bytes: id}`` on request too.
"""

from __future__ import annotations

from mtokspec import speedups

__all__ = ["ByteKeyedVocab", "decode_token", "columns", "bytes_vocab", "row_texts", "zip_dict", "text_key", "text_vocab",
           "id_texts"]


def decode_token(b: bytes) -> str:
    """A vocab token as text (bytes that are not UTF-8 keep their identity via surrogates)."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return b.decode("utf-8", "surrogateescape")


def text_key(s: str) -> bytes | None:
    """The bytes of the vocab token whose text (:func:`decode_token`) is ``s``; None if none can be."""
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        pass
    try:
        b = s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return None
    return b if decode_token(b) == s else None


def columns(rows, width: int) -> tuple:
    """A table's columns without a tuple per row (``Table.columns``), or from plain row lists."""
    if hasattr(rows, "columns"):
        cols = rows.columns()
        if cols:
            return cols
    return tuple(zip(*rows)) if rows else ((),) * width


def _texts(tokens) -> list[str]:
    try:
        return list(map(bytes.decode, tokens))
    except UnicodeDecodeError:
        return list(map(decode_token, tokens))


def bytes_vocab(rows) -> dict[bytes, int]:
    """``{token bytes: id}`` of ``(token bytes, id, ...)`` rows; of a repeated token, the first row's
    id (MNN's look-up of the sorted rows: the file's reading)."""
    if not rows:
        return {}
    tokens, ids = columns(rows, 2)[:2]
    d = zip_dict(tokens, ids)
    if len(d) < len(tokens):
        for tok, i in zip(reversed(tokens), reversed(ids)):
            d[tok] = i
    return d


def row_texts(rows) -> dict[int, str]:
    """``{id: token text}`` of ``(token bytes, id, ...)`` rows: an id's last row (MNN's loader
    writes ``id_to_token[id]`` row after row, so of an id's aliases the last is its text)."""
    if not rows:
        return {}
    tokens, ids = columns(rows, 2)[:2]
    return dict(zip(ids, _texts(tokens)))


def zip_dict(keys, values) -> dict:
    """``dict(zip(keys, values))`` of two sequences of one length (sized once with the compiled
    module: half the time for a vocabulary)."""
    sp = speedups.module()
    if sp is not None and len(keys) == len(values):
        return sp.dict_zip(keys, values)
    return dict(zip(keys, values))


def text_vocab(bvocab: dict[bytes, int]) -> dict[str, int]:
    """``{token text: id}`` of a bytes-keyed vocabulary."""
    return dict(zip(_texts(bvocab), bvocab.values()))


def id_texts(bvocab: dict[bytes, int]) -> dict[int, str]:
    """``{id: token text}`` of a bytes-keyed vocabulary."""
    return dict(zip(bvocab.values(), _texts(bvocab)))


class ByteKeyedVocab:
    """What the models share: ``bvocab`` (token bytes -> id, built at load) and the text views,
    built on first use: ``vocab`` (token text -> id) and the id -> token text table."""

    __slots__ = ("bvocab", "_vocab", "_tokens", "_rows")

    bvocab: dict[bytes, int]
    _vocab: dict[str, int] | None
    _tokens: dict[int, str] | None

    def _init_vocab(self, bvocab: dict[bytes, int], rows=None) -> None:
        """``rows``: the file's vocabulary rows, when an id may have several (its text is then its
        last row's, :func:`row_texts`); None: ``bvocab`` has one text per id."""
        self.bvocab = bvocab
        self._vocab = None
        self._tokens = None
        self._rows = rows if rows is not None and len(bvocab) != len(set(bvocab.values())) else None

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
            t = self._tokens = id_texts(self.bvocab) if self._rows is None else row_texts(self._rows)
        return t

    def token_to_id(self, token: str) -> int | None:
        k = text_key(token)
        return None if k is None else self.bvocab.get(k)

    def id_to_token(self, i: int) -> str | None:
        return self.id_to_token_table().get(i)
