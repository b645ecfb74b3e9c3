"""One call under the fuzzer's bounds: CPU time (and, with ``--memory``, the peak of allocations);
only an ``mtokspec.Error`` may be raised."""

from __future__ import annotations

import builtins
import contextlib
import gc
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path


import mtokspec


ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"

SLOW_CALL_SECONDS = 1.0
"""The bound on one call with hostile input (the issue's contract)."""


class TooSlow(AssertionError):
    """A call took longer than the bound."""


MEMORY_LIMIT: int | None = None
"""With ``--memory MB``: the bound on the peak of memory allocated during one call (tracemalloc)."""


class TooBig(AssertionError):
    """A call allocated more than the bound."""


class Clock:
    """The CPU and wall-clock seconds a :func:`work_clock` block took (set when it ends)."""

    cpu = 0.0
    wall = 0.0


@contextlib.contextmanager
def work_clock() -> Iterator[Clock]:
    """Time the block's own work: the process's CPU time (which other processes on a shared CI
    machine do not stretch) and the wall clock, with the cyclic garbage collector paused so that a
    collection of the whole test session's heap is not billed to the call under test."""
    clock = Clock()
    collecting = gc.isenabled()
    gc.disable()
    start, wall_start = time.process_time(), time.perf_counter()
    try:
        yield clock
    finally:
        clock.cpu, clock.wall = time.process_time() - start, time.perf_counter() - wall_start
        if collecting:
            gc.enable()


@contextlib.contextmanager
def timed(what: str, limit: float):
    """Bound the work of the block by :func:`work_clock`'s CPU time; the wall clock still bounds
    waiting (ten times the limit), where no CPU time is spent."""
    if MEMORY_LIMIT is not None:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
    with work_clock() as clock:
        yield
    if MEMORY_LIMIT is not None:
        peak = tracemalloc.get_traced_memory()[1] - base
        if peak > MEMORY_LIMIT:
            raise TooBig(f"{what} allocated {peak / 2**20:.1f} MB (bound {MEMORY_LIMIT / 2**20:.0f} MB)")
        limit *= 4  # tracing slows every allocation down
    if clock.cpu > limit:
        raise TooSlow(f"{what} took {clock.cpu:.2f} s of CPU time (bound {limit} s)")
    if clock.wall > 10 * limit:
        raise TooSlow(f"{what} took {clock.wall:.2f} s (bound {10 * limit} s while waiting)")


def refused_or_ok(what: str, fn: Callable, *args, limit: float = SLOW_CALL_SECONDS, **kw):
    """``fn(*args, **kw)``, or None when it raised an ``mtokspec.Error``; anything else escapes."""
    with timed(what, limit):
        try:
            return fn(*args, **kw)
        except mtokspec.Error:
            return None


# hypothesis reports several distinct failures as an exception group (built in from Python 3.11)
_GROUP = getattr(builtins, "BaseExceptionGroup", ())


def _leaves(e: BaseException) -> list[BaseException]:
    if isinstance(e, _GROUP):
        return [x for sub in e.exceptions for x in _leaves(sub)]
    return [e]


def describe(e: BaseException) -> str:
    """``Type: message at file:line`` (the innermost frame inside mtokspec), and the shrunk input."""
    import traceback
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "/mtokspec/" in f.filename]
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno} ({frames[-1].name})" if frames else ""
    notes = " | ".join(getattr(e, "__notes__", []))[:600]
    return f"{type(e).__name__}: {str(e)[:300]}{where} | {notes}"
