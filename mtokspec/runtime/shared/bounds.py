"""The work and size bounds of one runtime call, in both semantics.

Every ``encode``/``decode`` runs under a :class:`Budget` of its own (a context variable: one per
thread and per call, never shared):

* **size**: no stage (normalizer, pre-tokenizer, model, post-processor, decoder) may make the text
  longer than ``max(MIN_OUTPUT, max_expansion * input length)`` characters (bytes under the ``mnn``
  semantics); past it the stage raises :class:`~mtokspec.runtime.TokenizerError` naming itself and
  the bound, before it allocates the oversize result.  ``max_expansion`` (default
  :data:`MAX_EXPANSION`) is a keyword of the tokenizers' constructors and ``from_*`` methods;
* **regex time** (HF semantics' ``Split``, the ``mnn`` semantics' ``std::wregex`` path):
  ``REGEX_SECONDS + REGEX_SECONDS_PER_CHAR * input length`` seconds of the calling thread's CPU
  time for all the pattern searches of the call (every segment and pre-tokenizer step), measured
  with ``time.thread_time``: threads competing for the processor do not change the answer (a
  search that ran out of wall-clock time only because other threads ran is run again with more);
* **regex steps** (``mnn`` semantics' own engine): ``REGEX_STEPS + REGEX_STEPS_PER_BYTE * input
  length`` backtracking steps for the whole call, at most ``REGEX_STEPS`` of them at one position
  (a second or two of work; the patterns tokenizers use take a few steps per byte); a class test
  counts its work too (each character a repeated class reads, the items a ``std::wregex`` class
  compares), so a long scan repeated at every position runs out of steps like backtracking does;
* **patterns** (every engine, before it compiles one: HF's ``Split``, the ``mnn`` semantics' own
  engine and its ``std::wregex`` path, ``validate``, ``lint``): :func:`pattern_refusal` of
  :func:`~mtokspec.format.growth.pattern_cost` -- groups nested past :data:`PATTERN_DEPTH`, a
  compiled size (characters and class items times the counted repeats around them) past
  :data:`PATTERN_SIZE` (engines that copy a counted repeat: ``regex``, libstdc++), and for the
  ``mnn`` engine's recursive matcher more than :data:`PATTERN_FRAMES` nested calls -- is refused
  with ``TokenizerError`` (``UndefinedInMnn`` where MNN itself throws or crashes);

A stage called on its own (outside ``encode``/``decode``) gets a budget for its own input.
"""

from __future__ import annotations

import time
from contextvars import ContextVar

from mtokspec.errors import ArgumentTypeError, ArgumentValueError, TokenizerError
from mtokspec.format.growth import MAX_EXPANSION, PATTERN_DEPTH, PATTERN_SIZE, pattern_cost, pattern_refusal

__all__ = ["Budget", "budget", "budget_size", "current", "enter_budget", "exit_budget", "grown", "running_budget", "MAX_EXPANSION", "MIN_OUTPUT", "REGEX_SECONDS",
           "REGEX_SECONDS_PER_CHAR", "REGEX_STEPS", "REGEX_STEPS_PER_BYTE", "checked_max_expansion", "regex_steps",
           "PATTERN_DEPTH", "PATTERN_SIZE", "PATTERN_FRAMES", "PATTERN_CACHE", "pattern_cost", "pattern_refusal",
           "remember"]

MIN_OUTPUT = 1 << 20
REGEX_SECONDS = 1.0
REGEX_SECONDS_PER_CHAR = 2e-6
REGEX_STEPS = 200_000
REGEX_STEPS_PER_BYTE = 10
PATTERN_FRAMES = 600  # the mnn engine's matcher: nested calls a pattern may need (Python's stack)
PATTERN_CACHE = 64
"""How many compiled patterns a process keeps per engine, the newest (:func:`remember`): one
automaton may take hundreds of megabytes, and a process that reads many files must not keep all."""


def remember(cache: dict, key, value, limit: int = PATTERN_CACHE):
    """``cache[key] = value``, the oldest entries dropped past ``limit``; returns ``value``."""
    while len(cache) >= limit:
        cache.pop(next(iter(cache)))
    cache[key] = value
    return value


def regex_steps(n: int) -> int:
    """The backtracking steps a call on an input of ``n`` bytes may spend (see the module doc)."""
    return REGEX_STEPS + REGEX_STEPS_PER_BYTE * n


