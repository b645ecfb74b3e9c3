"""What the chat sandbox checks before an operation runs: the per-render state and its clock,
the weight of values, and the pre-checks of operations that can amplify memory in one C-level step
(operators, ``%`` and ``str.format``, ``str`` methods)."""

from __future__ import annotations

import contextvars
import math
import re
import string
from typing import Any, cast

import jinja2
import jinja2.ext
import jinja2.filters
import jinja2.meta
import jinja2.utils

from mtokspec.chat.bounds import MIN_VALUE_LIMIT, RenderBounds
from mtokspec.errors import ChatTemplateError


# ---------------------------------------------------------------------------------------------
# Limits and per-render state
# ---------------------------------------------------------------------------------------------

#: Largest integer (in bits) that ``*`` / ``**`` may produce.
_MAX_INT_BITS = 100_000
#: Longest ``tojson`` indent accepted (characters, or spaces when given as an int).
_MAX_JSON_INDENT = 256
#: ``lipsum`` bounds.
_MAX_LIPSUM_PARAGRAPHS = 100
_MAX_LIPSUM_WORDS = 1_000
#: Free variables refused unless the caller supplies them: they only occur in SSTI probes.
SSTI_NAMES = frozenset({"config", "request", "session", "url_for", "get_flashed_messages"})


RenderState = RenderBounds
"""The per-render limits the sandbox reads (:class:`mtokspec.chat.bounds.RenderBounds`)."""

_DEFAULT_STATE = RenderState(math.inf, math.inf, MIN_VALUE_LIMIT, None)
STATE: contextvars.ContextVar[RenderState | None] = contextvars.ContextVar(
    "mtokspec_chat_template_state", default=None
)


def _state() -> RenderState:
    st = STATE.get()
    return _DEFAULT_STATE if st is None else st


def _tick() -> None:
    st = STATE.get()
    if st is not None:
        st.tick()


def _too_big(what: str, size: int) -> None:
    limit = _state().value_limit
    if size > limit:
        raise ChatTemplateError(f"{what} would produce {size} characters/items (limit {limit})")


def _weight(value: Any, limit: int | None = None) -> int:
    """Approximate length of ``repr(value)``, counting shared references each time.

    Raises ChatTemplateError as soon as the weight exceeds ``limit`` (default: the value limit),
    so the walk costs O(min(unique nodes, limit)).
    """
    if limit is None:
        limit = _state().value_limit
    memo: dict[int, int] = {}

    def w(o: Any) -> int:
        if isinstance(o, (str, bytes)):
            return len(o) + 2
        if isinstance(o, bool) or o is None:
            return 5
        if isinstance(o, int):
            return o.bit_length() // 3 + 2
        if isinstance(o, jinja2.utils.Namespace):
            try:
                o = object.__getattribute__(o, "_Namespace__attrs")
            except AttributeError:
                return 16
        if not isinstance(o, (list, tuple, dict, set, frozenset)):
            return 16
        key = id(o)
        if key in memo:
            return memo[key]
        memo[key] = 0  # cycles cannot be built in the immutable sandbox; be safe anyway
        total = 2
        if isinstance(o, dict):
            for k, v in o.items():
                total += w(k) + w(v) + 4
                if total > limit:
                    break
        else:
            for e in o:
                total += w(e) + 2
                if total > limit:
                    break
        if total > limit:
            raise ChatTemplateError(f"value too large to render (more than {limit} characters)")
        memo[key] = total
        return total

    total = w(value)
    if total > limit:
        raise ChatTemplateError(f"value too large to render (more than {limit} characters)")
    return total


def _check_value(value: Any) -> Any:
    """Reject a value whose printed form would exceed the value limit; return it unchanged."""
    if isinstance(value, str):
        _too_big("string", len(value))
    elif isinstance(value, (list, tuple, dict, set, frozenset, jinja2.utils.Namespace)):
        _weight(value)
    return value


# ---------------------------------------------------------------------------------------------
# Pre-checks for amplifying operations
# ---------------------------------------------------------------------------------------------

_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")
_DIGITS = re.compile(r"\d+")


def _ints_in(args: Any) -> list[int]:
    if isinstance(args, dict):
        args = list(args.values())
    elif not isinstance(args, (list, tuple)):
        args = [args]
    return [a for a in args if isinstance(a, int) and not isinstance(a, bool)]


def _check_percent_format(fmt: str, args: Any) -> None:
    limit = _state().value_limit
    star = False
    for m in _PERCENT_SPEC.finditer(fmt):
        for g in m.groups():
            if g == "*":
                star = True
            elif g is not None and int(g) > limit:
                _too_big("%-format width", int(g))
    if star:
        for i in _ints_in(args):
            _too_big("%-format width", abs(i))
    _weight(args)


def _check_brace_format(fmt: str, args: tuple, kwargs: dict) -> None:
    try:
        parsed = list(string.Formatter().parse(fmt))
    except (ValueError, TypeError):
        return  # the real call will raise the proper error
    nested = False
    for _literal, _field, spec, _conv in parsed:
        if not spec:
            continue
        if "{" in spec:
            nested = True
        for d in _DIGITS.findall(spec):
            _too_big("format width", int(d))
    if nested:
        for i in _ints_in(list(args) + list(kwargs.values())):
            _too_big("format width", abs(i))
    _weight(args)
    _weight(kwargs)


