"""Values of MNN's Jinja engine and how it compares and prints them.

MNN's engine holds every value as a ``ujson::json`` over rapidjson.  Here: ``None``, ``bool``,
``int`` (int64, wrapping), ``float``, ``bytes`` (strings are byte strings: every string operation
of the engine works on UTF-8 bytes), ``list`` and ``dict`` (keys ``bytes``, insertion order, as
rapidjson keeps members).  The engine's *undefined* is an object with the single member
``__jinja_undefined__: true`` and behaves as that object everywhere except where the engine tests
for it (:func:`is_undefined`).

Printing follows ``jinja.hpp``: :func:`dump` is rapidjson's compact writer (``{{ }}`` of a
non-string), :func:`py_str` / :func:`py_repr` are ``to_python_string`` / ``to_python_repr`` (``~``,
``|string``, ``|join``), :func:`json_str` is ``to_json_string`` (``|tojson``: keys sorted by the
tool-schema priority, then bytewise; keys written unescaped).  Each writes into a :class:`Room`
(``*_into``), which refuses to grow past its size before the bytes are made and checks the
render's clock as items are written; :func:`weight` is the size every value the engine makes is
bounded by.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any, Callable

from mtokspec.errors import ChatTemplateError

UNDEFINED_KEY = b"__jinja_undefined__"
_INT64 = 1 << 63


class MnnEngineFailure(ChatTemplateError):
    """MNN's engine would not return a prompt here: it loops forever, runs out of memory or
    crashes.  ``rule`` is the divergence rule (``mtokspec/divergences/rules/chat_template.py``) that
    names the construct."""

    def __init__(self, rule: str, message: str):
        super().__init__(f"{message} [{rule}]")
        self.rule = rule


def undefined() -> dict:
    """A fresh undefined value (``undefined_init()``)."""
    return {UNDEFINED_KEY: True}


def is_undefined(v: Any) -> bool:
    return type(v) is dict and UNDEFINED_KEY in v


def wrap64(i: int) -> int:
    """``int64_t`` arithmetic: wrap around."""
    return ((i + _INT64) % (1 << 64)) - _INT64


def truthy(v: Any) -> bool:
    """``is_truthy``."""
    if is_undefined(v):
        return False
    if v is None:
        return False
    if type(v) is bool:
        return v
    if type(v) in (bytes, list, dict):
        return len(v) > 0
    return v != 0


def _rank(v: Any) -> int:
    """rapidjson's type order: null, false, true, object, array, string, number."""
    if v is None:
        return 0
    t = type(v)
    if t is bool:
        return 2 if v else 1
    if t is dict:
        return 3
    if t is list:
        return 4
    if t is bytes:
        return 5
    return 6


def _cstr(b: bytes) -> bytes:
    """What ``strcmp`` sees: up to the first NUL."""
    i = b.find(b"\0")
    return b if i < 0 else b[:i]


def compare(a: Any, b: Any) -> int:
    """``ujson::json::compare``: -1, 0 or 1 (objects of the same size compare equal)."""
    ra, rb = _rank(a), _rank(b)
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == 6:
        if type(a) is float or type(b) is float:
            x, y = float(a), float(b)
        else:
            x, y = a, b
        return -1 if x < y else (1 if x > y else 0)
    if ra == 5:
        x, y = _cstr(a), _cstr(b)
        return -1 if x < y else (1 if x > y else 0)
    if ra == 4:
        if len(a) != len(b):
            return -1 if len(a) < len(b) else 1
        for x, y in zip(a, b):
            c = compare(x, y)
            if c:
                return c
        return 0
    if ra == 3:
        if len(a) != len(b):
            return -1 if len(a) < len(b) else 1
        return 0
    return 0


def equal(a: Any, b: Any) -> bool:
    return compare(a, b) == 0


# --- the writers: rapidjson's, to_python_string / to_python_repr, to_json_string -------------------

class Room:
    """Where a value is written: ``out`` may grow by ``room`` bytes, past which :meth:`put` raises
    ``error()`` before writing; ``bounds`` (a :class:`~mtokspec.chat.bounds.RenderBounds`, or None)
    has its clock checked every 4,096 items written.  ``Room()`` is unbounded."""

    __slots__ = ("out", "end", "bounds", "error", "items")

    def __init__(self, room: float = math.inf, bounds: Any = None, error: Callable[[], Exception] | None = None,
                 out: bytearray | None = None):
        self.out = bytearray() if out is None else out
        self.end = len(self.out) + room
        self.bounds = bounds
        self.error = error
        self.items = 0

    def fits(self, n: int) -> None:
        """Raise unless ``n`` more bytes fit."""
        if len(self.out) + n > self.end:
            raise self.error() if self.error is not None else ChatTemplateError("value too large")

    def put(self, b: bytes) -> None:
        if len(self.out) + len(b) > self.end:
            raise self.error() if self.error is not None else ChatTemplateError("value too large")
        self.out += b

    def item(self) -> None:
        self.items += 1
        if not self.items & 4095 and self.bounds is not None:
            self.bounds.tick()


