"""The bounds of one chat-template render, declared once for both engines (the transformers
sandbox, :mod:`mtokspec.chat.sandbox`, and MNN's engine, :mod:`mtokspec.chat.mnn`) and the lint.

* **time**: ``timeout_seconds`` (default :data:`TIMEOUT_SECONDS`) of wall-clock time from the
  start of the render, checked cooperatively (:meth:`RenderBounds.tick`) at every node, loop
  iteration, call and inside every loop over a value's items;
* **output**: ``max_output_chars`` (default :data:`MAX_OUTPUT_CHARS`) characters (MNN: bytes),
  refused as soon as the output would grow past it;
* **values**: no value the template makes may weigh more than :meth:`RenderBounds.value_limit`
  (the larger of ``max_output_chars`` and :data:`MIN_VALUE_LIMIT`): characters of strings, items
  of containers; refused before the value is built;
* **source**: templates longer than :data:`MAX_TEMPLATE_CHARS` are refused (compiling is not
  covered by the clock).

Past a bound: :class:`~mtokspec.errors.ChatTemplateError`.
"""

from __future__ import annotations

import math
import time
from datetime import datetime

from mtokspec.errors import ChatTemplateError

__all__ = ["MAX_OUTPUT_CHARS", "MAX_TEMPLATE_CHARS", "MIN_VALUE_LIMIT", "RenderBounds", "TIMEOUT_SECONDS"]

#: default ``max_output_chars`` of the renderers
MAX_OUTPUT_CHARS = 1_000_000
#: default ``timeout_seconds`` of the renderers
TIMEOUT_SECONDS = 5.0
#: floor of the weight of any single value (characters of strings, items of containers)
MIN_VALUE_LIMIT = 1_000_000
#: longest template source accepted (characters; MNN's engine: bytes).  Compiling is not covered by
#: the clock and jinja2 takes 5-15 us a character (a dense 814 KB template: 12 s of CPU), so this is
#: what bounds it (a few seconds); the longest template of the reference corpus has 42 KB
MAX_TEMPLATE_CHARS = 262_144


class RenderBounds:
    """The bounds of one render (see the module doc): ``deadline`` (``time.monotonic()``),
    ``timeout`` (for messages), ``value_limit``, ``max_output`` and ``now`` (the frozen clock of
    ``strftime_now``, or None)."""

    __slots__ = ("deadline", "timeout", "value_limit", "now", "max_output")

    def __init__(self, deadline: float, timeout: float, value_limit: int, now: datetime | None,
                 max_output: float = math.inf):
        self.deadline = deadline
        self.timeout = timeout
        self.value_limit = value_limit
        self.now = now
        self.max_output = max_output

    @classmethod
    def start(cls, max_output_chars: int, timeout_seconds: float, now: datetime | None) -> RenderBounds:
        """The bounds of a render starting now (arguments checked by ``checked_limits``)."""
        return cls(time.monotonic() + timeout_seconds, timeout_seconds,
                   max(max_output_chars, MIN_VALUE_LIMIT), now, max_output_chars)

    def tick(self) -> None:
        """Raise :class:`ChatTemplateError` past the deadline."""
        if time.monotonic() > self.deadline:
            raise ChatTemplateError(f"rendering exceeded the time limit of {self.timeout} s")

    def too_large(self, what: str, size: int | None = None) -> ChatTemplateError:
        """The error for a value past the value limit (``size`` when known)."""
        made = f" ({size})" if size is not None else ""
        return ChatTemplateError(f"{what} too large to render{made}: more than the value limit of "
                                 f"{self.value_limit} characters/items")

    def output_exceeded(self) -> ChatTemplateError:
        return ChatTemplateError(f"output exceeds max_output_chars={self.max_output}")
