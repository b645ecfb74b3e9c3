"""Trees read by Kaitai-generated parsers, in the plain form the agreement tests compare.

The walk is driven by the generator's own spec walk (``tools/generate/spec_walk.py``), through one
table keyed by block kind, so a field added to ``spec/`` is compared with no change here.  The same
walk reads the Python parser's objects and the JSON that ``tools/ksc/dump.js`` prints for the
JavaScript parser (``JsObject`` gives that JSON the Python parser's attribute names).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import re
import struct

from mtokspec.format import tree as t
from mtokspec.format.table import Table
from spec import _dsl as dsl
from spec import mtok, txt
from tools.generate.spec_walk import RecordInfo, collect, fields_of, kind_of, scalar, tree_fields

MODEL = collect(mtok.MtokFile, *txt.ROOTS.values())


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
    return converter(sub)(obj)


_CONVERTERS: dict[int, object] = {}


def converter(sub):
    """The function that converts a Kaitai value of block ``sub`` (made once per block: tables have
    100k+ rows)."""
    sub = dsl.resolve(sub)
    made = _CONVERTERS.get(id(sub))
    if made is None:
        slot = []  # a recursive block (Sequence variants) meets itself while its converter is made
        _CONVERTERS[id(sub)] = lambda value: slot[0](value)
        made = _CONVERTERS[id(sub)] = CONVERTER_MAKERS[kind_of(sub)](sub)
        slot.append(made)
    return made


def kaitai_txt_plain(obj):
    """The tree of tokenizer_txt.ksy's root: its ``file`` is the type line 1 names."""
    return converter(txt.ROOTS[obj.file_type - ord("0")])(obj.file)


def _record(info: RecordInfo):
    fields = [(f.name, _getter(f), converter(f.sub)) for f in tree_fields(info)]
    return lambda obj: {"type": info.name, **{name: conv(get(obj)) for name, get, conv in fields}}


def _getter(f):
    """How a field is read from its record's Kaitai object."""
    sub = dsl.resolve(f.sub)
    if kind_of(sub) == "linetable" and sub.final_newline:  # the last line is read apart (its newline optional)
        last = f"{f.name}_last_line"
        return lambda obj: getattr(obj, f.name) + ([getattr(obj, last)] if getattr(obj, last, None) is not None else [])
    return lambda obj: getattr(obj, f.name, None)


def _scalar(sub):
    return f64 if scalar(sub)[0] == "d" else (lambda value: value)


def _header(sub):
    def plain(obj):
        ids, p, out = [d.value for d in obj.ids], 0, {"type": "Header"}
        for name, n in zip(t.HEADER_ROLES, (obj.special_count, obj.stop_count, obj.prefix_count)):
            out[name], p = ids[p:p + n], p + n
        return {**out, "trailing_space": bool(obj.trailing_space)}
    return plain


def _optional(sub):
    inner = converter(sub.subcon)
    return lambda value: None if value is None else inner(value)


def _list(sub):
    element = converter(sub.element)
    return lambda values: [element(x) for x in values]


def _row(sub):
    fields = [(f.name, converter(f.sub)) for f in fields_of(sub)]
    return lambda obj: tuple(conv(getattr(obj, name)) for name, conv in fields)


def _line_table(sub):
    columns = [(col.name, LINE_COLUMNS[col.kind]) for col in sub.columns]
    if len(columns) == 1:
        return lambda lines: [columns[0][1](line) for line in lines]
    return lambda lines: [tuple(conv(getattr(line, name)) for name, conv in columns) for line in lines]


# a text-line column kind -> its tree value from Kaitai's (a base64 column is Kaitai's text: decode it)
LINE_COLUMNS = {
    "base64": lambda text: base64.b64decode(text, validate=True),
    "word": lambda text: text,
    "int": lambda decimal: decimal.value,
    "raw": bytes,
}


def _union(sub):
    cases = {tag: _record(MODEL.records[rec.record_name]) for tag, rec in sub.cases.items()}
    return lambda obj: cases[int(obj.tag)](obj.variant)


def _post_processor(sub):
    legacy = _record(MODEL.records[sub.legacy.record_name])
    current = _record(MODEL.records[sub.current.record_name])
    return lambda obj: (legacy if obj.is_legacy else current)(obj.layout)


# block kind -> the maker of its converter
CONVERTER_MAKERS = {
    "scalar": _scalar,
    "enum": lambda sub: int,  # Kaitai gives an enum member for a named value
    "flag": lambda sub: bool,
    "lenprefixed": lambda sub: lambda obj: obj.value,
    "list": _list,
    "row": _row,
    "record": lambda sub: _record(MODEL.records[sub.record_name]),
    "union": _union,
    "header": _header,
    "postprocessor": _post_processor,
    "tail": _optional,
    "when": _optional,
    "linetable": _line_table,
    "finalnewline": lambda sub: bool,
}


class JsObject:
    """One object of ``dump.js`` output, read with the Python parser's snake_case names."""

    def __init__(self, data: dict):
        self._data = data

    def __getattr__(self, name: str):
        camel = camel_case(name)
        if camel not in self._data:
            raise AttributeError(name)
        return js_value(self._data[camel])


@functools.cache
def camel_case(name: str) -> str:
    """The JavaScript parser's spelling of a Kaitai identifier: ``num_vocab`` -> ``numVocab``."""
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


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
