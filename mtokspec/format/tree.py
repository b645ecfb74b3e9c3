"""The parsed form of a tokenizer file: one dataclass per record and per variant.

The classes are generated from ``spec/`` (``generated/tree.py``); this module re-exports them and
converts trees to and from plain data (dicts, lists, str, int, float, bool) for YAML and JSON.

Plain form: a record is a dict of its fields; a union variant adds ``"type": <class name>``; a table
row is a list; raw bytes are text when they are valid UTF-8, else ``{"hex": "..."}``; the root
carries ``"format": "mtok"``.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Iterator
from typing import Any, NamedTuple, NoReturn

from mtokspec._generated import tree as _t
from mtokspec._generated.tree import *  # noqa: F403
from mtokspec._generated.tree import CLASSES, ENUMS, MNN_COMMIT, SCHEMA, UNIONS, VARIANTS
from mtokspec.format.codec_support import value_text
from mtokspec.errors import MtokFormatError

__all__ = [*CLASSES, *UNIONS, *ENUMS, "TokenizerFile", "FORMATS", "format_key", "to_dict", "from_dict", "make_header", "header_roles", "HeaderRoles",
           "ROOT_TYPES", "MNN_COMMIT", "LEGACY_ROOTS", "walk_stage", "sequence_fields", "OversizeNumber",
           "HEADER_ROLES"]

#: the ``format`` key of the plain form -> root class
FORMATS: dict[str, type] = {
    "mtok": _t.MtokFile,
    "txt-sentencepiece": _t.SentencePieceTxtFile,
    "txt-tiktoken": _t.TiktokenTxtFile,
    "txt-bert": _t.BertTxtFile,
    "txt-huggingface": _t.HuggingFaceTxtFile,
}
_FORMAT_OF = {cls: name for name, cls in FORMATS.items()}

ROOT_TYPES = _t.ROOT_TYPES
"""Each whole-file class -> its type number (line 1 is ``430 <type>``): ``MtokFile`` 4, legacy 0-3."""

LEGACY_ROOTS: tuple[type, ...] = tuple(cls for cls in ROOT_TYPES if cls is not _t.MtokFile)
"""The legacy ``tokenizer.txt`` classes (types 0-3), for ``isinstance``."""

TokenizerFile = (_t.MtokFile | _t.SentencePieceTxtFile | _t.TiktokenTxtFile | _t.BertTxtFile
                 | _t.HuggingFaceTxtFile)
"""Any whole file: ``.mtok`` or one of the legacy ``tokenizer.txt`` types."""


def format_key(tree: Any) -> str:
    """The ``format`` key of a whole-file tree (``mtok``, ``txt-bert``, ...)."""
    try:
        return _FORMAT_OF[type(tree)]
    except KeyError:
        raise MtokFormatError(f"not a whole-file tree: {type(tree).__name__}") from None


class HeaderRoles(NamedTuple):
    """The header's ids by role."""

    special: list[int]
    stop: list[int]
    prefix: list[int]


def header_roles(h: _t.Header) -> HeaderRoles:
    """The header's id lists (copies), in the file's order: special, stop, prefix."""
    return HeaderRoles(list(h.special), list(h.stop), list(h.prefix))


_SEQUENCE_FIELDS: dict[type, tuple[str, ...]] = {
    CLASSES[name]: fields
    for name, (union, _tag) in VARIANTS.items()
    if (fields := tuple(f for f, d in SCHEMA[name] if d == ("list", ("union", union))))
}
"""Each sequence stage (``SequenceNormalizer``, ...) -> the fields holding its children, from the schema."""


def sequence_fields(node: Any) -> tuple[str, ...]:
    """The fields holding a sequence stage's children (``()`` for any other node)."""
    return _SEQUENCE_FIELDS.get(type(node), ())


