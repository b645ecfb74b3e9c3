"""MNN's filters, tests, string methods and global functions (``jinja.hpp``), on the values of
:mod:`mtokspec.chat.mnn.values`.

Arguments are evaluated lazily, when and as often as the C++ code evaluates them (a macro call in an
argument can have effects); ``ev(expr)`` evaluates one.  An unknown filter passes its input through,
an unknown test is false, an unknown method (or any method of a non-string) gives ``''``.

``bounds`` is the render's :class:`~mtokspec.chat.bounds.RenderBounds`: a result that would weigh
more than its value limit (:func:`~mtokspec.chat.mnn.values.weight`) raises
:class:`~mtokspec.errors.ChatTemplateError` before it is made.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, Callable

from mtokspec.chat.mnn.values import (MnnEngineFailure, Room, is_undefined, json_str_into, py_str_into,
                                      undefined, weight, wrap64)

_WS = b" \n\r\t"


def _strip_set(s: bytes, chars: bytes, left: bool, right: bool) -> bytes:
    """``find_first_not_of`` / ``find_last_not_of`` over a byte set."""
    a, b = 0, len(s)
    if left:
        while a < b and s[a] in chars:
            a += 1
        if a == b:
            return b""
    if right:
        while b > a and s[b - 1] in chars:
            b -= 1
        if b == 0:
            return b""
    return s[a:b]


def _get_str(v: Any) -> bytes:
    """``json::get<std::string>()``: '' for a non-string."""
    return v if type(v) is bytes else b""


def get_long(v: Any, what: str) -> int:
    """``json::get<long>()``: 0 for null and non-numbers; a double has no defined result."""
    if type(v) is int:
        return v
    if type(v) is float:
        raise MnnEngineFailure("mnn-jinja-print-non-string",
                               f"{what} is a double: rapidjson's GetInt64() asserts (or reads the "
                               f"double's bits) there")
    return 0


# --- filters ---------------------------------------------------------------------------------------

def _room(bounds: Any, what: str) -> Room:
    """A room for a value made by ``what``: up to the value limit."""
    return Room(bounds.value_limit, bounds, lambda: bounds.too_large(what))


def _bounded(size: int, bounds: Any, what: str) -> None:
    if size > bounds.value_limit:
        raise bounds.too_large(what, size)


def checked(value: Any, bounds: Any, what: str) -> Any:
    """``value``, unless it weighs more than the value limit."""
    limit = bounds.value_limit
    if type(value) in (list, dict) and weight(value, limit) > limit:
        raise bounds.too_large(what)
    return value


def apply_filter(name: bytes, val: Any, args: list, ev: Callable[[Any], Any], bounds: Any) -> Any:
    """``FilterExpr::evaluate`` after the left side: ``args`` are ``(name, expr)`` pairs."""
    t = type(val)
    if name == b"tojson":
        indent = -1
        for an, ae in args:
            if an == b"indent":
                v = ev(ae)
                if type(v) is int:
                    indent = wrap32(v)
        room = _room(bounds, f"tojson(indent={indent})" if indent >= 0 else "tojson")
        json_str_into(val, room, indent)
        return bytes(room.out)
    if name == b"string":
        room = _room(bounds, "string")
        py_str_into(val, room)
        return bytes(room.out)
    if name == b"capitalize":
        if t is bytes:
            return (val[:1].upper() + val[1:].lower()) if val else val
        return val
    if name == b"length":
        if t in (list, dict, bytes):
            return len(val)
        return 0
    if name == b"trim":
        if t is bytes:
            return _strip_set(val, _WS, True, True)
        return val
    if name == b"items":
        if t is dict:
            _bounded(weight(val, bounds.value_limit) + len(val), bounds, "items")
            return [[k, v] for k, v in val.items()]
        return []
    if name == b"lower":
        return val.lower() if t is bytes else val
    if name == b"upper":
        return val.upper() if t is bytes else val
    if name == b"map":
        if t is list:
            attr = b""
            for an, ae in args:
                if an == b"attribute" or (an == b"" and attr == b""):
                    v = ev(ae)
                    if type(v) is bytes:
                        attr = v
            if not attr:
                return val
            return checked([item[attr] if type(item) is dict and attr in item else None for item in val],
                           bounds, "map")
        return val
    if name == b"join":
        if t is list:
            sep = b""
            if args:
                v = ev(args[0][1])
                if type(v) is bytes:
                    sep = v
            room = _room(bounds, "join")
            for i, item in enumerate(val):
                if i:
                    room.put(sep)
                room.item()
                if type(item) is bytes:
                    room.put(item)
                else:
                    py_str_into(item, room)
            return bytes(room.out)
        return val
    return val


def wrap32(v: int) -> int:
    """``json::get<int>()`` of an integer: the low 32 bits, signed."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


# --- tests -----------------------------------------------------------------------------------------