def _count_occurrences(s: Any, old: Any, count: Any) -> int:
    n = len(s) + 1 if len(old) == 0 else s.count(old)
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        n = min(n, count)
    return n


def _precheck_str_method(obj: Any, args: tuple, kwargs: dict) -> tuple:
    """Bound str/bytes methods that can allocate much more than their inputs."""
    owner = getattr(obj, "__self__", None)
    if not isinstance(owner, (str, bytes)):
        return args
    name = getattr(obj, "__name__", "")
    if name in ("center", "ljust", "rjust", "zfill"):
        width = args[0] if args else kwargs.get("width")
        if isinstance(width, int):
            _too_big(f"str.{name}", width)
    elif name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        if isinstance(size, int):
            _too_big("str.expandtabs", len(owner) + max(size, 0) * cast(Any, owner).count("\t" if isinstance(owner, str) else b"\t"))
    elif name == "replace" and len(args) >= 2:
        old, new = args[0], args[1]
        count = args[2] if len(args) > 2 else kwargs.get("count", -1)
        if isinstance(old, type(owner)) and isinstance(new, type(owner)):
            n = _count_occurrences(owner, old, count)
            _too_big("str.replace", len(owner) + n * max(len(new) - len(old), 0))
    elif name == "join" and args:
        items = args[0]
        if not isinstance(items, (list, tuple)):
            items = list(items)
            args = (items,) + tuple(args[1:])
        total = len(owner) * max(len(items) - 1, 0)
        for it in items:
            total += len(it) if isinstance(it, (str, bytes)) else 0
            if total > _state().value_limit:
                break
        _too_big("str.join", total)
    elif name == "translate" and args and isinstance(args[0], dict):
        longest = max((len(v) for v in args[0].values() if isinstance(v, (str, bytes))), default=1)
        _too_big("str.translate", len(owner) * max(longest, 1))
    elif name in _GROWING:
        _too_big(f"str.{name}", len(owner))
    elif name in ("split", "rsplit", "splitlines"):
        _too_big(f"str.{name}", len(owner) + 4 * _parts(owner, name, args, kwargs))
    return args


#: str/bytes methods whose result may be a few times longer than their owner (``encode``: 4 UTF-8
#: bytes a character; ``hex``: 2 digits and a separator a byte; case mappings: 3 characters, as
#: "ﬃ".upper()): the owner must be within the value limit, so the result is at most 4 times the
#: limit when ``call`` measures it
_GROWING = frozenset({"encode", "hex", "upper", "lower", "casefold", "swapcase", "title", "capitalize"})
_SPACE_RUNS = {str: re.compile(r"\s+"), bytes: re.compile(rb"\s+")}
_LINE_ENDS = {str: re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]"), bytes: re.compile(rb"\r\n|[\n\r]")}


def _parts(owner: Any, name: str, args: tuple, kwargs: dict) -> int:
    """At most how many parts ``owner.<name>(...)`` (split, rsplit, splitlines) returns: counted
    before the call, in one scan, so that the list is weighed before it is made."""
    if name == "splitlines":
        pattern = _LINE_ENDS[type(owner)]
        return sum(1 for _ in pattern.finditer(owner)) + 1
    sep = args[0] if args else kwargs.get("sep")
    limit = args[1] if len(args) > 1 else kwargs.get("maxsplit", -1)
    if isinstance(sep, (str, bytes)) and type(sep) is type(owner) and sep:
        n = owner.count(sep)
    else:
        n = sum(1 for _ in _SPACE_RUNS[type(owner)].finditer(owner))
    if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0:
        n = min(n, limit)
    return n + 1


def _guarded_binop(op: str, left: Any, right: Any) -> None:
    seq = (str, bytes, list, tuple)
    if op == "*":
        if isinstance(left, seq) and isinstance(right, int):
            _too_big("sequence repetition", len(left) * max(right, 0))
            if not isinstance(left, (str, bytes)) and right > 1:
                _weight(left, _state().value_limit // right + 1)
        elif isinstance(right, seq) and isinstance(left, int):
            _too_big("sequence repetition", len(right) * max(left, 0))
            if not isinstance(right, (str, bytes)) and left > 1:
                _weight(right, _state().value_limit // left + 1)
        elif isinstance(left, int) and isinstance(right, int):
            if left.bit_length() + right.bit_length() > _MAX_INT_BITS:
                raise ChatTemplateError(f"integer product too large (limit {_MAX_INT_BITS} bits)")
    elif op == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            if right * abs(left).bit_length() > _MAX_INT_BITS:
                raise ChatTemplateError(f"integer power too large (limit {_MAX_INT_BITS} bits)")
    elif op == "+":
        if isinstance(left, (str, bytes)) and isinstance(right, (str, bytes)):
            _too_big("concatenation", len(left) + len(right))
        elif isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
            _too_big("concatenation", len(left) + len(right))
            limit = _state().value_limit
            _too_big("concatenation", _weight(left, limit) + _weight(right, limit))
    elif op == "%":
        if isinstance(left, str):
            _check_percent_format(left, right)
