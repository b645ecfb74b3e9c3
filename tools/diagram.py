"""Render ``generated/mtok.svg``: the Kaitai compiler's graphviz output of ``generated/mtok.ksy``, laid out by ``dot``.

    python -m tools.diagram           # write generated/mtok.svg
    python -m tools.diagram --check   # exit 1 when it was rendered from another .ksy

Needs node with the pinned compiler (``npm ci --prefix tools/ksc``) and Graphviz's ``dot``
(Debian: ``apt-get install graphviz``); ``python -m tools.generate`` does not, so it stays runnable
everywhere.  ``dot`` does not lay out the same graph the same way twice (measured: Graphviz 2.42,
two of three runs differed), so the svg records the sha256 of the .ksy it was rendered from and
``--check`` compares that, without node or ``dot``.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KSY = ROOT / "generated" / "mtok.ksy"
SVG = ROOT / "generated" / "mtok.svg"


def ksy_digest() -> str:
    return hashlib.sha256(KSY.read_bytes()).hexdigest()


def recorded_digest(svg: bytes) -> str | None:
    found = re.search(rb"<!-- rendered from generated/mtok.ksy sha256 ([0-9a-f]{64}) -->", svg)
    return found.group(1).decode() if found else None


def render() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["node", str(ROOT / "tools" / "ksc" / "compile.js"), str(KSY), tmp, "graphviz"],
                       check=True, capture_output=True, text=True)
        dot_file = next(Path(tmp, "graphviz").glob("*.dot"))
        svg = subprocess.run(["dot", "-Tsvg", str(dot_file)], check=True, capture_output=True).stdout
    declaration, rest = svg.split(b"\n", 1)
    return declaration + f"\n<!-- rendered from generated/mtok.ksy sha256 {ksy_digest()} -->\n".encode() + rest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if generated/mtok.svg is stale; write nothing")
    args = ap.parse_args(argv)
    fresh = SVG.exists() and recorded_digest(SVG.read_bytes()) == ksy_digest()
    if args.check:
        print("generated/mtok.svg is " + ("fresh" if fresh else "stale (run: python -m tools.diagram)"))
        return 0 if fresh else 1
    if fresh:
        print("generated/mtok.svg is already fresh")
        return 0
    SVG.write_bytes(render())
    print("wrote generated/mtok.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
