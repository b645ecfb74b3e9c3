"""The optional compiled hot loops: ``mtokspec._speedups``, built from ``mtokspec/_speedups.c`` when
the installing machine has a C compiler (``pip`` installs the pure-Python package when it has none).

The pure-Python models are the reference.  The compiled cores redo only their inner loops (BPE's
merge loop and ``▁`` chunking, Unigram's lattice) in the same order and ask the Python model for
everything else, so both give the same ids; ``tests/test_speedups.py`` checks that on the corpus and
on generated input.  ``MTOKSPEC_PURE=1`` in the environment turns the compiled cores off.
"""

from __future__ import annotations

import os
from types import ModuleType

__all__ = ["module", "enabled"]


def _load() -> ModuleType | None:
    if os.environ.get("MTOKSPEC_PURE", "").strip() not in ("", "0"):
        return None
    try:
        from mtokspec import _speedups
    except ImportError:
        return None
    return _speedups


_module = _load()


def module() -> ModuleType | None:
    """The compiled module, or None (not built, or turned off).  Read when a model first encodes,
    so a test can swap it per tokenizer."""
    return _module


def enabled() -> bool:
    """Whether tokenizers loaded from now on use the compiled cores."""
    return _module is not None
