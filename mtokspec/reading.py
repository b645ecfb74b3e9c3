"""Bounded reads: a file of any kind, or standard input, stops at :func:`max_input` bytes (2 GiB
unless ``MTOKSPEC_MAX_INPUT`` gives another number of bytes) with :class:`~mtokspec.errors.PathRefused`.

The CLI reads every input through here, and so do ``Tokenizer.from_file`` and the converter; a
tokenizer file (:func:`read_tokenizer_file`) given as a folder is refused with what to run instead."""

from __future__ import annotations

import os
import shlex
import stat
import sys

from mtokspec.errors import PathRefused

__all__ = ["DEFAULT_MAX_INPUT", "max_input", "read_file", "read_input", "read_tokenizer_file"]

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
    :class:`PathRefused` past ``limit`` (default :func:`max_input`) or for a name no file can have."""
    limit = max_input() if limit is None else limit
    try:
        f = open(path, "rb")
    except ValueError as e:  # a NUL or a lone surrogate: no file can have that name
        raise PathRefused(f"not a file name the system takes ({e})") from None
    with f:
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


def read_tokenizer_file(path: str | os.PathLike[str], limit: int | None = None, *, stdin: bool = False) -> bytes:
    """:func:`read_file` of a tokenizer file (``.mtok`` or ``tokenizer.txt``; with ``stdin``, ``-``
    is standard input, as :func:`read_input` reads it): a folder is refused with
    :class:`PathRefused` saying what to run (a Hugging Face model folder is converted first)."""
    if stdin and isinstance(path, str) and path == "-":
        return read_input(path, limit)
    if os.path.isdir(path):
        raise PathRefused(folder_hint(path))
    return read_file(path, limit)


def folder_hint(path: str | os.PathLike[str]) -> str:
    """What a folder given as a tokenizer file is told: the tokenizer file inside it (MNN's
    exporter writes ``tokenizer.mtok`` or ``tokenizer.txt``), and the conversion of a Hugging Face
    model folder."""
    name = os.fspath(path)
    try:
        inside = sorted(e for e in os.listdir(name) if e.endswith(".mtok") or e == "tokenizer.txt")
    except OSError:
        inside = []
    inside.sort(key=lambda e: e not in ("tokenizer.mtok", "tokenizer.txt"))
    convert = (f"run `mtokspec convert {shlex.quote(name)} -o tokenizer.mtok` (--target mnn for a device) "
               f"or mtokspec.convert.from_hf({name!r})")
    if inside:
        hf = any(os.path.isfile(os.path.join(name, f)) for f in ("tokenizer.json", "tokenizer_config.json"))
        return (f"a folder, not a tokenizer file: give the file inside it ({os.path.join(name, inside[0])})"
                + (f", or, for its Hugging Face files, {convert}" if hf else ""))
    return f"a folder, not a tokenizer file: a Hugging Face model folder? {convert}"
