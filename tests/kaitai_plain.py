"""Trees read by Kaitai-generated parsers, in the plain form the agreement tests compare.

The walk is driven by the generator's own spec walk (``tools/generate/spec_walk.py``), through one
table keyed by block kind, so a field added to ``spec/`` is compared with no change here.  The same
walk reads the Python parser's objects and the JSON that ``tools/ksc/dump.js`` prints for the
JavaScript parser (``JsObject`` gives that JSON the Python parser's attribute names).
"""

from __future__ import annotations

import dataclasses
import re
import struct

from mtokspec.table import Table
from spec import _dsl as dsl
from spec import mtok
from tools.generate.spec_walk import RecordInfo, collect, fields_of, kind_of, scalar, tree_fields

MODEL = collect(mtok.MtokFile)


def f64(x: float) -> tuple[str, str]:
    """Floats compared by their bits (NaN equals itself, -0.0 differs from 0.0)."""
    return ("f64", struct.pack("<d", x).hex())


def tree_plain(node):
    """An mtokspec tree as plain data: records are dicts with their class name under "type"."""
    if dataclasses.is_dataclass(node):
        return {"type": type(node).__name__,
                **{f.name: tree_plain(getattr(node, f.name)) for f in dataclasses.fields(node)}}
    if isinstance(node, tuple):
        return tuple(tree_plain(x) for x in node)
    if isinstance(node, (list, Table)):
        return [tree_plain(x) for x in node]
    if isinstance(node, float):
        return f64(node)
    return node


def kaitai_plain(obj, sub=mtok.MtokFile):
    """A Kaitai parser's object for the block ``sub`` as plain data, like :func:`tree_plain`."""
    sub = dsl.resolve(sub)
    return CONVERTERS[kind_of(sub)](obj, sub)


def _record(obj, info: RecordInfo) -> dict:
    return {"type": info.name, **{f.name: kaitai_plain(getattr(obj, f.name, None), f.sub) for f in tree_fields(info)}}


def _scalar(value, sub):
    return f64(value) if scalar(sub)[0] == "d" else value


def _header(obj, sub) -> dict:
    return {"type": "Header", "special_count": obj.special_count, "stop_count": obj.stop_count,
            "prefix_count": obj.prefix_count, "ids": [d.value for d in obj.ids],
            "trailing_space": bool(obj.trailing_space)}


def _optional(value, sub):
    return None if value is None else kaitai_plain(value, sub.subcon)


CONVERTERS = {
    "scalar": _scalar,
    "flag": lambda value, sub: bool(value),
    "enum": lambda value, sub: int(value),  # Kaitai gives an enum member for a named value
    "lenprefixed": lambda obj, sub: obj.value,
    "list": lambda values, sub: [kaitai_plain(x, sub.element) for x in values],
    "row": lambda obj, sub: tuple(kaitai_plain(getattr(obj, f.name), f.sub) for f in fields_of(sub)),
    "record": lambda obj, sub: _record(obj, MODEL.records[sub.record_name]),
    "union": lambda obj, sub: _record(obj.variant, MODEL.records[sub.cases[int(obj.tag)].record_name]),
    "header": _header,
    "postprocessor": lambda obj, sub: _record(
        obj.layout, MODEL.records[(sub.legacy if obj.is_legacy else sub.current).record_name]),
    "tail": _optional,
    "when": _optional,
}


class JsObject:
    """One object of ``dump.js`` output, read with the Python parser's snake_case names."""

    def __init__(self, data: dict):
        self._data = data

    def __getattr__(self, name: str):
        camel = re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)
        if camel not in self._data:
            raise AttributeError(name)
        return js_value(self._data[camel])


def js_value(value):
    if isinstance(value, list):
        return [js_value(x) for x in value]
    if isinstance(value, dict):
        if set(value) == {"__bytes__"}:
            return bytes.fromhex(value["__bytes__"])
        if set(value) == {"__f64__"}:
            return float(value["__f64__"])
        return JsObject(value)
    return value


def first_difference(a, b, path="") -> str | None:
    """Where two plain trees differ first ("field by field"), or None when they are equal."""
    if type(a) is not type(b):
        return f"{path or '<root>'}: {type(a).__name__} {a!r:.60} != {type(b).__name__} {b!r:.60}"
    if isinstance(a, dict):
        for key in a.keys() | b.keys():
            found = first_difference(a.get(key), b.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{path or '<root>'}: {a!r:.60} != {b!r:.60}"
