"""The mnn semantics' compiled stages (``mtokspec/_csrc/mnn_stages.c``), handed MNN's tables.

:func:`stages` gives the compiled module once it holds the tables the pure stages read (MNN's
Unicode categories, lower-case map and regex folding, the ASCII white space and punctuation sets, the Chinese
ranges, the table normalizer's control characters, the byte-level map), or None when the module
is not built or ``MTOKSPEC_PURE`` is set.  A stage asks at construction and keeps the answer.
"""

from __future__ import annotations

from types import ModuleType

from mtokspec import speedups

_ready: ModuleType | None = None  # the module the tables were last handed to


def stages() -> ModuleType | None:
    global _ready
    sp = speedups.module()
    if sp is None or not hasattr(sp, "mnn_stages_init"):
        return None
    if _ready is not sp:
        from mtokspec.runtime.mnn import _text as X
        from mtokspec.runtime.mnn import unicode as U
        from mtokspec.runtime.mnn._unicode_data import CATEGORIES, CATEGORY_STARTS

        # the byte the regex engine folds each range's characters to (those from U+0080 on)
        folds = bytes(U.fold(max(start, 0x80)) for start in CATEGORY_STARTS)
        sp.mnn_stages_init(CATEGORY_STARTS, CATEGORIES, folds, sorted(U._LOWER.items()), bytes(sorted(U._ASCII_SPACE)),
                           bytes(sorted(X.ASCII_PUNCT)), X.CHINESE, sorted(X.TO_SPACE), X.BYTE_MAP)
        _ready = sp
    return sp