def walk_stage(node: Any, path: str = "") -> Iterator[tuple[Any, str]]:
    """``(node, path)`` of a stage node and, for a sequence, of its descendants (depth first)."""
    yield node, path
    for name in _SEQUENCE_FIELDS.get(type(node), ()):
        for k, child in enumerate(getattr(node, name) or ()):
            yield from walk_stage(child, f"{path}.{name}[{k}]")


def make_header(special: Iterable[int] = (), stop: Iterable[int] = (), prefix: Iterable[int] = (),
                trailing_space: bool = False) -> _t.Header:
    """A header of these id lists; ``trailing_space`` only when it holds an id (the format needs one)."""
    a, b, c = list(special), list(stop), list(prefix)
    return _t.Header(a, b, c, trailing_space=trailing_space and bool(a or b or c))


#: the header's role lists, in the order of line 2's counts and line 3's ids
HEADER_ROLES: tuple[str, ...] = tuple(name for name, d in SCHEMA["Header"] if d[0] == "list")
_FLAT_HEADER = tuple(f"{name}_count" for name in HEADER_ROLES)


def _header_from_flat(value: dict[str, Any], path: list[str]) -> dict[str, Any]:
    """A header mapping in the flat layout older dumps used (three counts and one ``ids`` list)
    as role lists; other mappings unchanged."""
    if "ids" not in value and not any(k in value for k in _FLAT_HEADER):
        return value
    if any(name in value for name in HEADER_ROLES):
        _fail(path, "a header holds either the role lists or the flat counts and ids, not both")
    counts = []
    for k in _FLAT_HEADER:
        n = _from_plain(value.get(k, 0), ("int",), [*path, "." + k])
        if n < 0:
            _fail([*path, "." + k], f"flat header: a count must not be negative, got {n}")
        counts.append(n)
    ids = _from_plain(value.get("ids", []), ("list", ("int",)), [*path, ".ids"])
    if sum(counts) != len(ids):
        _fail([*path, ".ids"], f"flat header: the counts {'+'.join(map(str, counts))} do not count its "
                               f"{len(ids)} ids")
    out = {k: v for k, v in value.items() if k not in _FLAT_HEADER and k != "ids"}
    p = 0
    for name, n in zip(HEADER_ROLES, counts):
        out[name], p = ids[p:p + n], p + n
    return out


def _bytes_to_plain(b: bytes) -> Any:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": b.hex()}


def _to_plain(value: Any, d: tuple[Any, ...]) -> Any:
    k = d[0]
    if k == "bytes":
        return _bytes_to_plain(value)
    if k in ("int", "float", "bool", "str"):
        return value
    if k == "optional":
        return None if value is None else _to_plain(value, d[1])
    if k == "list":
        inner = d[1]
        if inner[0] in ("int", "float", "str"):
            return list(value)
        return [_to_plain(v, inner) for v in value]
    if k == "row":
        return [_to_plain(v, cd) for v, cd in zip(value, d[1])]
    if k in ("record", "union"):
        return _record_to_plain(value)
    raise TypeError(d)


def _record_to_plain(obj: Any) -> dict[str, Any]:
    name = type(obj).__name__
    out: dict[str, Any] = {}
    if name in VARIANTS:
        out["type"] = name
    for field, d in SCHEMA[name]:
        out[field] = _to_plain(getattr(obj, field), d)
    return out


def to_dict(tree: Any) -> dict[str, Any]:
    """Plain data for a whole file tree (or any record or variant within it)."""
    out = _record_to_plain(tree)
    fmt = _FORMAT_OF.get(type(tree))
    return {"format": fmt, **out} if fmt else out


class OversizeNumber:
    """An integer too long to convert (``plainio`` loads one of more than ``plainio.MAX_DIGITS``
    digits as this): kept as its number of digits, refused by :func:`from_dict` with its path."""

    __slots__ = ("digits",)

    def __init__(self, text: str):
        self.digits = sum(ch.isdigit() for ch in text)

    def __repr__(self) -> str:
        return f"<an integer of {self.digits} digits>"


_INT_BITS = 64  # the widest int field; each field's own range is checked when the tree is built


