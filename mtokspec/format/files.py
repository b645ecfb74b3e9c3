"""Bytes to tree and back, for every file type: ``.mtok`` and the legacy ``tokenizer.txt`` types 0-3.

The codec's public face: :func:`parse`, :func:`build`, :func:`tree_of` and :func:`tree_and_bytes`
(the one way in from bytes or a path), and, for callers that need a record's bytes, ``build_node`` (one record as ``build``
writes it) and ``ops_fit`` (whether bytes hold exactly n post-processor ops)."""

from __future__ import annotations

import os
from typing import Any

from mtokspec._generated import codec as _codec
from mtokspec._generated.codec import build_node, ops_fit
from mtokspec._generated.tree import ROOTS_BY_MAGIC_LINE, MtokFile
from mtokspec.errors import MtokFormatError
from mtokspec.format.tree import TokenizerFile

__all__ = ["parse", "build", "tree_of", "tree_and_bytes", "build_node", "ops_fit"]

# line 1 of the file -> its root class; "430 4" is .mtok, "430 0".."430 3" the legacy text types
_PARSE = {cls: getattr(_codec, f"parse_{cls.__name__}") for cls in ROOTS_BY_MAGIC_LINE.values()}
_BUILD = {cls: getattr(_codec, f"build_{cls.__name__}") for cls in ROOTS_BY_MAGIC_LINE.values()}


def parse(data: bytes | bytearray | memoryview) -> TokenizerFile:
    """Parse a tokenizer file: ``.mtok`` (``MtokFile``) or a legacy ``tokenizer.txt`` of type 0-3.

    The format is told by the first line.  Any defect raises :class:`MtokFormatError` with the
    byte offset and the field path; no other exception escapes.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise MtokFormatError(f"expected bytes, got {type(data).__name__}")
    head = bytes(data[:6])
    cls = ROOTS_BY_MAGIC_LINE.get(head)
    if cls is None:
        raise MtokFormatError(
            f"not an MNN tokenizer file: line 1 must be '430 <type>' with type 0-4, got {head!r}", 0, "header.magic"
        )
    tree: TokenizerFile = _PARSE[cls](data)
    if isinstance(tree, MtokFile) and tree.extension is not None:
        from mtokspec.format.extension import extension_refusal, extension_size

        refusal = extension_refusal(tree, extension_size(tree.extension))
        if refusal is not None:
            raise refusal
    return tree


def build(tree: TokenizerFile) -> bytes:
    """The bytes of a tree; ``build(parse(b)) == b`` for every file the reference exporter writes."""
    fn = _BUILD.get(type(tree))
    if fn is None:
        raise MtokFormatError(f"expected a tokenizer file tree (MtokFile, ...), got {type(tree).__name__}")
    data: bytes = fn(tree)
    if isinstance(tree, MtokFile) and tree.extension is not None:
        from dataclasses import replace

        from mtokspec.format.extension import extension_refusal

        refusal = extension_refusal(tree, len(data) - len(fn(replace(tree, extension=None))))
        if refusal is not None:
            raise refusal
    return data


def tree_of(source: Any) -> Any:
    """The tree of what ``mtokspec.load`` takes (the one way in from bytes or a path): bytes parsed,
    a path (``str`` or ``os.PathLike``) read as a tokenizer file and parsed, anything else as it is
    (the caller refuses what is not a tree)."""
    return tree_and_bytes(source)[0]


def tree_and_bytes(source: Any) -> tuple[Any, bytes | None]:
    """:func:`tree_of` and the bytes it parsed (None when ``source`` was neither bytes nor a path)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, (str, os.PathLike)):
        from mtokspec.reading import read_tokenizer_file

        data = read_tokenizer_file(source)
    else:
        return source, None
    return parse(data), data