_HEX = b"0123456789ABCDEF"
_SHORT = {8: b"\\b", 9: b"\\t", 10: b"\\n", 12: b"\\f", 13: b"\\r", 0x22: b'\\"', 0x5C: b"\\\\"}
_JSON_ESCAPES = {bytes((c,)): _SHORT.get(c, b"\\u00" + bytes((_HEX[c >> 4], _HEX[c & 15])))
                 for c in (*range(0x20), 0x22, 0x5C)}
_JSON_ESCAPED = re.compile(rb'[\x00-\x1f"\\]')


def json_string(s: bytes) -> bytes:
    """A string as rapidjson's Writer writes it (only controls, '"' and '\\' escaped)."""
    return b'"' + _JSON_ESCAPED.sub(lambda m: _JSON_ESCAPES[m.group()], s) + b'"'


class _NanInf(Exception):
    """rapidjson's writer refuses NaN and infinities: the output stops there."""


def format_double(d: float) -> bytes:
    """rapidjson's ``dtoa`` (Grisu2 shortest digits, then ``Prettify``)."""
    if d != d or d in (float("inf"), float("-inf")):
        raise _NanInf
    if d == 0:
        return b"-0.0" if str(d).startswith("-") else b"0.0"
    sign = b"-" if d < 0 else b""
    t = Decimal(repr(abs(d))).normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    length, k = len(digits), int(t.exponent)
    kk = length + k
    if 0 <= k and kk <= 21:
        s = digits + "0" * k + ".0"
    elif 0 < kk <= 21:
        s = digits[:kk] + "." + digits[kk:]
    elif -6 < kk <= 0:
        s = "0." + "0" * (-kk) + digits
    elif kk < -324:
        s = "0.0"
    elif length == 1:
        s = digits + "e" + str(kk - 1)
    else:
        s = digits[0] + "." + digits[1:] + "e" + str(kk - 1)
    return sign + s.encode()


def _dump(v: Any, room: Room) -> None:
    t = type(v)
    if v is None:
        room.put(b"null")
    elif t is bool:
        room.put(b"true" if v else b"false")
    elif t is int:
        room.put(str(v).encode())
    elif t is float:
        room.put(format_double(v))
    elif t is bytes:
        room.fits(len(v) + 2)  # escapes only lengthen it: refused before the escaping pass
        room.put(json_string(v))
    elif t is list:
        room.put(b"[")
        for i, e in enumerate(v):
            if i:
                room.put(b",")
            room.item()
            _dump(e, room)
        room.put(b"]")
    else:
        room.put(b"{")
        for i, (k, e) in enumerate(v.items()):
            if i:
                room.put(b",")
            room.item()
            room.fits(len(k) + 3)
            room.put(json_string(k) + b":")
            _dump(e, room)
        room.put(b"}")


def dump_into(v: Any, room: Room) -> None:
    """``json::dump()`` written into ``room``: rapidjson's compact writer, insertion order (the
    output stops at a NaN or an infinity)."""
    try:
        _dump(v, room)
    except _NanInf:
        pass


def dump(v: Any) -> bytes:
    """``json::dump()`` as bytes (unbounded: :func:`dump_into` bounds it)."""
    room = Room()
    dump_into(v, room)
    return bytes(room.out)


def number_text(v: Any) -> bytes:
    return dump(v)


_PRIO = {b"type": 1, b"function": 2, b"name": 3, b"description": 4, b"parameters": 5,
         b"properties": 6, b"required": 7, b"enum": 8}


def sorted_keys(d: dict) -> list[bytes]:
    """Object keys in the order ``to_python_string`` and ``to_json_string`` write them."""
    return sorted(d, key=lambda k: (_PRIO.get(k, 100), k))


def _quoted(s: bytes) -> bytes:
    """``to_python_repr`` of a string: in quotes, ``\\``, ``'``, newline and CR escaped."""
    return b"'" + s.replace(b"\\", b"\\\\").replace(b"'", b"\\'").replace(b"\n", b"\\n").replace(b"\r", b"\\r") + b"'"


def _py_repr_into(v: Any, room: Room) -> None:
    if type(v) is bytes:
        room.fits(len(v) + 2)
        room.put(_quoted(v))
    else:
        py_str_into(v, room)