def apply_test(name: bytes, val: Any) -> bool:
    """``TestExpr::evaluate`` before ``not``."""
    t = type(val)
    if name == b"defined":
        return not is_undefined(val)
    if name == b"undefined":
        return is_undefined(val)
    if name == b"none":
        return val is None
    if name == b"boolean":
        return t is bool
    if name == b"string":
        return t is bytes
    if name == b"number":
        return t in (int, float)
    if name in (b"sequence", b"iterable"):
        return t in (list, bytes)
    if name == b"mapping":
        return t is dict
    if name == b"true":
        return val is True
    if name == b"false":
        return val is False
    return False


# --- string methods --------------------------------------------------------------------------------

def call_method(obj: Any, name: bytes, args: list, ev: Callable[[Any], Any], bounds: Any) -> Any:
    """``MethodCallExpr::evaluate`` after the object: only methods of strings exist."""
    if type(obj) is not bytes:
        return b""
    s = obj
    if name == b"startswith":
        if args:
            return s.startswith(_get_str(ev(args[0])))
    elif name == b"endswith":
        if args:
            return s.endswith(_get_str(ev(args[0])))
    elif name == b"split":
        delim = _get_str(ev(args[0])) if args else b" "
        if not delim:
            raise MnnEngineFailure(
                "mnn-jinja-method-arguments",
                "split('') never ends on MNN (the empty separator is found at the same place "
                "forever): memory runs out")
        parts = s.count(delim) + 1
        _bounded(1 + len(s) - (parts - 1) * len(delim) + parts, bounds, "split")
        return s.split(delim)
    elif name == b"lstrip":
        chars = _get_str(ev(args[0])) if args else _WS
        return _strip_set(s, chars, True, False)
    elif name == b"rstrip":
        chars = _get_str(ev(args[0])) if args else _WS
        return _strip_set(s, chars, False, True)
    elif name == b"strip":
        chars = _get_str(ev(args[0])) if args else _WS
        return _strip_set(s, chars, True, True)
    elif name == b"replace":
        if len(args) >= 2:
            old = _get_str(ev(args[0]))
            new = _get_str(ev(args[1]))
            if not old:
                return s
            _bounded(len(s) + s.count(old) * (len(new) - len(old)), bounds, "replace")
            return s.replace(old, new)
    return b""


# --- global functions ------------------------------------------------------------------------------

FUNCTIONS = (b"range", b"namespace", b"strftime_now")

#: glibc strftime conversions (``%`` then one of these prints a field; anything else is copied).
_CONVERSIONS = frozenset(b"aAbBcCdDeFgGhHIjklmMnprRsStTuUVwWxXyYzZ+")


def strftime(fmt: bytes, now: datetime, room: Room | None = None) -> bytes:
    """``std::put_time(&tm, fmt)`` in the C locale: libstdc++ hands each ``%[E|O]c`` to strftime
    on its own, so glibc flags (``%-d``) are not conversions and come out as written (written into
    ``room`` when given, which bounds it)."""
    tm = now.timetuple()
    room = Room() if room is None else room
    out = room.out
    i, n = 0, len(fmt)
    while i < n:
        room.fits(0)
        room.item()
        c = fmt[i]
        if c != 37:
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= n:
            break
        mod = b""
        conv = fmt[i]
        if conv in b"EO":
            i += 1
            if i >= n:
                break
            mod, conv = bytes((conv,)), fmt[i]
        i += 1
        spec = b"%" + mod + bytes((conv,))
        if conv == 37 and not mod:
            out += b"%"
        elif conv in _CONVERSIONS:
            out += time.strftime(spec.decode("latin-1"), tm).encode("utf-8", "surrogateescape")
        else:
            out += spec  # glibc copies a conversion it does not know, '%' included
    room.fits(0)
    return bytes(out)


def call_function(name: bytes, args: list[tuple[bytes, Any]], now: Callable[[], datetime], bounds: Any) -> Any:
    """``range``, ``namespace`` and ``strftime_now`` with their arguments evaluated."""
    range_limit = bounds.value_limit
    if name == b"range":
        vals = [get_long(v, "a range() argument") for _, v in args]
        start, stop, step = 0, 0, 1
        if len(vals) == 1:
            stop = vals[0]
        elif len(vals) == 2:
            start, stop = vals
        elif len(vals) >= 3:
            start, stop, step = vals[:3]
        r = range(start, stop, step) if step else range(0)
        if len(r) > range_limit:
            raise MnnEngineFailure(
                "mnn-jinja-large-range",
                f"range() of {len(r)} numbers: MNN builds the whole list (beyond this renderer's "
                f"limit of {range_limit} values)")
        return list(r)
    if name == b"namespace":
        ns: dict = {}
        for an, v in args:
            if an:
                ns[an] = v
        return checked(ns, bounds, "namespace()")
    fmt = b"%Y-%m-%d"
    if args:
        fmt = _get_str(args[0][1])
    return strftime(fmt, now(), _room(bounds, "strftime_now()"))


__all__ = ["apply_filter", "apply_test", "call_method", "call_function", "FUNCTIONS", "strftime",
           "undefined", "wrap64", "get_long"]
