"""Building blocks for the format declarations.

Each block is a real ``construct`` construct, so ``spec`` on its own is a working (slow) reference
parser and builder.  Each block also carries plain attributes (names, docs, the field a count
belongs to) that ``tools/generate/`` reads to emit the fast codec, the tree classes and
``FORMAT.md`` -- the way fontTools drives its converters from ``otData``.

Reference values use the *plain* form that ``mtokspec`` uses for YAML/JSON: records are dicts,
union members carry ``"type"``, table rows are tuples, raw bytes stay ``bytes`` on parse and may be
given as ``str`` (UTF-8) or ``{"hex": ...}`` on build.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
import threading

import construct as c

u8 = c.Int8ul
u16 = c.Int16ul
u32 = c.Int32ul
f64 = c.Float64l

# Scalars the generator knows, with their struct format character.
SCALARS = {id(u8): ("B", "u8"), id(u16): ("H", "u16"), id(u32): ("I", "u32"), id(f64): ("d", "f64")}


def plain_bytes(obj) -> bytes:
    """Accept the plain spellings of raw bytes: bytes, UTF-8 text, or {"hex": "..."}."""
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj)
    if isinstance(obj, str):
        return obj.encode("utf-8")
    if isinstance(obj, dict) and set(obj) == {"hex"}:
        return bytes.fromhex(obj["hex"])
    raise c.ValidationError(f"expected bytes, text or {{'hex': ...}}, got {type(obj).__name__}")


class FlagAdapter(c.Adapter):
    """u8 holding 0 or 1; the tree holds a bool."""

    kind = "flag"

    def __init__(self):
        super().__init__(u8)

    def _decode(self, obj, context, path):
        if obj not in (0, 1):
            raise c.ValidationError(f"flag must be 0 or 1, got {obj}", path=path)
        return bool(obj)

    def _encode(self, obj, context, path):
        if not isinstance(obj, bool):
            raise c.ValidationError(f"flag must be a bool, got {obj!r}", path=path)
        return int(obj)


class LenPrefixed(c.Adapter):
    """Length-prefixed bytes.  ``text=True``: the bytes must be UTF-8 and the tree holds ``str``."""

    kind = "lenprefixed"

    def __init__(self, prefix, text: bool):
        super().__init__(c.Prefixed(prefix, c.GreedyBytes))
        self.prefix = prefix
        self.text = text

    def _decode(self, obj, context, path):
        if not self.text:
            return bytes(obj)
        try:
            return bytes(obj).decode("utf-8")
        except UnicodeDecodeError as e:
            raise c.ValidationError(f"invalid UTF-8: {e}", path=path) from None

    def _encode(self, obj, context, path):
        if self.text:
            if not isinstance(obj, str):
                raise c.ValidationError(f"expected text, got {type(obj).__name__}", path=path)
            return obj.encode("utf-8")
        return plain_bytes(obj)


Flag = FlagAdapter()
Bytes16 = LenPrefixed(u16, text=False)
Text16 = LenPrefixed(u16, text=True)
Text32 = LenPrefixed(u32, text=True)


class Enum(c.Adapter):
    """A scalar whose values have names: ``values`` maps value -> (name, doc).

    The tree holds the int (``generated/tree.py`` gives the names as an ``IntEnum``, or an
    ``IntFlag`` when ``flags``: then each value is one bit).  Values without a name are read and
    written as they are; ``mtokspec.validate`` reports them.
    """

    kind = "enum"

    def __init__(self, subcon, name: str, values: dict[int, tuple[str, str]], flags: bool = False):
        super().__init__(subcon)
        self.enum_name = name
        self.values = dict(values)
        self.flags = flags

    def _decode(self, obj, context, path):
        return obj

    def _encode(self, obj, context, path):
        return obj


class Count(c.Rebuild):
    """A count stored before the list it counts (``target``); derived from ``len()`` on build."""

    kind = "count"

    def __init__(self, subcon, target: str):
        super().__init__(subcon, lambda ctx: len(ctx[target]))
        self.target = target


class Record(c.Struct):
    """A struct that becomes one tree class (``name``).  Count fields are dropped from the value."""

    kind = "record"

    def __init__(self, name: str, *subcons, doc: str = "", ref: tuple[str, ...] = ()):
        super().__init__(*subcons)
        self.record_name = name
        self.record_doc = doc
        self.ref = tuple(ref)  # source links (MNN's loader and exporter), rendered like Kaitai's doc-ref

    def _parse(self, stream, context, path):
        obj = super()._parse(stream, context, path)
        out = {}
        for sc in self.subcons:
            if sc.name is not None and not isinstance(unwrap(sc), (Count, CountLine)):
                out[sc.name] = obj[sc.name]
        return out

    def _build(self, obj, stream, context, path):
        if not isinstance(obj, dict):
            raise c.ValidationError(f"{self.record_name}: expected a dict, got {type(obj).__name__}", path=path)
        return super()._build(dict(obj), stream, context, path)


class Row(c.Struct):
    """A table row: a tuple in the tree (tables can hold 100k+ rows; tuples keep them cheap)."""

    kind = "row"

    def __init__(self, *subcons):
        super().__init__(*subcons)
        self.columns = [sc.name for sc in subcons]

    def _parse(self, stream, context, path):
        obj = super()._parse(stream, context, path)
        return tuple(obj[name] for name in self.columns)

    def _build(self, obj, stream, context, path):
        if not isinstance(obj, (tuple, list)) or len(obj) != len(self.columns):
            raise c.ValidationError(f"row must have {len(self.columns)} columns: {obj!r}", path=path)
        return super()._build(dict(zip(self.columns, obj)), stream, context, path)


class List(c.Construct):
    """A list whose count is either an inline prefix (a scalar construct) or an earlier Count field.

    ``min_element_size`` lets readers reject a count larger than the remaining bytes before they
    allocate anything.
    """

    kind = "list"

    def __init__(self, count, element):
        super().__init__()
        self.count = count
        self.element = element
        if isinstance(count, str):
            self._inner = c.Array(lambda ctx: ctx[count], element)
        else:
            self._inner = c.PrefixedArray(count, element)

    def _parse(self, stream, context, path):
        return list(self._inner._parsereport(stream, context, path))

    def _build(self, obj, stream, context, path):
        if not isinstance(obj, (list, tuple)):
            raise c.ValidationError(f"expected a list, got {type(obj).__name__}", path=path)
        return self._inner._build(list(obj), stream, context, path)


def unwrap(sub):
    """The block inside ``"name" / block * "doc"``."""
    while isinstance(sub, c.Renamed):
        sub = sub.subcon
    return sub


def resolve(sub):
    """Unwrap LazyBound (used for recursion) to the construct it stands for."""
    while isinstance(sub, c.LazyBound):
        sub = sub.subconfunc()
    return sub


class DepthLimitError(c.ConstructError):
    pass


class Union(c.Construct):
    """A tagged union: a tag, then the fields of the variant the tag selects.

    The tag is not a tree field: each variant is its own tree class.  Nesting (Sequence variants
    contain the union again) is limited to ``max_depth`` so hostile input cannot exhaust the stack.
    """

    kind = "union"

    def __init__(self, name: str, tag, cases: dict[int, Record], doc: str = "", max_depth: int = 32,
                 ref: tuple[str, ...] = ()):
        super().__init__()
        self.ref = tuple(ref)
        self.union_name = name
        self.tag = tag
        self.cases = dict(cases)
        self.union_doc = doc
        self.max_depth = max_depth
        self.by_name = {rec.record_name: t for t, rec in self.cases.items()}
        self._local = threading.local()

    def _enter(self, path):
        depth = getattr(self._local, "depth", 0) + 1
        if depth > self.max_depth:
            raise DepthLimitError(f"{self.union_name} nested deeper than {self.max_depth}", path=path)
        self._local.depth = depth

    def _leave(self):
        self._local.depth -= 1

    def _parse(self, stream, context, path):
        self._enter(path)
        try:
            tag = self.tag._parsereport(stream, context, path)
            rec = self.cases.get(tag)
            if rec is None:
                raise c.ValidationError(f"unknown {self.union_name} tag {tag}", path=path)
            value = rec._parsereport(stream, context, path)
            return {"type": rec.record_name, **value}
        finally:
            self._leave()

    def _build(self, obj, stream, context, path):
        self._enter(path)
        try:
            if not isinstance(obj, dict) or obj.get("type") not in self.by_name:
                raise c.ValidationError(f"{self.union_name}: unknown variant {obj!r:.80}", path=path)
            tag = self.by_name[obj["type"]]
            self.tag._build(tag, stream, context, path)
            rec = self.cases[tag]
            rec._build({k: v for k, v in obj.items() if k != "type"}, stream, context, path)
            return obj
        finally:
            self._leave()


class When(c.Construct):
    """Present only when an earlier flag field is true; the tree holds None otherwise."""

    kind = "when"

    def __init__(self, flag_field: str, subcon):
        super().__init__()
        self.flag_field = flag_field
        self.subcon = subcon

    def _parse(self, stream, context, path):
        return self.subcon._parsereport(stream, context, path) if context[self.flag_field] else None

    def _build(self, obj, stream, context, path):
        if bool(context[self.flag_field]) != (obj is not None):
            raise c.ValidationError(f"present exactly when {self.flag_field} is set", path=path)
        if obj is not None:
            self.subcon._build(obj, stream, context, path)
        return obj


def _at_end(stream) -> bool:
    if stream.read(1) == b"":
        return True
    stream.seek(-1, io.SEEK_CUR)
    return False


class Tail(c.Construct):
    """An optional trailing section: absent (None) only where the stream ends exactly before it.

    Unlike ``construct.Optional`` it never swallows an error inside a section that is present.
    Building: once a section is absent every later one must be absent too.
    """

    kind = "tail"

    def __init__(self, subcon):
        super().__init__()
        self.subcon = subcon

    def _parse(self, stream, context, path):
        if _at_end(stream):
            context._tail_absent = True
            return None
        return self.subcon._parsereport(stream, context, path)

    def _build(self, obj, stream, context, path):
        if obj is None:
            context._tail_absent = True
            return None
        if getattr(context, "_tail_absent", False):
            raise c.ValidationError("a trailing section cannot follow an absent one", path=path)
        self.subcon._build(obj, stream, context, path)
        return obj


class End(c.Construct):
    """The end of the data: trailing bytes are an error."""

    kind = "end"

    def __init__(self):
        super().__init__()
        self.flagbuildnone = True

    def _parse(self, stream, context, path):
        if not _at_end(stream):
            raise c.TerminatedError("trailing bytes after the last section", path=path)

    def _build(self, obj, stream, context, path):
        return None


# The text grammar of the header and the legacy lines, canonical forms only (so that reading and
# writing back give the same bytes).  The generator copies these patterns into the fast codec.
DIGITS = 10  # MNN reads each decimal into a 32-bit int: a decimal has at most 10 digits (after a sign)
COUNT = rb"0|[1-9][0-9]{0,%d}" % (DIGITS - 1)  # a count: no sign, no leading zero
INT = rb"0|-?[1-9][0-9]{0,%d}" % (DIGITS - 1)  # an id or a number column: no "-0", no leading zero
COUNTS_LINE = rb"(" + COUNT + rb") (" + COUNT + rb") (" + COUNT + rb")\n"  # header line 2
IDS_LINE = rb"(?:(?:" + INT + rb")(?: (?:" + INT + rb"))*)?( ?)\n"  # header line 3, group 1: trailing space
_COUNTS_RE = re.compile(COUNTS_LINE)
_DECIMAL_BOUND = 10 ** DIGITS  # the magnitude of the smallest int a decimal of DIGITS digits cannot write


def _fits_decimal(v) -> bool:
    """``v`` is an int that the text grammar can write (at most DIGITS digits)."""
    return isinstance(v, int) and not isinstance(v, bool) and -_DECIMAL_BOUND < v < _DECIMAL_BOUND
_IDS_RE = re.compile(IDS_LINE)


class HeaderLines(c.Construct):
    """The three text lines that open every MNN tokenizer file.

    ``magic`` and ``file_type`` make line 1 (``"430 4\\n"``); line 2 holds three decimal counts
    separated by one space, the lengths of the special, stop and prefix lists; line 3 holds the ids
    of those lists one after the other, separated by one space, either joined (the ``.mtok`` exporter)
    or each followed by a space (the legacy exporter).  A line 2 that does not count line 3's ids is
    refused: the tree holds the lists, so the counts are always their lengths.  Every decimal of the
    text formats is canonical and has at most ``DIGITS`` (10) digits: MNN reads it into a 32-bit int.
    """

    kind = "header"
    #: the roles of the header's ids, in the order of line 2's counts and of line 3
    ROLES = (
        ("special", "special ids: split out of the text whole, left out of decode"),
        ("stop", "stop ids: generation ends at any of them"),
        ("prefix", "prefix ids: put before every encode(text)"),
    )
    #: the tree fields: (name, schema descriptor, doc)
    FIELDS = (
        *((name, ("list", ("int",)), doc) for name, doc in ROLES),
        ("trailing_space", ("bool",),
         "line 3 ends every id with a space (legacy exporter) instead of joining with spaces"),
    )
    #: the raw lines' names (the Kaitai description reads the lines as they are): (name, doc)
    COUNTS = tuple((f"{name}_count", f"count of {name} ids (line 2, {nth} number)")
                   for (name, _), nth in zip(ROLES, ("first", "second", "third")))
    IDS_DOC = "line 3: " + ", then ".join(f"{name} ids" for name, _ in ROLES)

    def __init__(self, magic: int, file_type: int, ref: tuple[str, ...] = ()):
        super().__init__()
        self.ref = tuple(ref)
        self.magic = magic
        self.file_type = file_type
        self.magic_line = f"{magic} {file_type}\n".encode()

    def _parse(self, stream, context, path):
        line1 = stream.read(len(self.magic_line))
        if line1 != self.magic_line:
            raise c.ConstError(f"expected magic line {self.magic_line!r}, got {line1!r}", path=path)
        counts = _read_line(stream, path)
        m = _COUNTS_RE.fullmatch(counts)
        if not m:
            raise c.ValidationError(f"malformed count line {counts[:80]!r}", path=path)
        ids_line = _read_line(stream, path)
        m2 = _IDS_RE.fullmatch(ids_line)
        if not m2:
            raise c.ValidationError(f"malformed id line {ids_line[:80]!r}", path=path)
        body = ids_line[: len(ids_line) - 1 - len(m2.group(1))]
        ids = [int(x) for x in body.split(b" ")] if body else []
        lists = split_roles([int(m.group(k)) for k in (1, 2, 3)], ids)
        if lists is None:
            raise c.ValidationError(f"line 2 counts {counts[:-1]!r} but line 3 holds {len(ids)} ids", path=path)
        return {**lists, "trailing_space": bool(m2.group(1))}

    def _build(self, obj, stream, context, path):
        stream.write(self.magic_line)
        lists = [obj[name] for name, _ in self.ROLES]
        for ids in lists:
            if not isinstance(ids, list) or not all(_fits_decimal(i) for i in ids):
                raise c.ValidationError(f"header ids must be lists of ints of at most {DIGITS} digits", path=path)
        stream.write((" ".join(str(len(ids)) for ids in lists) + "\n").encode())
        ids = [i for role in lists for i in role]
        if obj["trailing_space"] and not ids:
            raise c.ValidationError("trailing_space needs at least one id", path=path)
        sep_end = " " if obj["trailing_space"] else ""
        stream.write((" ".join(str(i) for i in ids) + sep_end + "\n").encode())
        return obj


def split_roles(counts, ids) -> dict | None:
    """Line 3's ``ids`` cut into the header's role lists by line 2's ``counts`` (None when they
    do not count exactly those ids)."""
    if sum(counts) != len(ids):
        return None
    out, p = {}, 0
    for (name, _), n in zip(HeaderLines.ROLES, counts):
        out[name] = ids[p:p + n]
        p += n
    return out


def _read_line(stream, path) -> bytes:
    chunks = []
    while True:
        ch = stream.read(1)
        if ch == b"":
            raise c.StreamError("truncated header line", path=path)
        chunks.append(ch)
        if ch == b"\n":
            return b"".join(chunks)


class PostProcessorLayouts(c.Construct):
    """The post-processor program, the last section released MNN reads.  Two layouts share ``[u16 count]``:

    * ``current``: ``count`` ops of the ``ops`` union (what today's exporter writes);
    * ``legacy``: ``count`` u32 ids, meaning "sequence A, then these ids" (an older exporter).

    Readers take ``legacy`` when the bytes left after the count are exactly ``count * 4`` *and*
    those bytes are not exactly ``count`` well-formed ops.  MNN's C++ loader checks only the size,
    so it misreads a current program with three special ids per sequence op (whisper's
    ``SOT NOTIMESTAMPS A EOT`` is one); see FORMAT.md.
    """

    kind = "postprocessor"

    def __init__(self, count, legacy: Record, current: Record, op_union: Union):
        super().__init__()
        self.count = count
        self.legacy = legacy
        self.current = current
        self.op_union = op_union

    def _ops_fit(self, raw: bytes, n: int) -> bool:
        stream = io.BytesIO(raw)
        try:
            for _ in range(n):
                self.op_union.parse_stream(stream)
        except c.ConstructError:
            return False
        return stream.tell() == len(raw)

    def _parse(self, stream, context, path):
        n = self.count._parsereport(stream, context, path)
        here = stream.tell()
        rest = stream.read()
        stream.seek(here)
        if n > 0 and len(rest) == 4 * n and not self._ops_fit(rest, n):
            ids = [u32._parsereport(stream, context, path) for _ in range(n)]
            return {"type": self.legacy.record_name, "ids": ids}
        ops = [self.op_union._parsereport(stream, context, path) for _ in range(n)]
        return {"type": self.current.record_name, "ops": ops}

    def _build(self, obj, stream, context, path):
        kind = obj.get("type") if isinstance(obj, dict) else None
        if kind == self.legacy.record_name:
            ids = obj["ids"]
            raw = b"".join(u32.build(i) for i in ids)
            if not ids or self._ops_fit(raw, len(ids)):
                raise c.ValidationError(
                    "these ids would read back as the current layout; write a PostProcessorProgram",
                    path=path,
                )
            self.count._build(len(ids), stream, context, path)
            stream.write(raw)
        elif kind == self.current.record_name:
            ops = obj["ops"]
            self.count._build(len(ops), stream, context, path)
            for op in ops:
                self.op_union._build(op, stream, context, path)
        else:
            raise c.ValidationError(f"unknown post-processor layout {kind!r}", path=path)
        return obj


def doc_of(renamed) -> str:
    return getattr(renamed, "docs", "") or ""


# ---------------------------------------------------------------------------------------------
# Line-oriented blocks (legacy tokenizer.txt)
# ---------------------------------------------------------------------------------------------

_DEC = re.compile(COUNT)


class CountLine(c.Construct):
    """A text line of decimal counts separated by one space, e.g. ``"50265 50001\\n"``.

    Each count belongs to a later line table (``targets``: count name -> table name) and is derived
    from ``len()`` on build, like ``Count``.
    """

    kind = "countline"

    def __init__(self, *pairs: tuple[str, str]):
        super().__init__()
        self.pairs = list(pairs)
        self.flagbuildnone = True

    def _parse(self, stream, context, path):
        line = _read_line(stream, path)
        parts = line[:-1].split(b" ")
        if len(parts) != len(self.pairs) or not all(_DEC.fullmatch(x) for x in parts):
            raise c.ValidationError(f"expected {len(self.pairs)} decimal count(s), got {line[:80]!r}", path=path)
        for (name, _), v in zip(self.pairs, parts):
            context[name] = int(v)
        return None

    def _build(self, obj, stream, context, path):
        counts = [len(context[target]) for _, target in self.pairs]
        for (name, _), n in zip(self.pairs, counts):
            context[name] = n
        stream.write((" ".join(map(str, counts)) + "\n").encode())
        return None


class LineColumn:
    """One column of a line table.  ``kind``: ``base64`` (bytes, canonical padded base64),
    ``word`` (text without spaces), ``int`` (canonical decimal), ``raw`` (the whole line, bytes)."""

    def __init__(self, name: str, kind: str, doc: str):
        assert kind in ("base64", "word", "int", "raw")
        self.name, self.kind, self.doc = name, kind, doc


class LineTable(c.Construct):
    """``count`` lines, each the columns joined by one space and ended by ``\\n``.

    With one column the tree holds the values themselves, with more a tuple per line.
    ``final_newline``: the name of a later tree field that says whether the last line ends with
    ``\\n`` (the reference exporter copies ``merges.txt`` as it is, with or without one).
    """

    kind = "linetable"

    def __init__(self, count: str, *columns: LineColumn, final_newline: str | None = None):
        super().__init__()
        self.count = count
        self.columns = list(columns)
        self.final_newline = final_newline
        assert all(col.kind != "raw" for col in columns) or len(columns) == 1

    def _decode(self, line: bytes, path):
        parts = [line] if len(self.columns) == 1 else line.split(b" ")
        if len(parts) != len(self.columns):
            raise c.ValidationError(f"expected {len(self.columns)} space-separated values: {line[:80]!r}", path=path)
        values = []
        for col, part in zip(self.columns, parts):
            if col.kind == "base64":
                try:
                    v = base64.b64decode(part, validate=True)
                except (ValueError, binascii.Error):
                    raise c.ValidationError(f"bad base64 {part[:40]!r}", path=path) from None
                if base64.b64encode(v) != part:
                    raise c.ValidationError(f"non-canonical base64 {part[:40]!r}", path=path)
            elif col.kind == "int":
                if not re.fullmatch(INT, part):
                    raise c.ValidationError(f"bad integer {part[:40]!r}", path=path)
                v = int(part)
            elif col.kind == "word":
                try:
                    v = part.decode("utf-8")
                except UnicodeDecodeError:
                    raise c.ValidationError("invalid UTF-8", path=path) from None
            else:
                v = part
            values.append(v)
        return values[0] if len(values) == 1 else tuple(values)

    def _encode(self, row, path) -> bytes:
        values = [row] if len(self.columns) == 1 else list(row)
        parts = []
        for col, v in zip(self.columns, values):
            if col.kind == "base64":
                parts.append(base64.b64encode(plain_bytes(v)))
            elif col.kind == "int":
                if not _fits_decimal(v):
                    raise c.ValidationError(f"expected an int of at most {DIGITS} digits", path=path)
                parts.append(b"%d" % v)
            elif col.kind == "word":
                parts.append(v.encode("utf-8"))
            else:
                parts.append(plain_bytes(v))
        line = b" ".join(parts)
        if b"\n" in line or (len(self.columns) > 1 and len(line.split(b" ")) != len(self.columns)):
            raise c.ValidationError(f"value cannot be written on one line: {row!r:.60}", path=path)
        return line

    def _parse(self, stream, context, path):
        n = context[self.count]
        rows = []
        for i in range(n):
            chunks = []
            while True:
                ch = stream.read(1)
                if ch == b"" and self.final_newline and i == n - 1 and chunks:
                    context["_final_newline"] = False
                    break
                if ch == b"":
                    raise c.StreamError(f"truncated at line {i} of {n}", path=path)
                if ch == b"\n":
                    break
                chunks.append(ch)
            rows.append(self._decode(b"".join(chunks), path))
        if self.final_newline and "_final_newline" not in context:
            context["_final_newline"] = True
        return rows

    def _build(self, obj, stream, context, path):
        last_newline = True if not self.final_newline else context[self.final_newline]
        if self.final_newline and not last_newline and not (obj and self._encode(obj[-1], path)):
            raise c.ValidationError("final_newline false needs a last line that is not empty", path=path)
        for i, row in enumerate(obj):
            stream.write(self._encode(row, path))
            if i < len(obj) - 1 or last_newline:
                stream.write(b"\n")
        return obj


class FinalNewline(c.Construct):
    """Whether the last line of the preceding line table ended with ``\\n`` (tree field, no bytes)."""

    kind = "finalnewline"
    flagbuildnone = False

    def _parse(self, stream, context, path):
        return context.get("_final_newline", True)

    def _build(self, obj, stream, context, path):
        if not isinstance(obj, bool):
            raise c.ValidationError("final_newline must be a bool", path=path)
        return obj
