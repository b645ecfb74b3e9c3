"""HF's ``UnicodeScripts`` table: which code points each script HF tells apart holds.

The table (``_scripts_data``) is measured on HF ``tokenizers`` itself (``tools/make_hf_scripts.py``):
HF's own, of an older Unicode than Python's; Hiragana, Katakana and U+30FC count as Han, and a
code point it does not list is ``Any`` (as the space is), which joins the piece before it.
"""

from __future__ import annotations

from functools import lru_cache

from mtokspec.runtime.hf import _scripts_data as _data

__all__ = ["ANY", "TOKENIZERS_VERSION", "script_ranges"]

ANY = ""
"""The name :func:`script_ranges` gives the code points HF's table leaves out (and the space)."""

TOKENIZERS_VERSION = _data.TOKENIZERS_VERSION


@lru_cache(maxsize=1)
def script_ranges() -> dict[str, tuple[tuple[int, int], ...]]:
    """``{script: ((first, last) code point ranges)}``, :data:`ANY` included (surrogates are in no range)."""
    out: dict[str, list[tuple[int, int]]] = {}
    ends = (*_data.STARTS[1:], 0x110000)
    for start, end, run in zip(_data.STARTS, ends, _data.RUNS):
        name = _data.SCRIPTS[run - 1] if run else ANY
        for a, b in ((start, end - 1),) if not (start <= 0xD800 < end) else ((start, 0xD7FF), (0xE000, end - 1)):
            if a <= b:
                out.setdefault(name, []).append((a, b))
    return {k: tuple(v) for k, v in out.items()}
