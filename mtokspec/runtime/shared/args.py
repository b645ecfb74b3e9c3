"""The argument checks of the tokenizers' public methods (both semantics): a wrong Python type is a
``TypeError`` naming the parameter (:class:`~mtokspec.errors.ArgumentTypeError`, also an
``mtokspec.Error``); any value of the right type is data (a result or an
``mtokspec.Error``)."""

from __future__ import annotations

from mtokspec.errors import ArgumentTypeError

__all__ = ["token_id", "token_ids", "token_text", "texts"]


def token_id(name: str, i) -> int:
    """``i`` as an id: an ``int`` (not a ``bool``), any size."""
    if type(i) is int:
        return i
    if isinstance(i, int) and not isinstance(i, bool):
        return int(i)
    raise ArgumentTypeError(f"{name}: expected an int, got {type(i).__name__}")


def token_ids(name: str, ids) -> list[int]:
    """``ids`` as a list of ids (any iterable of ints but a string)."""
    if isinstance(ids, (str, bytes, bytearray)) or not hasattr(ids, "__iter__"):
        raise ArgumentTypeError(f"{name}: expected an iterable of ints, got {type(ids).__name__}")
    return [i if type(i) is int else token_id(name, i) for i in ids]


def token_text(name: str, s) -> str:
    if not isinstance(s, str):
        raise ArgumentTypeError(f"{name}: expected a str, got {type(s).__name__}")
    return s


def texts(name: str, items) -> list:
    if isinstance(items, (str, bytes, bytearray)) or not hasattr(items, "__iter__"):
        raise ArgumentTypeError(f"{name}: expected an iterable, got {type(items).__name__}")
    return list(items)
