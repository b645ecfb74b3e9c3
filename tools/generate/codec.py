"""``generated/codec.py``: plain ``struct``/slice parse and build code, bounds-checked."""

from __future__ import annotations

from spec import _dsl as dsl

from .spec_walk import BANNER, Model, RecordInfo
from .codec_build import Builder
from .codec_parse import Parser


class Emitter(Parser, Builder):
    """Writes ``generated/codec.py``: the parse side (``codec_parse``, ``codec_rows``) and the build
    side (``codec_build``) over one state (``codec_emitter``)."""


CODEC_PRELUDE = '''\
"""Fast parse and build of the MNN tokenizer formats, emitted from the declarations in spec/.

Every read is bounds-checked before it happens; counts are checked against the bytes left before
any list is allocated; tables of fixed-size rows are decoded in one call.  The helpers are in
mtokspec/format/codec_support.py.
"""

from __future__ import annotations

import re
import struct
from itertools import chain as _chain

from mtokspec.format.codec_support import (
    bad_rows,
    bad_value,
    build_header_lines,
    decode_base64,
    decode_decimal,
    decode_word,
    invalid,
    line_column,
    line_end,
    LITTLE,
    native,
    parse_count_line,
    parse_header_lines,
    row_format,
    truncated,
    typed_column,
    walk16,
    walk8,
)
from mtokspec.errors import MtokFormatError
from mtokspec.format.table import Table

from .tree import *  # noqa: F403
'''


ROOT_API = '''

def parse_{root}(data) -> {root}:
    """Parse a whole file; raises MtokFormatError (with byte offset and field path) on any defect."""
    b = bytes(data)
    obj, _ = _parse_{root}(b, 0, len(b), "", 1)
    return obj


def build_{root}(tree: {root}) -> bytes:
    """Build a whole file; raises MtokFormatError naming the field that cannot be written."""
    out: list[bytes] = []
    _build_{root}(tree, out, "")
    return b"".join(out)
'''


NODE_API = '''

def build_node(obj) -> bytes:
    """The bytes one record of the tree (a stage, an op, a whole file) takes inside a file, as
    ``build`` writes them; raises MtokFormatError naming the field that cannot be written."""
    fn = _NODE_BUILDERS.get(obj.__class__)
    if fn is None:
        bad_value("", "expected a record of the tree", obj)
    out: list[bytes] = []
    fn(obj, out, "")
    return b"".join(out)
'''


def emit_section_sizes(e: Emitter, root: RecordInfo) -> None:
    e.w(0, f"def section_sizes_{root.name}(obj):")
    e.w(1, '"""(section name, bytes it takes or None when absent) for each top-level section."""')
    e.w(1, "sizes = []")
    e.w(1, "absent = False")
    e.w(1, 'path = ""')
    for f in root.fields:
        if not f.name:
            continue
        e.w(1, "out: list[bytes] = []")
        e.write_fields(1, [(f, f"obj.{f.name}", f'"{f.name}"')], "obj", None)
        if isinstance(f.sub, (dsl.CountLine, dsl.FinalNewline)):
            e.w(1, f"sizes.append(({f.name!r}, sum(map(len, out))))")
        else:
            e.w(1, f"sizes.append(({f.name!r}, None if obj.{f.name} is None else sum(map(len, out))))")
    e.w(1, "return sizes")
    e.w(0, "")
    e.w(0, "")


def emit_codec(m: Model, roots: list[str]) -> str:
    e = Emitter(m)
    for name in m.order:
        if name in m.records:
            e.parse_record(m.records[name])
            e.build_record(m.records[name])
        else:
            e.parse_union(m.unions[name])
            e.build_union(m.unions[name])
    for root_name in roots:
        emit_section_sizes(e, m.records[root_name])
    tables = []
    for name in m.order:
        u = m.unions.get(name)
        if u is None or u.custom is not None:
            continue
        tables.append(f"_{name.upper()}_PARSERS = {{")
        tables += [f"    {t}: _parse_{r}," for t, r in u.cases]
        tables.append("}")
        tables.append(f"_{name.upper()}_BUILDERS = {{")
        tables += [f"    {r}: ({t}, _build_{r})," for t, r in u.cases]
        tables.append("}")
    structs = [f"{v} = struct.Struct({fmt!r})" for fmt, v in e.structs.items()]
    structs += ["", "# the text grammar, from spec/_dsl.py",
                f"_COUNTS = re.compile({dsl.COUNTS_LINE!r})", f"_IDS = re.compile({dsl.IDS_LINE!r})",
                f"_DECIMAL = re.compile({dsl.INT!r})", f"_COUNT = re.compile({dsl.COUNT!r})",
                f"_DECIMAL_BOUND = {10 ** dsl.DIGITS}  # {dsl.DIGITS} digits: what a decimal can write"]
    api = "".join(ROOT_API.format(root=r) for r in roots)
    tables.append("_NODE_BUILDERS = {")
    emitted = "\n".join(e.lines)
    tables += [f"    {name}: _build_{name}," for name in m.order
               if name in m.records and f"def _build_{name}(" in emitted]
    tables.append("}")
    api += NODE_API
    return BANNER + CODEC_PRELUDE + "\n".join(structs) + "\n\n\n" + "\n".join(e.decoder_lines + e.lines) + "\n" + "\n".join(tables) + "\n" + api
