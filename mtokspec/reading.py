"""Bounded reads: a file of any kind, or standard input, stops at :func:`max_input` bytes (2 GiB
unless ``MTOKSPEC_MAX_INPUT`` gives another number of bytes) with :class:`~mtokspec.errors.PathRefused`.

The CLI reads every input through here, and so do ``Tokenizer.from_file`` and the converter."""

from __future__ import annotations

import os
import stat
import sys

from mtokspec.errors import PathRefused

__all__ = ["DEFAULT_MAX_INPUT", "max_input", "read_file", "read_input"]

DEFAULT_MAX_INPUT = 2 << 30  # bytes: 2 GiB
_CHUNK = 1 << 20


def max_input() -> int:
    """The most bytes one input may have: ``MTOKSPEC_MAX_INPUT`` (a number of bytes) or 2 GiB."""
    text = os.environ.get("MTOKSPEC_MAX_INPUT", "").strip()
    if not text:
        return DEFAULT_MAX_INPUT
    try:
        value = int(text[:20])
    except ValueError:
        value = -1
    if value < 0 or len(text) > 20:
        raise PathRefused(f"MTOKSPEC_MAX_INPUT must be a number of bytes, got {text[:40]!r}")
    return value


def _read_bounded(f, limit: int, first: bytes = b"") -> bytes:
    chunks, size = [first], len(first)
    while True:
        chunk = f.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise PathRefused(f"more than {limit:,} bytes, the input limit (MTOKSPEC_MAX_INPUT sets another)")


def read_file(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of a file of any kind (a FIFO or a device is read up to the limit), refused with
    :class:`PathRefused` past ``limit`` (default :func:`max_input`)."""
    limit = max_input() if limit is None else limit
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if stat.S_ISREG(st.st_mode) and st.st_size > limit:
            raise PathRefused(f"{st.st_size:,} bytes, more than the input limit of {limit:,} "
                              "(MTOKSPEC_MAX_INPUT sets another)")
        if stat.S_ISREG(st.st_mode):
            data = f.read(st.st_size + 1)  # one buffer: the whole file and the end
            if len(data) <= st.st_size:
                return data
            return _read_bounded(f, limit, data)  # it grew while being read
        return _read_bounded(f, limit)


def read_input(path: str, limit: int | None = None) -> bytes:
    """Bytes of a file, or of standard input for ``-``, at most ``limit`` (see :func:`read_file`)."""
    if path == "-":
        return _read_bounded(sys.stdin.buffer, max_input() if limit is None else limit)
    return read_file(path, limit)
