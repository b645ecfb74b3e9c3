"""BPE's merge loop in O(n log n), shared by the runtimes' pure paths."""

from __future__ import annotations

from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Any, TypeVar

__all__ = ["merge_lowest_pairs"]

S = TypeVar("S")


def merge_lowest_pairs(syms: list[S], rank: Callable[[S, S], Any], join: Callable[[S, S], S]) -> list[S]:
    """Merge the adjacent pair of lowest ``rank(left, right)`` (``None``: never), the leftmost
    among equals, into ``join(left, right)`` until no pair has a rank.

    HF ``word.rs``'s loop: a heap of ``(rank, position)`` over the symbols in a linked list; an
    entry whose pair has changed since it was pushed is skipped.  ``syms`` is not changed."""
    syms = list(syms)
    n = len(syms)
    nxt = list(range(1, n)) + [-1]
    prv = list(range(-1, n - 1))
    dead = [False] * n
    heap = [(r, i) for i in range(n - 1) if (r := rank(syms[i], syms[i + 1])) is not None]
    heapify(heap)
    while heap:
        best, p = heappop(heap)
        q = nxt[p]
        if dead[p] or q < 0 or rank(syms[p], syms[q]) != best:
            continue  # stale: the pair there has changed
        syms[p] = joined = join(syms[p], syms[q])
        dead[q] = True
        r = nxt[p] = nxt[q]
        if r >= 0:
            prv[r] = p
            k = rank(joined, syms[r])
            if k is not None:
                heappush(heap, (k, p))
        left = prv[p]
        if left >= 0:
            k = rank(syms[left], joined)
            if k is not None:
                heappush(heap, (k, left))
    out = []
    i = 0 if n else -1
    while i >= 0:
        out.append(syms[i])
        i = nxt[i]
    return out
