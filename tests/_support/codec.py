"""Codec test helpers: the plain form the reference codec is compared in, and a hang guard."""

from __future__ import annotations

import signal
from contextlib import contextmanager

import mtokspec
from mtokspec.format import tree as t

__all__ = ["plain", "tree_plain", "deadline"]


def plain(value):
    """The reference codec's output in the plain form ``mtokspec.to_dict`` uses."""
    if isinstance(value, bytes):
        return t._bytes_to_plain(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def tree_plain(tree):
    d = mtokspec.to_dict(tree)
    d.pop("format")
    return d


@contextmanager
def deadline(seconds: float):
    """Hang guard for hostile inputs: a parse that runs past this is a bug, not a slow machine."""
    def fire(*_):
        raise TimeoutError(f"parse took longer than {seconds} s")
    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
