"""Hostile inputs and the bound every hostile case must keep (issue 33), declared once.

A hostile case ends within :data:`CASE_SECONDS` of CPU time (the wall clock may stretch
:data:`WAIT_FACTOR` times more on a shared machine) and allocates at most :data:`CASE_MEMORY`
bytes of address space, with an answer or an ``mtokspec.Error`` (the CLI: exit 0, 1 or 2, never a
traceback).  :func:`bounded` enforces both around a call in this process (the address space is
capped for the call, so a blow-up is a ``MemoryError`` that fails the test instead of the
machine); :func:`tests._support.bounded_run.run_bounded` with ``memory=CASE_MEMORY`` runs a
command in a child process under the same cap.

:func:`hostile_templates` draws chat templates built from what makes a Jinja engine blow up:
container literals repeating big values, ``range`` of every size, string growth (``~``, ``+``,
``replace``, ``join``, doubling in a loop), printing and ``tojson``/``string`` of big values,
integer literals past every limit, deep nesting, recursion and long loops.
"""

from __future__ import annotations

import contextlib
import resource
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import strategies as st

import mtokspec
from tools.fuzz.calls import work_clock

CASE_SECONDS = 10.0
"""CPU seconds one hostile case may take (the issue's bound)."""
CASE_MEMORY = 2 << 30
"""Bytes of address space one hostile case may add (the issue's bound: 2 GB)."""
WAIT_FACTOR = 10
"""How much longer than its CPU bound a case may take on the wall clock (other processes run)."""
RENDER_SECONDS = 0.5
"""The ``timeout_seconds`` the property tests give the renderers (the default, 5 s, is for people)."""
RENDER_OVERRUN = 2.0
"""CPU seconds a render may run past its own time limit: one operation between two clock checks."""

MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Hi a,b"},
            {"role": "assistant", "content": "ok"}]


def _address_space() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmSize in /proc/self/status")


@contextlib.contextmanager
def bounded(what: str, seconds: float = CASE_SECONDS, memory: int = CASE_MEMORY) -> Iterator[None]:
    """The block may take ``seconds`` of CPU time (``WAIT_FACTOR`` times more of wall time) and
    grow the address space by ``memory`` bytes (past it: ``MemoryError``, which fails the test).
    Timed by ``tools/fuzz``'s :func:`~tools.fuzz.calls.work_clock` (the cyclic garbage collector
    paused: a collection of the whole test session's heap is not the call's work; one billed 15 s
    to a render that takes 0.8 s)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _address_space() + memory
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        with work_clock() as clock:
            yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert clock.cpu <= seconds, f"{what}: {clock.cpu:.2f} s of CPU time (bound {seconds} s)"
    assert clock.wall <= seconds * WAIT_FACTOR, f"{what}: {clock.wall:.2f} s (bound {seconds * WAIT_FACTOR} s)"


def outcome(what: str, fn: Callable[..., Any], *args: Any, seconds: float = CASE_SECONDS, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` under :func:`bounded`: its result, or the ``mtokspec.Error`` it
    raised (returned, not raised); any other exception escapes and fails the test."""
    with bounded(what, seconds):
        try:
            return fn(*args, **kwargs)
        except mtokspec.Error as e:
            return e


# --- templates ---------------------------------------------------------------------------------------

BIG_DIGITS = [19, 20, 4300, 4301, 5000, 20000]
"""Lengths of integer literals: int64's, past it, Python's int() limit either side, far past."""
RANGES = [0, 3, 1000, 999_999, 1_000_001, 3_000_000, -5]


def big_string_setup(n: int = 101_000) -> str:
    """``{% set s %}``: a string of about 6 bytes a number (``range(101000)|join(',')``: 609 KB)."""
    return "{% set s = range(" + str(n) + ")|join(',') %}"


def repeated_literal(item: str, times: int, kind: str = "list") -> str:
    """A list (or dict) literal holding ``item`` ``times`` times."""
    if kind == "list":
        return "[" + ", ".join([item] * times) + "]"
    return "{" + ", ".join(f"'k{i}': {item}" for i in range(times)) + "}"


_ATOMS = st.one_of(
    st.integers(-3, 300).map(str),
    st.sampled_from(BIG_DIGITS).map(lambda n: "7" * n),
    st.sampled_from(["''", "'a'", "'a,b'", "'\u00e9'", "'\\n'", "'\"'"]),
    st.sampled_from(["s", "x", "ns.a", "messages", "messages[0].content", "messages[1]", "none", "true",
                     "loop.index", "undefined_name"]),
    st.sampled_from(RANGES).map(lambda n: f"range({n})"),
    st.sampled_from(["strftime_now('%c')", "strftime_now('%Y' ~ s)"]),
)

_UNARY = ["({})|tojson", "({})|tojson(indent=2)", "({})|tojson(indent=100000)", "({})|tojson(indent=2147483647)",
          "({})|string", "({})|join(',')", "({})|join(s)", "({})|length", "({})|items", "({})|map(attribute='content')",
          "({})|trim", "({})|upper", "namespace(a={})", "[{}]", "{{'k': {}}}", "({})[::-1]", "({})[1:]", "({})[::0]",
          "({})|first", "not ({})"]