def checked_max_expansion(value) -> int:
    """``value`` as a ``max_expansion`` keyword: a positive int (``ArgumentTypeError`` /
    ``ArgumentValueError`` else)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"max_expansion: expected an int, got {type(value).__name__}")
    if value < 1:
        raise ArgumentValueError(f"max_expansion: expected an int of at least 1, got {value}")
    return value


class Budget:
    """The bounds of one call (see the module doc).  ``size(stage, n)`` refuses an ``n`` past the
    size bound; ``regex_deadline()`` is the call's one deadline; ``steps`` counts down."""

    __slots__ = ("n", "max_expansion", "limit", "regex_left", "steps", "floor")

    def __init__(self, n: int, max_expansion: int = MAX_EXPANSION):
        self.n = n
        self.max_expansion = max_expansion
        limit = max_expansion * n
        self.limit = limit if limit > MIN_OUTPUT else MIN_OUTPUT
        self.regex_left = REGEX_SECONDS + REGEX_SECONDS_PER_CHAR * n
        self.steps = regex_steps(n)
        self.floor = 0

    def size(self, stage: str, n: int) -> None:
        if n > self.limit:
            raise TokenizerError(
                f"{stage}: the text would grow to a length of {n}, past the bound of {self.limit} (the "
                f"larger of {MIN_OUTPUT} and max_expansion={self.max_expansion} x the input's {self.n}); "
                "pass a larger max_expansion to allow it")

    def regex_seconds(self) -> float:
        return REGEX_SECONDS + REGEX_SECONDS_PER_CHAR * self.n

    def regex(self, search):
        """``search(timeout)``: a pattern search (raising ``TimeoutError`` past ``timeout`` seconds
        of wall-clock time), run within the call's CPU time; ``TimeoutError`` when it needs more."""
        wall = 1.0
        for _ in range(_REGEX_TRIES):
            left = self.regex_left
            if left <= 0:
                raise TimeoutError
            t0 = time.thread_time()
            try:
                result = search(left * wall)
            except TimeoutError:
                used = time.thread_time() - t0
                if used >= left * 0.95:
                    self.regex_left = 0.0
                    raise
                wall *= 4  # other threads had the processor: again, with more wall-clock time
                continue
            self.regex_left = left - (time.thread_time() - t0)
            return result
        raise TimeoutError


_REGEX_TRIES = 5


_CURRENT: ContextVar[Budget | None] = ContextVar("mtokspec_budget", default=None)


def current(n: int) -> Budget:
    """The running call's budget, or a fresh one for an input of ``n`` outside any call."""
    b = _CURRENT.get()
    return Budget(n) if b is None else b


def running_budget() -> Budget | None:
    """The running call's budget, or None outside any call."""
    return _CURRENT.get()


def enter_budget(n: int, max_expansion: int = MAX_EXPANSION):
    """A call's budget made the current one, unless a call is running (an inner call keeps the
    outer budget: one call, one budget): the token :func:`exit_budget` takes (None: nothing set).
    The two halves of :class:`budget`, for a hot path's ``try``/``finally``."""
    if _CURRENT.get() is not None:
        return None
    return _CURRENT.set(Budget(n, max_expansion))


def exit_budget(token) -> None:
    if token is not None:
        _CURRENT.reset(token)


class budget:
    """``with budget(n, max_expansion):`` runs a call under a budget of its own (an inner call
    keeps the outer budget: one call, one budget)."""

    __slots__ = ("n", "max_expansion", "token")

    def __init__(self, n: int, max_expansion: int = MAX_EXPANSION):
        self.n, self.max_expansion = n, max_expansion
        self.token = None

    def __enter__(self) -> Budget:
        self.token = enter_budget(self.n, self.max_expansion)
        return current(self.n)

    def __exit__(self, *exc) -> None:
        exit_budget(self.token)
        self.token = None


def budget_size(stage: str, n: int, input_len: int) -> None:
    """``current(input_len).size(stage, n)``."""
    current(input_len).size(stage, n)


def grown(s, pattern, content) -> int:
    """The length of ``s.replace(pattern, content)`` (a non-empty pattern), without making it."""
    if len(content) <= len(pattern):
        return len(s)
    return len(s) + s.count(pattern) * (len(content) - len(pattern))
