"""The argument checks of the public functions and methods (tokenizers of both semantics, the
converters, the chat renderers): a wrong Python type is a ``TypeError`` whose message starts with
the parameter's name (:class:`~mtokspec.errors.ArgumentTypeError`, also an ``mtokspec.Error``);
any value of the right type is data (a result or an ``mtokspec.Error``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from mtokspec.errors import ArgumentTypeError

__all__ = ["token_id", "token_ids", "token_text", "texts", "optional_text", "path", "number", "mapping", "items",
           "instance", "keyword_options"]


def _refuse(name: str, expected: str, value: object) -> ArgumentTypeError:
    return ArgumentTypeError(f"{name}: expected {expected}, got {type(value).__name__}")


def token_id(name: str, i) -> int:
    """``i`` as an id: an ``int`` (not a ``bool``), any size."""
    if type(i) is int:
        return i
    if isinstance(i, int) and not isinstance(i, bool):
        return int(i)
    raise _refuse(name, "an int", i)


def token_ids(name: str, ids) -> list[int]:
    """``ids`` as a list of ids (any iterable of ints but a string)."""
    if isinstance(ids, (str, bytes, bytearray)) or not hasattr(ids, "__iter__"):
        raise _refuse(name, "an iterable of ints", ids)
    return [i if type(i) is int else token_id(name, i) for i in ids]


def token_text(name: str, s) -> str:
    if not isinstance(s, str):
        raise _refuse(name, "a str", s)
    return s


def optional_text(name: str, s) -> str | None:
    """``s``: a ``str`` or ``None``."""
    if s is not None and not isinstance(s, str):
        raise _refuse(name, "a str or None", s)
    return s


def texts(name: str, items) -> list:
    if isinstance(items, (str, bytes, bytearray)) or not hasattr(items, "__iter__"):
        raise _refuse(name, "an iterable", items)
    return list(items)


def path(name: str, p) -> str | os.PathLike[str]:
    """``p`` as a file's path: a ``str`` or an ``os.PathLike`` of one (a path that does not exist is
    data: the caller's ``open`` raises ``FileNotFoundError``)."""
    if isinstance(p, str) or (isinstance(p, os.PathLike) and isinstance(os.fspath(p), str)):
        return p
    raise _refuse(name, "a str or os.PathLike path", p)


def number(name: str, x, *, optional: bool = False, integral: bool = False) -> Any:
    """``x`` as a number: an ``int`` or (unless ``integral``) a ``float``, never a ``bool``; ``None``
    too when ``optional``."""
    if x is None and optional:
        return x
    kinds = (int,) if integral else (int, float)
    if isinstance(x, kinds) and not isinstance(x, bool):
        return x
    what = "an int" if integral else "a number"
    raise _refuse(name, what + (" or None" if optional else ""), x)


def mapping(name: str, d, *, optional: bool = False) -> Any:
    """``d``: a mapping (a dict, a JSON object); ``None`` too when ``optional``."""
    if (d is None and optional) or isinstance(d, Mapping):
        return d
    raise _refuse(name, "a dict" + (" or None" if optional else ""), d)


def items(name: str, seq, kind: type | tuple[type, ...], what: str, *, optional: bool = False) -> Any:
    """``seq``: a list or tuple whose every item is a ``kind`` (``what`` names it: ``"dicts"``);
    ``None`` too when ``optional``.  The sequence itself is returned."""
    if seq is None and optional:
        return seq
    if not isinstance(seq, (list, tuple)):
        raise _refuse(name, f"a list of {what}" + (" or None" if optional else ""), seq)
    for i, item in enumerate(seq):
        if not isinstance(item, kind) or (kind is int and isinstance(item, bool)):
            raise ArgumentTypeError(f"{name}: expected a list of {what}, item {i} is a {type(item).__name__}")
    return seq


def instance(name: str, value, kind: type | tuple[type, ...], what: str) -> Any:
    """``value``: a ``kind`` (``what`` names it: ``"an MtokFile tree"``)."""
    if isinstance(value, kind):
        return value
    raise _refuse(name, what, value)


def keyword_options(fn: Any) -> tuple[str, ...]:
    """The keyword-only parameters of ``fn``: the options a constructor or function takes, read
    from its signature (the one place they are declared)."""
    import inspect

    return tuple(p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY)
