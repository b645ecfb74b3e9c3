"""The chat sandbox's template globals and filters: transformers' (``raise_exception``,
``strftime_now``, ``tojson``) and jinja's size-taking filters, each bounded."""

from __future__ import annotations

import functools
import itertools
import json
import re
from datetime import datetime
from typing import Any, Callable

import jinja2
import jinja2.ext
import jinja2.filters
import jinja2.meta
import jinja2.utils
from jinja2.sandbox import MAX_RANGE

from mtokspec.errors import ChatTemplateError
from mtokspec.chat.sandbox_checks import (
    _MAX_JSON_INDENT, _MAX_LIPSUM_PARAGRAPHS, _MAX_LIPSUM_WORDS, _check_percent_format, _check_value,
    _count_occurrences, _state, _tick, _too_big, _weight,
)


# ---------------------------------------------------------------------------------------------
# Template globals and filters
# ---------------------------------------------------------------------------------------------


def _raise_exception(message: Any) -> None:
    raise ChatTemplateError(str(message))


_STRFTIME_SPEC = re.compile(r"%[-_0^#]*([0-9]*)[EO]?(.?)", re.S)
#: the longest text one strftime directive writes without a width (``%c``, a time zone name)
_STRFTIME_NATURAL = 64


def _strftime_now(format: str) -> str:
    """The current (or the render's fixed) time formatted; the size of the result is bounded
    before formatting (the C library pads to any width a directive asks) and checked after."""
    if not isinstance(format, str):
        raise ChatTemplateError(f"strftime_now expects a format string, got {type(format).__name__}")
    _too_big("strftime_now format", len(format))
    limit = _state().value_limit
    size = len(format)
    for m in _STRFTIME_SPEC.finditer(format):
        width = m.group(1)
        if len(width) > len(str(limit)):
            _too_big("strftime_now width", limit + 1)
        size += max(int(width or 0), _STRFTIME_NATURAL)
        if size > limit:
            _too_big("strftime_now", size)
    now = _state().now
    return _check_value((now if now is not None else datetime.now()).strftime(format))


def _tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
            sort_keys: bool = False) -> str:
    if isinstance(indent, int) and not isinstance(indent, bool) and indent > _MAX_JSON_INDENT:
        raise ChatTemplateError(f"tojson indent too large (limit {_MAX_JSON_INDENT})")
    if isinstance(indent, str) and len(indent) > _MAX_JSON_INDENT:
        raise ChatTemplateError(f"tojson indent too large (limit {_MAX_JSON_INDENT})")
    if separators is not None:
        _weight(separators, _MAX_JSON_INDENT)
    _weight(x)
    out = json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                     sort_keys=sort_keys)
    _too_big("tojson", len(out))
    return out


_orig_lipsum = jinja2.utils.generate_lorem_ipsum


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    if not isinstance(n, int) or not isinstance(max, int) or not isinstance(min, int):
        raise ChatTemplateError("lipsum arguments must be integers")
    if n > _MAX_LIPSUM_PARAGRAPHS or max > _MAX_LIPSUM_WORDS or min > _MAX_LIPSUM_WORDS:
        raise ChatTemplateError("lipsum arguments too large")
    return _orig_lipsum(n=n, html=html, min=min, max=max)


def _wrap_filter(original: Callable, check: Callable[..., None] | None = None,
                 check_result: bool = False, weigh_input: bool = False, check_text: bool = False) -> Callable:
    """Wrap a jinja filter with a pre-check (same arguments, minus the pass_* first argument)
    and/or a check of its result (``check_text``: only a text result, by its length); the jinja
    pass_* marker is preserved by functools.wraps."""
    passes_arg = hasattr(original, "jinja_pass_arg")

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        user_args = args[1:] if passes_arg else args
        if weigh_input and user_args and not isinstance(user_args[0], str):
            _check_value(user_args[0])
        if check is not None:
            check(*user_args, **kwargs)
        result = original(*args, **kwargs)
        if check_result:
            _check_value(result)
        elif check_text and isinstance(result, (str, bytes)):
            _too_big(f"filter {original.__name__}", len(result))
        return result

    return wrapper


