"""HF's ``UnicodeScripts`` table: which code points each script HF tells apart holds.

The table (``_scripts_data``) is measured on HF ``tokenizers`` itself (``tools/make_hf_scripts.py``):
HF's own, of an older Unicode than Python's; Hiragana, Katakana and U+30FC count as Han, and a
code point it does not list is ``Any`` (as the space is), which joins the piece before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from mtokspec.runtime.hf import _scripts_data as _data

__all__ = ["ANY", "TOKENIZERS_VERSION", "script_ranges", "ranges_of"]

ANY = ""
"""The name :func:`script_ranges` gives the code points HF's table leaves out (and the space)."""

TOKENIZERS_VERSION = _data.TOKENIZERS_VERSION


@lru_cache(maxsize=1)
def script_ranges() -> dict[str, tuple[tuple[int, int], ...]]:
    """``{script: ((first, last) code point ranges)}``, :data:`ANY` included (surrogates are in no range)."""
    return ranges_of(_data.STARTS, [_data.SCRIPTS[run - 1] if run else ANY for run in _data.RUNS])


def ranges_of(starts: Sequence[int], names: Sequence[str]) -> dict[str, tuple[tuple[int, int], ...]]:
    """The table of runs ``starts[i]`` (up to the next start, the last to U+10FFFF) of script
    ``names[i]`` as :func:`script_ranges` gives it."""
    out: dict[str, list[tuple[int, int]]] = {}
    ends = (*starts[1:], 0x110000)
    for start, end, name in zip(starts, ends, names):
        for a, b in ((start, end - 1),) if not (start <= 0xD800 < end) else ((start, 0xD7FF), (0xE000, end - 1)):
            if a <= b:
                out.setdefault(name, []).append((a, b))
    return {k: tuple(v) for k, v in out.items()}