_BINARY = ["({}) ~ ({})", "({}) + ({})", "({}) - ({})", "({}) in ({})", "({}) == ({})", "({}) if ({}) else s",
           "[{}, {}]"]


def _expressions(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    unary = st.tuples(st.sampled_from(_UNARY), children).map(lambda p: p[0].format(p[1]))
    binary = st.tuples(st.sampled_from(_BINARY), children, children).map(lambda p: p[0].format(p[1], p[2]))
    times = st.sampled_from([2, 3, 200, 3000])
    kind = st.sampled_from(["list", "dict"])
    repeat = st.tuples(children, times, kind).map(
        lambda p: repeated_literal(p[0], max(1, min(p[1], 200_000 // max(1, len(p[0])))), p[2]))
    return st.one_of(unary, binary, repeat)


EXPRESSIONS = st.recursive(_ATOMS, _expressions, max_leaves=6)

_METHODS = ["s.split(',')", "s.split('')", "s.replace('0', s)", "s.replace(',', 'abcdefgh')", "s.strip()",
            "s.upper()", "s[::-1]", "x[0]", "ns.a ~ ns.a"]


@st.composite
def _statement(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.integers(0, 9 if depth < 2 else 5))
    e = draw(st.one_of(EXPRESSIONS, st.sampled_from(_METHODS)))
    if kind == 0:
        return "{{ " + e + " }}"
    if kind == 1:
        return "{% set s = " + e + " %}"
    if kind == 2:
        return "{% set x = " + e + " %}"
    if kind == 3:
        return "{% set ns = namespace(a=" + e + ") %}"
    if kind == 4:
        return "{% set ns.a = " + e + " %}"
    if kind == 5:
        return "{{ " + e + " }}{{ " + e + " }}"
    body = "".join(draw(st.lists(_statement(depth + 1), max_size=2)))
    if kind in (6, 7):
        return "{% for i in " + e + " %}" + body + "{% endfor %}"
    if kind == 8:
        return "{% if " + e + " %}" + body + "{% endif %}"
    return "{% macro f(n) %}" + body + "{% endmacro %}{{ f(" + e + ") }}"


_IDIOMS = [
    # doubling a string, a list and a namespace value in a loop
    "{% set ns = namespace(a='ab') %}{% for i in range(64) %}{% set ns.a = ns.a ~ ns.a %}{% endfor %}{{ ns.a|length }}",
    "{% set ns = namespace(a=['ab']) %}{% for i in range(64) %}{% set ns.a = ns.a + ns.a %}{% endfor %}{{ ns.a|length }}",
    "{% set ns = namespace(a=[]) %}{% for i in range(100000) %}{% set ns.a = [ns.a] %}{% endfor %}{{ ns.a }}",
    # long loops with nothing in them, nested
    "{% for a in range(999999) %}{% for b in range(999999) %}{% endfor %}{% endfor %}",
    "{% set r = range(999999) %}{% for a in r %}{% for b in r if b > a %}{% endfor %}{% endfor %}",
    # recursion and nesting
    "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
    "{{ " + "[" * 3000 + "1" + "]" * 3000 + " }}",
    "{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}",
    "{% if true %}" * 2000 + "x" + "{% endif %}" * 2000,
    # printing one big value many times, or a list of it
    big_string_setup() + "{% for i in range(3000) %}{{ s }}{% endfor %}",
    big_string_setup() + "{{ " + repeated_literal("s", 3000) + " }}",
    big_string_setup() + "{{ " + repeated_literal("s", 3000) + "|tojson }}",
    big_string_setup() + "{{ s|tojson(indent=4) }}{{ [s, s]|string }}{{ s.split(',')|tojson(indent=1000) }}",
]


@st.composite
def hostile_templates(draw: st.DrawFn) -> str:
    """A chat template of hostile constructs (see the module doc), at most a few hundred KB."""
    parts = []
    if draw(st.booleans()):
        parts.append(big_string_setup(draw(st.sampled_from([10, 1000, 101_000]))))
    if draw(st.integers(0, 4)) == 0:
        parts.append(draw(st.sampled_from(_IDIOMS)))
    parts += draw(st.lists(_statement(), min_size=1, max_size=4))
    return "".join(parts)


def issue_templates() -> dict[str, str]:
    """The chat templates of issue 33, by name."""
    big, s609 = "7" * 5000, big_string_setup()
    listed = repeated_literal("s", 3000)
    return {
        "list_of_200_ranges": "{{ " + repeated_literal("range(999999)", 200) + "|length }}",
        "dict_of_200_ranges": "{{ " + repeated_literal("range(999999)", 200, "dict") + "|length }}",
        "print_609k_3000_times": s609 + "{{ " + listed + " }}",
        "tojson_609k_3000_times": s609 + "{{ " + listed + "|tojson }}",
        "string_609k_3000_times": s609 + "{{ " + listed + "|string }}",
        "tilde_609k_3000_times": s609 + "{{ " + listed + " ~ '' }}",
        "integer_of_5000_digits": "{{ " + big + " }}",
    }
