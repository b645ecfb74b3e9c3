"""The models' link to the compiled module (``mtokspec/speedups.py``): a model's core, built on its
first encode, or False when the module is absent or turned off, or the core cannot hold the model's
tables (then the pure path runs, as it would without the module); and the loop over pieces."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from mtokspec import speedups

__all__ = ["CompiledCore", "extend_pieces"]


def extend_pieces(pieces, cache: dict, tokenize, out: list[int]) -> None:
    """For each piece, ``cache[piece]`` or ``tokenize(piece)`` (which fills the cache), its ids
    appended to ``out``; the compiled module's ``encode_pieces`` runs the same loop."""
    sp = speedups.module()
    if sp is not None:
        sp.encode_pieces(pieces, cache, tokenize, out)
        return
    get = cache.get
    for p in pieces:
        r = get(p)
        if r is None:
            r = tokenize(p)
        out += r


class CompiledCore:
    """A mixin for models with a compiled core: ``_core`` is None until ``_accel()`` decides."""

    __slots__ = ()

    _core: Any

    def _make_core(self, sp: ModuleType) -> Any:
        raise NotImplementedError

    def _accel(self) -> Any:
        """The compiled core (built on first use), or False for the pure path."""
        core = self._core
        if core is None:
            core = False
            sp = speedups.module()
            if sp is not None:
                try:
                    core = self._make_core(sp)
                except (TypeError, ValueError, OverflowError):  # a table the core cannot hold
                    core = False
            self._core = core
        return core