def _fail(path: list[str], msg: str) -> NoReturn:
    raise MtokFormatError(msg, None, "".join(path).lstrip(".") or "<root>")


def _from_plain(value: Any, d: tuple[Any, ...], path: list[str]) -> Any:
    k = d[0]
    if k == "bytes":
        if isinstance(value, str):
            return value.encode("utf-8", "surrogatepass")
        if isinstance(value, dict) and set(value) == {"hex"} and isinstance(value["hex"], str):
            try:
                return bytes.fromhex(value["hex"])
            except ValueError:
                _fail(path, "bad hex string")
        if isinstance(value, (bytes, bytearray)):
            return bytes(value)
        _fail(path, f"expected text or {{hex: ...}}, got {type(value).__name__}")
    if k in ("int", "float") and isinstance(value, OversizeNumber):
        _fail(path, f"integer of {value.digits} digits: no field holds it")
    if k == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            _fail(path, f"expected an integer, got {value_text(value)}")
        if value.bit_length() > _INT_BITS:
            _fail(path, f"integer of {value.bit_length()} bits: no field holds more than {_INT_BITS}")
        return value
    if k == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            _fail(path, f"expected a number, got {value_text(value)}")
        try:
            return float(value)
        except OverflowError:
            _fail(path, f"integer of {int(value).bit_length()} bits is too large for a float")
    if k == "bool":
        if not isinstance(value, bool):
            _fail(path, f"expected true or false, got {value_text(value)}")
        return value
    if k == "str":
        if not isinstance(value, str):
            _fail(path, f"expected text, got {value_text(value)}")
        return value
    if k == "optional":
        return None if value is None else _from_plain(value, d[1], path)
    if k == "list":
        if not isinstance(value, (list, tuple)):
            _fail(path, f"expected a list, got {type(value).__name__}")
        out = []
        for i, v in enumerate(value):
            path.append(f"[{i}]")
            out.append(_from_plain(v, d[1], path))
            path.pop()
        return out
    if k == "row":
        if not isinstance(value, (list, tuple)) or len(value) != len(d[1]):
            _fail(path, f"expected a row of {len(d[1])} values, got {value_text(value)}")
        return tuple(_from_plain(v, cd, path) for v, cd in zip(value, d[1]))
    if k == "record":
        return _record_from_plain(value, d[1], path)
    if k == "union":
        if not isinstance(value, dict) or not isinstance(value.get("type"), str) \
                or value["type"] not in UNIONS[d[1]]:
            _fail(path, f"expected one of {', '.join(UNIONS[d[1]])} (a 'type' key), got {value_text(value)}")
        return _record_from_plain(value, value["type"], path)
    raise TypeError(d)


def _record_from_plain(value: Any, name: str, path: list[str]) -> Any:
    if not isinstance(value, dict):
        _fail(path, f"expected a mapping for {name}, got {type(value).__name__}")
    if name == "Header":
        value = _header_from_flat(value, path)
    fields = SCHEMA[name]
    known = {f for f, _ in fields} | {"type", "format"}
    extra = set(value) - known
    if extra:
        _fail(path, f"unknown field(s) for {name}: {', '.join(sorted(map(str, extra)))}")
    kwargs = {}
    for field, d in fields:
        if field in value:
            path.append("." + field)
            kwargs[field] = _from_plain(value[field], d, path)
            path.pop()
    return CLASSES[name](**kwargs)


def from_dict(data: dict[str, Any]) -> Any:
    """The tree for plain data made by :func:`to_dict` (or written by hand); ``format`` picks the root
    class (``mtok`` when absent).

    Missing fields take their defaults; unknown fields and wrong types raise MtokFormatError
    naming the field.
    """
    if not isinstance(data, dict):
        raise MtokFormatError(f"expected a mapping, got {type(data).__name__}")
    fmt = data.get("format", "mtok")
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise MtokFormatError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}", None, "format")
    return _record_from_plain(data, FORMATS[fmt].__name__, [])
