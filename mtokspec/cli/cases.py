"""Text cases from a file, for ``compare --text`` and ``diff --text``: a JSON list of strings,
JSON Lines (one JSON string, or an object with a ``"text"`` string, per line) or plain text
(one case per line, the newline not part of it)."""

from __future__ import annotations

import json

from mtokspec.errors import CasesError

__all__ = ["CasesError", "parse_cases", "read_cases"]


def _one(value: object, where: str) -> str:
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        text: str = value["text"]
        return text
    if not isinstance(value, str):
        raise CasesError(f"{where}: expected a string or an object with a \"text\" string, got {value!r:.60}")
    return value


def parse_cases(data: bytes, name: str = "<cases>") -> list[str]:
    """The cases ``data`` holds; the format is told by its first character and by whether it parses
    as JSON (``[``: a JSON list; every line a JSON string or object: JSON Lines; else plain text)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CasesError(f"{name}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise CasesError(f"{name}: starts like a JSON list but is not JSON: {e}") from None
        if not isinstance(value, list):
            raise CasesError(f"{name}: expected a JSON list")
        return [_one(v, f"{name}[{i}]") for i, v in enumerate(value)]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if lines and all(line.startswith(('"', "{")) for line in lines if line.strip()):
        try:
            return [_one(json.loads(line), f"{name}:{n}") for n, line in enumerate(lines, 1) if line.strip()]
        except (ValueError, RecursionError):
            pass  # not JSON Lines after all: plain text whose lines start with quotes
    return [line.removesuffix("\r") for line in lines]


def read_cases(path: str) -> list[str]:
    """The cases in the file at ``path`` (``-``: standard input); see :func:`parse_cases`."""
    from mtokspec.reading import read_input

    return parse_cases(read_input(path), path)
