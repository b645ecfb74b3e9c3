"""The README's generated sections: the text between a pair of markers, rewritten or checked."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def replace_section(readme: str, begin: str, end: str, body: str) -> str:
    """``readme`` with the text between the ``begin`` and ``end`` marker lines replaced by ``body``."""
    if begin not in readme or end not in readme:
        raise SystemExit(f"{README}: the markers {begin.strip()!r} ... {end.strip()!r} are missing")
    head, rest = readme.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + body + end + tail


def main(render: Callable[[str], str], doc: str | None, command: str, argv: list[str] | None = None) -> int:
    """Rewrite README.md with ``render``, or with ``--check`` exit 1 when it is stale."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only check; exit 1 when README.md is stale")
    args = ap.parse_args(argv)
    old = README.read_text(encoding="utf-8")
    new = render(old)
    if args.check:
        if new != old:
            print(f"README.md is stale: run python -m {command}", file=sys.stderr)
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    return 0
