"""A tokenizer of either semantics pickles as its file's bytes and its options, and unpickles by
loading them again: a pickle costs what the file weighs, never the built tables, so a tokenizer can
go to worker processes or a cluster's workers cheaply."""

from __future__ import annotations

from typing import Any

__all__ = ["reduce_tokenizer", "remember_source"]


def remember_source(tok: Any, data: bytes | None) -> Any:
    """Keep ``data`` (the bytes ``tok.tree`` was parsed from) for pickling; returns ``tok``."""
    if data is not None:
        tok._source_bytes = bytes(data)
    return tok


def reduce_tokenizer(tok: Any, options: dict[str, Any]) -> tuple:
    """``__reduce__`` of a tokenizer: rebuilt by its class's ``from_bytes`` from the file's bytes
    (those it was loaded from, else its tree written by the codec: an upgraded legacy file's
    ``.mtok``) with ``options``."""
    from mtokspec.format import build

    data = getattr(tok, "_source_bytes", None)
    if data is None:
        data = build(tok.tree)
    return _load_pickled, (type(tok), data, options)


def _load_pickled(cls: Any, data: bytes, options: dict[str, Any]) -> Any:
    return remember_source(cls.from_bytes(data, **options), data)