def _chk_width(value: Any, width: Any = 80, *a: Any, **k: Any) -> None:
    if isinstance(width, int):
        _too_big("center", width)


def _chk_indent(s: Any, width: Any = 4, first: bool = False, blank: bool = False) -> None:
    if not isinstance(s, str):
        return
    unit = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
    _too_big("indent", len(s) + max(unit, 0) * (s.count("\n") + 1))


def _chk_format(value: Any, *args: Any, **kwargs: Any) -> None:
    if isinstance(value, str):
        _check_percent_format(value, kwargs or args)


def _chk_replace(s: Any, old: Any = None, new: Any = None, count: Any = None) -> None:
    if isinstance(s, str) and isinstance(old, str) and isinstance(new, str):
        n = _count_occurrences(s, old, count if count is not None else -1)
        _too_big("replace", len(s) + n * max(len(new) - len(old), 0))


def _chk_batch(value: Any, linecount: Any = 1, fill_with: Any = None) -> None:
    if fill_with is not None and isinstance(linecount, int):
        _too_big("batch", linecount)


def _chk_slice(value: Any, slices: Any = 1, fill_with: Any = None) -> None:
    if isinstance(slices, int) and slices > MAX_RANGE:
        raise ChatTemplateError(f"slice count too large (limit {MAX_RANGE})")


def _chk_wordwrap(s: Any, width: Any = 79, break_long_words: bool = True,
                  wrapstring: Any = None, break_on_hyphens: bool = True) -> None:
    if isinstance(s, str) and isinstance(width, int):
        sep = len(wrapstring) if isinstance(wrapstring, str) else 1
        _too_big("wordwrap", len(s) + (len(s) // max(width, 1) + 1) * sep)


def _join_filter(original: Callable) -> Callable:
    @functools.wraps(original)
    def wrapper(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
        items = list(value)
        if attribute is not None:
            getter = jinja2.filters.make_attrgetter(eval_ctx.environment, attribute)
            items = [getter(x) for x in items]
        limit = _state().value_limit
        total = len(d) * max(len(items) - 1, 0) if isinstance(d, str) else 0
        for it in items:
            total += len(it) if isinstance(it, str) else _weight(it, limit)
            if total > limit:
                break
        _too_big("join", total)
        return original(eval_ctx, items, d)

    return wrapper


def _sum_filter(original: Callable) -> Callable:
    @functools.wraps(original)
    def wrapper(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
        if isinstance(start, (list, tuple)):
            items = list(iterable)
            if attribute is not None:
                getter = jinja2.filters.make_attrgetter(environment, attribute)
                items = [getter(x) for x in items]
            if all(type(x) is type(start) for x in items):
                # linear instead of quadratic, same result as sum()
                total = len(start) + sum(len(x) for x in items)
                _too_big("sum", total)
                return _check_value(type(start)(itertools.chain(start, *items)))
            return original(environment, items, start=start)
        return original(environment, iterable, attribute=attribute, start=start)

    return wrapper


def _concat(items: list) -> str:
    """``a ~ b ~ ...`` with a size check (same result as jinja's ``str_join``)."""
    parts = []
    total = 0
    for x in items:
        _check_value(x)
        s = str(x)
        total += len(s)
        _too_big("~ concatenation", total)
        parts.append(s)
    return "".join(parts)


def _loop_guard(iterable: Any) -> Any:
    """Wraps the iterable of every ``{% for %}``: checks the deadline at each iteration."""
    for item in iterable:
        _tick()
        yield item


def _finalize(value: Any) -> Any:
    """Applied to every ``{{ ... }}`` value before it is converted with ``str()``."""
    if not isinstance(value, str):
        _check_value(value)
    return value
