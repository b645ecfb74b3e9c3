"""The error for inputs on which MNN's C++ code has no defined behaviour."""

from __future__ import annotations

from mtokspec.runtime import TokenizerError


class UndefinedInMnn(TokenizerError):
    """MNN's C++ code would read or write out of bounds, never return, or throw on this file or
    input: there is no result to reproduce.  The message says where."""
