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
tool-schema priority, then bytewise; keys written unescaped).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

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


# --- rapidjson's writer ---------------------------------------------------------------------------

_HEX = b"0123456789ABCDEF"
_SHORT = {8: b"\\b", 9: b"\\t", 10: b"\\n", 12: b"\\f", 13: b"\\r", 0x22: b'\\"', 0x5C: b"\\\\"}


def json_string(s: bytes) -> bytes:
    """A string as rapidjson's Writer writes it (only controls, '"' and '\\' escaped)."""
    out = bytearray(b'"')
    for c in s:
        e = _SHORT.get(c)
        if e is not None:
            out += e
        elif c < 0x20:
            out += b"\\u00" + bytes((_HEX[c >> 4], _HEX[c & 15]))
        else:
            out.append(c)
    out += b'"'
    return bytes(out)


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


def _dump(v: Any, out: bytearray) -> None:
    if v is None:
        out += b"null"
    elif type(v) is bool:
        out += b"true" if v else b"false"
    elif type(v) is int:
        out += str(v).encode()
    elif type(v) is float:
        out += format_double(v)
    elif type(v) is bytes:
        out += json_string(v)
    elif type(v) is list:
        out += b"["
        for i, e in enumerate(v):
            if i:
                out += b","
            _dump(e, out)
        out += b"]"
    else:
        out += b"{"
        for i, (k, e) in enumerate(v.items()):
            if i:
                out += b","
            out += json_string(k) + b":"
            _dump(e, out)
        out += b"}"


def dump(v: Any) -> bytes:
    """``json::dump()``: rapidjson's compact writer, insertion order (output cut at a NaN)."""
    out = bytearray()
    try:
        _dump(v, out)
    except _NanInf:
        pass
    return bytes(out)


def number_text(v: Any) -> bytes:
    return dump(v)


# --- to_python_string / to_python_repr / to_json_string ---------------------------------------------

_PRIO = {b"type": 1, b"function": 2, b"name": 3, b"description": 4, b"parameters": 5,
         b"properties": 6, b"required": 7, b"enum": 8}


def sorted_keys(d: dict) -> list[bytes]:
    """Object keys in the order ``to_python_string`` and ``to_json_string`` write them."""
    return sorted(d, key=lambda k: (_PRIO.get(k, 100), k))


def py_repr(v: Any) -> bytes:
    if type(v) is bytes:
        out = bytearray(b"'")
        for c in v:
            if c == 0x27:
                out += b"\\'"
            elif c == 0x5C:
                out += b"\\\\"
            elif c == 10:
                out += b"\\n"
            elif c == 13:
                out += b"\\r"
            else:
                out.append(c)
        out += b"'"
        return bytes(out)
    return py_str(v)


def py_str(v: Any) -> bytes:
    """``to_python_string``."""
    if v is None:
        return b"None"
    if type(v) is bool:
        return b"True" if v else b"False"
    if type(v) in (int, float):
        return dump(v)
    if type(v) is bytes:
        return v
    if type(v) is list:
        return b"[" + b", ".join(py_repr(e) for e in v) + b"]"
    parts = []
    for k in sorted_keys(v):
        kr = k.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
        parts.append(b"'" + kr + b"': " + py_repr(v[k]))
    return b"{" + b", ".join(parts) + b"}"


def json_str(v: Any, indent: int = -1, level: int = 0) -> bytes:
    """``to_json_string`` (``|tojson``)."""
    if v is None or type(v) in (bool, int, float, bytes):
        return dump(v)
    nl = b"\n" if indent >= 0 else b""
    sp = b" " * ((level + 1) * indent) if indent >= 0 else b""
    sp_close = b" " * (level * indent) if indent >= 0 else b""
    sep = b"," + nl + sp if indent >= 0 else b", "
    if type(v) is list:
        if not v:
            return b"[]"
        return b"[" + nl + sp + sep.join(json_str(e, indent, level + 1) for e in v) + nl + sp_close + b"]"
    if not v:
        return b"{}"
    items = [b'"' + k + b'": ' + json_str(v[k], indent, level + 1) for k in sorted_keys(v)]
    return b"{" + nl + sp + sep.join(items) + nl + sp_close + b"}"


# --- conversion from Python -------------------------------------------------------------------------

def _utf8(s: str, path: str) -> bytes:
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is no escaped byte
        raise ChatTemplateError(f"{path}: a lone surrogate is not UTF-8 text (MNN's engine takes UTF-8)") from None


def from_python(v: Any, path: str = "value") -> Any:
    """A JSON-like Python value as the engine holds it (strings as UTF-8 bytes).

    Integers beyond int64 become doubles, as rapidjson parses them.
    """
    if v is None or type(v) is bool:
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        v = int(v)
        return v if -_INT64 <= v < _INT64 else float(v)
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


def size_of(v: Any, limit: int) -> int:
    """A value's weight (bytes of strings, items of containers), counted up to just past ``limit``."""
    total = 0
    stack = [v]
    while stack and total <= limit:
        x = stack.pop()
        t = type(x)
        if t is bytes:
            total += len(x) + 2
        elif t is list:
            total += 2 + len(x)
            stack.extend(x)
        elif t is dict:
            total += 2 + len(x)
            for k, e in x.items():
                total += len(k)
                stack.append(e)
        else:
            total += 4
    return total
