"""Loading with the cycle collector paused."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cycle collector paused: loading creates ~100k acyclic objects (rows, tokens), and in a
    process holding many live objects each collection they trigger walks all of them."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
