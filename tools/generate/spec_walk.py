"""The spec walk every output shares: the records and unions of ``spec/``, their descriptors and sizes."""

from __future__ import annotations

import re
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import construct as c  # noqa: E402

from spec import _dsl as dsl  # noqa: E402

# ----------------------------------------------------------------------------------------------
# The model of the spec the emitters work on
# ----------------------------------------------------------------------------------------------


@dataclass
class FieldInfo:
    name: str
    sub: object
    doc: str


@dataclass
class RecordInfo:
    name: str
    doc: str
    fields: list[FieldInfo]
    union: str | None = None  # the union this record is a variant of
    tag: int | None = None
    custom: object = None  # HeaderLines
    ref: tuple[str, ...] = ()  # source links


@dataclass
class UnionInfo:
    name: str
    doc: str
    tag_fmt: str
    cases: list[tuple[int, str]]
    max_depth: int
    custom: object = None  # PostProcessorLayouts
    node: object = None
    ref: tuple[str, ...] = ()  # source links


@dataclass
class Model:
    records: dict[str, RecordInfo] = field(default_factory=dict)
    unions: dict[str, UnionInfo] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # records and unions, first seen first
    enums: dict[str, object] = field(default_factory=dict)  # name -> dsl.Enum, first seen first


def scalar(sub):
    """(struct char, name) of a fixed-size number; an enum is the number it names."""
    if isinstance(sub, dsl.Enum):
        sub = sub.subcon
    return dsl.SCALARS.get(id(sub))


def fields_of(rec: c.Struct) -> list[FieldInfo]:
    out = []
    for sc in rec.subcons:
        if isinstance(sc, c.Renamed):
            inner, doc = sc, ""
            while isinstance(inner, c.Renamed):
                doc = doc or dsl.doc_of(inner)
                inner = inner.subcon
            out.append(FieldInfo(sc.name, inner, doc))
        else:
            out.append(FieldInfo("", sc, ""))
    return out


def collect(*roots) -> Model:
    """The records, unions and enums reachable from ``roots``, each once, in first-seen order."""
    m = Model()
    for root in roots:
        visit(m, root)
    return m


def visit(m: Model, sub, union: str | None = None, tag: int | None = None) -> None:
    sub = dsl.resolve(sub)
    VISITORS.get(kind_of(sub), lambda m, sub, union, tag: None)(m, sub, union, tag)


def _visit_record(m: Model, sub, union, tag) -> None:
    if sub.record_name in m.records:
        return
    info = RecordInfo(sub.record_name, sub.record_doc, fields_of(sub), union, tag, ref=sub.ref)
    m.records[sub.record_name] = info
    for f in info.fields:
        visit(m, f.sub)
    m.order.append(sub.record_name)


def _visit_union(m: Model, sub, union, tag) -> None:
    if sub.union_name in m.unions:
        return
    m.unions[sub.union_name] = UnionInfo(
        sub.union_name, sub.union_doc, scalar(sub.tag)[0],
        [(t, r.record_name) for t, r in sub.cases.items()], sub.max_depth, node=sub, ref=sub.ref,
    )
    for t, r in sub.cases.items():
        visit(m, r, sub.union_name, t)
    m.order.append(sub.union_name)


def _visit_header(m: Model, sub, union, tag) -> None:
    if "Header" not in m.records:
        m.records["Header"] = RecordInfo("Header", dsl.HeaderLines.__doc__.split("\n\n")[0], [], custom=sub,
                                         ref=sub.ref)
        m.order.append("Header")


def _visit_post_processor(m: Model, sub, union, tag) -> None:
    if "PostProcessor" in m.unions:
        return
    m.unions["PostProcessor"] = UnionInfo(
        "PostProcessor", "", "", [(-1, sub.current.record_name), (-2, sub.legacy.record_name)], 1,
        custom=sub, node=sub,
    )
    visit(m, sub.op_union)
    visit(m, sub.current, "PostProcessor")
    visit(m, sub.legacy, "PostProcessor")
    m.order.append("PostProcessor")


def _visit_row(m: Model, sub, union, tag) -> None:
    for f in fields_of(sub):
        visit(m, f.sub)


# block kind -> what the walk records and where it goes on (scalars, flags, strings, text lines: nothing)
VISITORS = {
    "record": _visit_record,
    "union": _visit_union,
    "header": _visit_header,
    "postprocessor": _visit_post_processor,
    "list": lambda m, sub, union, tag: visit(m, sub.element),
    "enum": lambda m, sub, union, tag: m.enums.setdefault(sub.enum_name, sub),
    "tail": lambda m, sub, union, tag: visit(m, sub.subcon),
    "when": lambda m, sub, union, tag: visit(m, sub.subcon),
    "count": lambda m, sub, union, tag: visit(m, sub.subcon),
    "row": _visit_row,
}


