"""Corpus-scale work on every core, or on a Dask cluster: a function over many items, results in
the items' order, identical to running it in one process.

    results = ordered_map(case, texts, jobs=4)            # 4 worker processes on this machine
    results = dask_map(case, texts, client=Client(addr))   # a Dask cluster (pip install 'mtokspec[dask]')

``case`` must pickle: tokenizers of both semantics pickle as their file's bytes and options, so a
callable holding them reaches each worker for the price of the files.  Each worker receives it once
and runs it over chunks of items.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, TypeVar

from mtokspec.errors import ArgumentTypeError, ArgumentValueError

__all__ = ["default_jobs", "ordered_map", "dask_map"]

T = TypeVar("T")
R = TypeVar("R")

_worker_fn: Callable[[Any], Any] | None = None


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _init_worker(fn: Callable[[Any], Any]) -> None:
    global _worker_fn
    _worker_fn = fn


def _run_chunk(chunk: Sequence[Any]) -> list[Any]:
    assert _worker_fn is not None
    return [_worker_fn(x) for x in chunk]


def _positive(name: str, value: Any) -> int:
    """``value`` as a count: an int (not a bool) of at least 1."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ArgumentTypeError(f"{name}: expected an int or None, got {type(value).__name__}")
    if value < 1:
        raise ArgumentValueError(f"{name}: expected an int of at least 1, got {value}")
    return value


def _chunks(items: Sequence[T], jobs: int, chunk_size: int | None) -> list[Sequence[T]]:
    size = chunk_size or max(1, min(256, -(-len(items) // (jobs * 8))))
    return [items[k:k + size] for k in range(0, len(items), size)]


def ordered_map(fn: Callable[[T], R], items: Iterable[T], *, jobs: int | None = None,
                progress: Callable[[int, int], None] | None = None, chunk_size: int | None = None) -> list[R]:
    """``[fn(x) for x in items]``, computed by ``jobs`` processes (default: :func:`default_jobs`;
    1, or too few items to share: in this process).  ``progress(done, total)`` is called as items
    finish.  An exception in ``fn`` is raised here.  ``jobs`` and ``chunk_size`` (items per task,
    default: a share of the items) are ints of at least 1 or None (``ArgumentTypeError`` /
    ``ArgumentValueError`` naming the parameter else), ``fn`` a callable."""
    if not callable(fn):
        raise ArgumentTypeError(f"fn: expected a callable, got {type(fn).__name__}")
    if progress is not None and not callable(progress):
        raise ArgumentTypeError(f"progress: expected a callable or None, got {type(progress).__name__}")
    jobs = default_jobs() if jobs is None else _positive("jobs", jobs)
    chunk_size = None if chunk_size is None else _positive("chunk_size", chunk_size)
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise ArgumentTypeError(f"items: expected an iterable, got {type(items).__name__}")
    items = list(items)
    chunks = _chunks(items, jobs, chunk_size)
    if jobs == 1 or len(chunks) < 2:
        out = []
        for chunk in chunks:
            out.extend(fn(x) for x in chunk)
            if progress is not None:
                progress(len(out), len(items))
        return out
    results: list[list[R] | None] = [None] * len(chunks)
    done = 0
    with ProcessPoolExecutor(max_workers=min(jobs, len(chunks)), initializer=_init_worker, initargs=(fn,)) as pool:
        pending = {pool.submit(_run_chunk, chunk): k for k, chunk in enumerate(chunks)}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                k = pending.pop(fut)
                results[k] = fut.result()
                done += len(chunks[k])
                if progress is not None:
                    progress(done, len(items))
    return [r for chunk in results for r in chunk]  # type: ignore[union-attr]


def dask_map(fn: Callable[[T], R], items: Iterable[T], *, client: Any = None, partitions: int | None = None) -> list[R]:
    """``[fn(x) for x in items]`` computed by Dask (a ``dask.bag`` of ``partitions`` parts, in the
    items' order): on ``client`` (a ``distributed.Client``, e.g. connected to a cluster's scheduler)
    when given, else on local processes.  Needs ``dask`` (``pip install 'mtokspec[dask]'``).  The
    arguments are checked as :func:`ordered_map`'s."""
    if not callable(fn):
        raise ArgumentTypeError(f"fn: expected a callable, got {type(fn).__name__}")
    partitions = None if partitions is None else _positive("partitions", partitions)
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise ArgumentTypeError(f"items: expected an iterable, got {type(items).__name__}")
    try:
        import dask.bag as db
    except ImportError:
        raise ImportError("dask_map needs dask: pip install 'mtokspec[dask]'") from None
    items = list(items)
    if not items:
        return []
    bag = db.from_sequence(items, npartitions=partitions or min(len(items), 4 * default_jobs()))
    return list(bag.map(fn).compute(scheduler=client if client is not None else "processes"))
