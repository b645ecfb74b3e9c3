"""The optional compiled hot loops: ``mtokspec._speedups``, built from ``mtokspec/_csrc/`` when
the installing machine has a C compiler (``pip`` installs the pure-Python package when it has none).

The pure-Python code is the reference.  The compiled parts redo only inner loops, in the same order,
and leave every decision to the Python code around them: the codec's walk over tables of strings
and the legacy formats' line tables (``codec_support``; on any doubt they hand back to the exact
loop, which reports errors); BPE's merge loop, ``▁`` chunking and piece loop, Unigram's lattice, the
loop over pre-tokenized pieces and the building of vocabularies (``runtime/models``; the cores ask
the model for symbols, merge outputs, scores and unknown runs).  ``tests/runtime/hf/test_speedups.py`` checks that both
paths give the same trees, ids and errors on the corpus and on generated input.  For the mnn semantics:
MNN's regex matcher (``runtime/mnn/regex``), MNN's models (``runtime/mnn/models``: the vocabulary
look-up, BPE, WordPiece and Unigram over bytes, built from the tables' columns, or from a table's
bytes where the parse left them (``Table.string_index``); a piece on which the
pure code raises goes back to it) and the loops of its Bert and table normalizers, Bert, ByteLevel
and Metaspace pre-tokenizers and special-token and added-token splits (``runtime/mnn/_compiled.py``),
and the legacy ``tokenizer.txt`` types 0 and 3 (``runtime/mnn/legacy``: type 0's tables and score
merge, type 3's merges as ints and its split loop; where the pure classes raise they run);
``tests/runtime/mnn/test_speedups_mnn*.py`` check those.
``MTOKSPEC_PURE=1`` in the environment turns the compiled parts off.
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
    """The compiled module, or None (not built, or turned off).  Read at each parse and when a
    model first encodes, so a test can swap it."""
    return _module


def enabled() -> bool:
    """Whether parses and tokenizers from now on use the compiled parts."""
    return _module is not None
