"""Vocabulary tables shared by the models.

BPE and WordPiece index their vocabulary by the token's bytes, as the file stores them: building
``{bytes: id}`` takes the rows straight from the codec, while decoding every token to ``str`` first
costs as much again (and 50k short-lived bytes objects).  Text is turned into a key per lookup
(:func:`text_key`) or per character (the models cache those), and the ``{str: id}`` view is built
only when someone asks for it (``vocab``, ``get_vocab``).
"""

from __future__ import annotations

__all__ = ["decode_token", "columns", "bytes_vocab", "text_key", "text_vocab", "id_texts"]


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
    """``{token bytes: id}`` of ``(token bytes, id, ...)`` rows (of a repeated token, the later row wins)."""
    if not rows:
        return {}
    tokens, ids = columns(rows, 2)[:2]
    return dict(zip(tokens, ids))


def text_vocab(bvocab: dict[bytes, int]) -> dict[str, int]:
    """``{token text: id}`` of a bytes-keyed vocabulary."""
    return dict(zip(_texts(bvocab), bvocab.values()))


def id_texts(bvocab: dict[bytes, int]) -> dict[int, str]:
    """``{id: token text}`` of a bytes-keyed vocabulary."""
    return dict(zip(bvocab.values(), _texts(bvocab)))
