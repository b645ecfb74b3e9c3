"""File helpers shared by the commands."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def atomic_write(path: str | os.PathLike, data: bytes | str) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename.

    Readers see the old file or the whole new one; a failure leaves neither a partial file nor the
    temporary behind.
    """
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        # mkstemp makes the file private (0600); give it the mode a plain open() would have
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def one_line(err: object) -> str:
    """An error's message on one line (YAML and template errors span several), for stderr."""
    return " ".join(str(err).split())


def read_input(path: str) -> bytes:
    """Bytes of a file, or of standard input for ``-``."""
    if path == "-":
        return sys.stdin.buffer.read()
    return Path(path).read_bytes()
