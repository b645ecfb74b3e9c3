"""Progress of long work on a terminal: ``label: n/total`` rewritten in place on stderr, at most a
few times a second; silent when stderr is not a terminal or when asked to be quiet."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """``with Progress("compare", len(texts)) as p: ... p.update(i)``; the line is erased at the end."""

    def __init__(self, label: str, total: int | None = None, *, quiet: bool = False,
                 stream: TextIO | None = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = not quiet and bool(isatty and isatty())
        self.label = label
        self.total = total
        self._next = 0.0
        self._shown = False

    def update(self, done: int) -> None:
        """Say that ``done`` items are finished (shown when 0.2 s have passed since the last line)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + 0.2
        of = f"/{self.total:,}" if self.total is not None else ""
        self.stream.write(f"\r{self.label}: {done:,}{of}\x1b[K")
        self.stream.flush()
        self._shown = True

    def stage(self, what: str) -> None:
        """Say which step of the work runs now (shown at once)."""
        if self.enabled:
            self.stream.write(f"\r{self.label}: {what}...\x1b[K")
            self.stream.flush()
            self._shown = True

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