# ----------------------------------------------------------------------------------------------
# Types: Python annotations, schema descriptors, sizes
# ----------------------------------------------------------------------------------------------


def desc(sub):
    """The schema descriptor of a block (what mtokspec's plain-data conversion walks)."""
    sub = dsl.resolve(sub)
    return DESCRIPTORS[kind_of(sub)](sub)


def _line_table_desc(sub):
    cols = [LINE_KINDS[col.kind] for col in sub.columns]
    return ("list", cols[0] if len(cols) == 1 else ("row", tuple(cols)))


# block kind -> its descriptor (Count and End are not tree fields and have none)
DESCRIPTORS = {
    "scalar": lambda sub: ("float",) if scalar(sub)[0] == "d" else ("int",),
    "enum": lambda sub: ("int",),
    "flag": lambda sub: ("bool",),
    "lenprefixed": lambda sub: ("str",) if sub.text else ("bytes",),
    "list": lambda sub: ("list", desc(sub.element)),
    "row": lambda sub: ("row", tuple(desc(f.sub) for f in fields_of(sub))),
    "record": lambda sub: ("record", sub.record_name),
    "union": lambda sub: ("union", sub.union_name),
    "header": lambda sub: ("record", "Header"),
    "postprocessor": lambda sub: ("union", "PostProcessor"),
    "tail": lambda sub: ("optional", desc(sub.subcon)),
    "when": lambda sub: ("optional", desc(sub.subcon)),
    "linetable": _line_table_desc,
    "finalnewline": lambda sub: ("bool",),
}


LINE_KINDS = {"base64": ("bytes",), "raw": ("bytes",), "word": ("str",), "int": ("int",)}


def annotation(d) -> str:
    k = d[0]
    if k in ("int", "float", "bool", "bytes", "str"):
        return k
    if k == "list":
        return f"list[{annotation(d[1])}]"
    if k == "row":
        return "tuple[" + ", ".join(annotation(x) for x in d[1]) + "]"
    if k in ("record", "union"):
        return d[1]
    if k == "optional":
        return f"{annotation(d[1])} | None"
    raise TypeError(d)


def default(d, m: Model) -> str:
    k = d[0]
    simple = {"int": "0", "float": "0.0", "bool": "False", "bytes": 'b""', "str": '""'}
    if k in simple:
        return simple[k]
    if k == "list":
        return "field(default_factory=list)"
    if k == "record":
        return f"field(default_factory={d[1]})"
    if k == "union":
        return f"field(default_factory={m.unions[d[1]].cases[0][1]})"
    if k == "optional":
        return "None"
    raise TypeError(d)


def min_size(sub, m: Model) -> int:
    """The fewest bytes a block can take: lets readers refuse impossible counts up front."""
    sub = dsl.resolve(sub)
    return MIN_SIZES.get(kind_of(sub), lambda sub, m: 0)(sub, m)


def _fields_min_size(sub, m: Model) -> int:
    return sum(min_size(f.sub, m) for f in fields_of(sub))


# block kind -> its fewest bytes (0 for the rest: text lines, optional and computed blocks)
MIN_SIZES = {
    "scalar": lambda sub, m: struct.calcsize("<" + scalar(sub)[0]),
    "enum": lambda sub, m: struct.calcsize("<" + scalar(sub)[0]),
    "flag": lambda sub, m: 1,
    "count": lambda sub, m: min_size(sub.subcon, m),
    "lenprefixed": lambda sub, m: min_size(sub.prefix, m),
    "list": lambda sub, m: 0 if isinstance(sub.count, str) else min_size(sub.count, m),
    "row": _fields_min_size,
    "record": _fields_min_size,
    "union": lambda sub, m: min_size(sub.tag, m) + min(min_size(r, m) for r in sub.cases.values()),
    "countline": lambda sub, m: 2,
}


def tree_fields(info: RecordInfo) -> list[FieldInfo]:
    if info.custom is not None:
        return [FieldInfo(n, None, doc) for n, _, doc in dsl.HeaderLines.FIELDS]
    return [f for f in info.fields if f.name and not isinstance(f.sub, (dsl.Count, dsl.CountLine))]


HEADER_DESCS = {name: d for name, d, _ in dsl.HeaderLines.FIELDS}


def field_desc(info: RecordInfo, f: FieldInfo):
    return HEADER_DESCS[f.name] if info.custom is not None else desc(f.sub)


BANNER = "# Generated by tools/generate (python -m tools.generate) from spec/. Do not edit: change the spec and regenerate.\n"


def kind_of(sub) -> str:
    """The block kind the emitters dispatch on: ``scalar`` or the ``kind`` a ``spec._dsl`` block declares."""
    sub = dsl.resolve(sub)
    return sub.kind if isinstance(sub, dsl.Enum) or not scalar(sub) else "scalar"


def snake(name: str) -> str:
    """``BertNFDNormalizer`` -> ``bert_nfd_normalizer`` (Kaitai identifiers are lower snake case)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
