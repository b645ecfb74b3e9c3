"""YAML and JSON text for the plain form of a tree (``mtokspec.to_dict``).

YAML is what a format author edits by hand: table rows are one line each (``- [token, 17]``), text
stays readable, and characters YAML would fold or drop (NEL, line/paragraph separators, BOM,
control characters) are written as escapes so that loading gives back the same text.

Loading refuses YAML aliases (a tree has none, and a few bytes of them name billions of nodes) and
never converts an integer of more than ``MAX_DIGITS`` digits: it loads as an :class:`OversizeNumber`,
which ``from_dict`` (and :func:`find_oversize`) refuse naming where it is.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from mtokspec.errors import MtokFormatError
from mtokspec.format.tree import OversizeNumber

__all__ = ["dump_yaml", "load_yaml", "dump_json", "load_json", "dumps", "loads", "OversizeNumber", "find_oversize",
           "MAX_DIGITS"]

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_DIGITS = 1000  # far beyond any field (64 bits: 20 digits), well within Python's int() limit (4300)


def _int(text: str) -> int | OversizeNumber:
    return OversizeNumber(text) if len(text) > MAX_DIGITS else int(text)


class _MtokLoader(_Loader):  # type: ignore[misc, valid-type]
    pass


def _construct_int(loader, node):
    if len(node.value) > MAX_DIGITS:
        return OversizeNumber(node.value)
    return loader.construct_yaml_int(node)


_MtokLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _refuse_shared(doc: Any) -> None:
    """Raise MtokFormatError when a list or mapping occurs twice in ``doc`` (a YAML alias): one
    visit per distinct container, so the walk is linear in the text however the aliases nest."""
    seen: set[int] = set()
    todo = [doc]
    while todo:
        v = todo.pop()
        if isinstance(v, (list, dict)):
            if id(v) in seen:
                raise MtokFormatError("YAML aliases (*name) are not accepted: write the value out")
            seen.add(id(v))
            todo.extend(v.values() if isinstance(v, dict) else v)


def find_oversize(doc: Any, root: str = "") -> str | None:
    """The path (``[0].content``) of the first :class:`OversizeNumber` in ``doc``, or None."""
    todo: list[tuple[Any, str]] = [(doc, root)]
    while todo:
        v, path = todo.pop()
        if isinstance(v, OversizeNumber):
            return path or "<root>"
        if isinstance(v, dict):
            todo.extend((x, f"{path}.{k}") for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            todo.extend((x, f"{path}[{i}]") for i, x in reversed(list(enumerate(v))))
    return None
_FRAGILE = frozenset("\x85\u2028\u2029\ufeff")


class _MtokDumper(_Dumper):  # type: ignore[misc, valid-type]
    pass


def _represent_str(dumper, value: str):
    style = '"' if any(c in _FRAGILE or not c.isprintable() for c in value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_MtokDumper.add_representer(str, _represent_str)


def dump_yaml(doc: dict) -> str:
    return yaml.dump(doc, Dumper=_MtokDumper, allow_unicode=True, sort_keys=False,
                     default_flow_style=None, width=1 << 16)


def load_yaml(text: str) -> Any:
    try:
        doc = yaml.load(text, Loader=_MtokLoader)
    except yaml.YAMLError as e:
        raise MtokFormatError(f"not valid YAML: {e}") from None
    _refuse_shared(doc)
    return doc


def dump_json(doc: dict) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def load_json(text: str) -> Any:
    try:
        return json.loads(text, parse_int=_int)
    except json.JSONDecodeError as e:
        raise MtokFormatError(f"not valid JSON: {e}") from None


def dumps(doc: dict, fmt: str) -> str:
    """``fmt`` is ``yaml`` or ``json``."""
    if fmt == "yaml":
        return dump_yaml(doc)
    if fmt == "json":
        return dump_json(doc)
    raise ValueError(f"unknown format {fmt!r}")


def loads(text: str, fmt: str | None = None) -> Any:
    """Load YAML or JSON; without ``fmt``, JSON when the text starts with ``{``, else YAML."""
    if fmt is None:
        fmt = "json" if text.lstrip().startswith("{") else "yaml"
    return load_json(text) if fmt == "json" else load_yaml(text)
