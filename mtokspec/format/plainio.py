"""YAML and JSON text for the plain form of a tree (``mtokspec.to_dict``).

YAML is what a format author edits by hand: table rows are one line each (``- [token, 17]``), text
stays readable, and characters YAML would fold or drop (NEL, line/paragraph separators, BOM,
control characters) are written as escapes so that loading gives back the same text.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from mtokspec.errors import MtokFormatError

__all__ = ["dump_yaml", "load_yaml", "dump_json", "load_json", "dumps", "loads"]

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
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
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as e:
        raise MtokFormatError(f"not valid YAML: {e}") from None


def dump_json(doc: dict) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def load_json(text: str) -> Any:
    try:
        return json.loads(text)
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