def py_str_into(v: Any, room: Room) -> None:
    """``to_python_string`` written into ``room``."""
    t = type(v)
    if v is None:
        room.put(b"None")
    elif t is bool:
        room.put(b"True" if v else b"False")
    elif t is int or t is float:
        dump_into(v, room)
    elif t is bytes:
        room.put(v)
    elif t is list:
        room.put(b"[")
        for i, e in enumerate(v):
            if i:
                room.put(b", ")
            room.item()
            _py_repr_into(e, room)
        room.put(b"]")
    else:
        room.put(b"{")
        for i, k in enumerate(sorted_keys(v)):
            if i:
                room.put(b", ")
            room.item()
            room.fits(len(k) + 4)
            room.put(b"'" + k.replace(b"\\", b"\\\\").replace(b"'", b"\\'") + b"': ")
            _py_repr_into(v[k], room)
        room.put(b"}")


def py_str(v: Any) -> bytes:
    """``to_python_string`` as bytes (unbounded: :func:`py_str_into` bounds it)."""
    room = Room()
    py_str_into(v, room)
    return bytes(room.out)


def py_repr(v: Any) -> bytes:
    """``to_python_repr``."""
    room = Room()
    _py_repr_into(v, room)
    return bytes(room.out)


def json_str_into(v: Any, room: Room, indent: int = -1, level: int = 0) -> None:
    """``to_json_string`` (``|tojson``) written into ``room``."""
    t = type(v)
    if t is not list and t is not dict:
        dump_into(v, room)
        return
    if not v:
        room.put(b"[]" if t is list else b"{}")
        return
    if indent >= 0:
        room.fits((level + 1) * indent + 2)  # the indent is refused before it is made
        nl, sp, sp_close = b"\n", b" " * ((level + 1) * indent), b" " * (level * indent)
        sep = b"," + nl + sp
    else:
        nl = sp = sp_close = b""
        sep = b", "
    if t is list:
        room.put(b"[" + nl + sp)
        for i, e in enumerate(v):
            if i:
                room.put(sep)
            room.item()
            json_str_into(e, room, indent, level + 1)
        room.put(nl + sp_close + b"]")
        return
    room.put(b"{" + nl + sp)
    for i, k in enumerate(sorted_keys(v)):
        if i:
            room.put(sep)
        room.item()
        room.fits(len(k) + 4)
        room.put(b'"' + k + b'": ')
        json_str_into(v[k], room, indent, level + 1)
    room.put(nl + sp_close + b"}")


def json_str(v: Any, indent: int = -1) -> bytes:
    """``to_json_string`` as bytes (unbounded: :func:`json_str_into` bounds it)."""
    room = Room()
    json_str_into(v, room, indent)
    return bytes(room.out)


# --- conversion from Python -------------------------------------------------------------------------

def _utf8(s: str, path: str) -> bytes:
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is no escaped byte
        raise ChatTemplateError(f"{path}: a lone surrogate is not UTF-8 text (MNN's engine takes UTF-8)") from None


def from_python(v: Any, path: str = "value") -> Any:
    """A JSON-like Python value as the engine holds it (strings as UTF-8 bytes).

    Integers beyond int64 become doubles, as rapidjson parses them; beyond a double's range they
    are a :class:`ChatTemplateError`.
    """
    if v is None or type(v) is bool:
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        v = int(v)
        if -_INT64 <= v < _INT64:
            return v
        try:
            return float(v)
        except OverflowError:  # rapidjson refuses such a number (kParseErrorNumberTooBig)
            raise ChatTemplateError(f"{path}: an integer of {v.bit_length()} bits is past a double's range "
                                    "(MNN's engine holds JSON numbers: int64 or double)") from None
    if isinstance(v, float):
        return float(v)
    if isinstance(v, str):
        return _utf8(v, path)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, (list, tuple)):
        return [from_python(e, f"{path}[{i}]") for i, e in enumerate(v)]
    if isinstance(v, dict):
        out = {}
        for k, e in v.items():
            if not isinstance(k, str):
                raise ChatTemplateError(f"{path}: keys must be strings, got {type(k).__name__}")
            out[_utf8(k, path)] = from_python(e, f"{path}.{k}")
        return out
    raise ChatTemplateError(f"{path}: {type(v).__name__} is not JSON (MNN's engine takes JSON values)")


def weight(v: Any, limit: float) -> int:
    """A value's weight: 1 for a scalar, bytes + 1 for a string, 1 + the weights of the items for a
    list, 1 + key bytes + value weights for an object (a value shared twice counts twice: MNN copies
    it).  Counted up to just past ``limit``, so the walk costs at most ``limit`` steps."""
    total = 0
    stack = [v]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is bytes:
            total += len(x) + 1
        elif t is list:
            total += 1
            for e in x:
                te = type(e)
                if te is bytes:
                    total += len(e) + 1
                elif te is list or te is dict:
                    stack.append(e)
                else:
                    total += 1
                if total > limit:
                    return total
        elif t is dict:
            total += 1
            for k, e in x.items():
                total += len(k)
                te = type(e)
                if te is bytes:
                    total += len(e) + 1
                elif te is list or te is dict:
                    stack.append(e)
                else:
                    total += 1
                if total > limit:
                    return total
        else:
            total += 1
        if total > limit:
            return total
    return total
