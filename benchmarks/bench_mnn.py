"""Benchmark the ``mnn`` semantics against MNN's own C++ tokenizer (run by hand, not a test).

    MNN_TOK_BIN=/path/to/mnn_tok python benchmarks/bench_mnn.py [--lines N] [--tok NAME ...] [--record]

Every ratio is a speed ratio, **the other's time / ours** (above 1: ours is faster).

With ``MNN_TOK_BIN`` set (the driver of ``../shared/tools/mnn-reference``), for each corpus file
(``../shared/corpus/tok/*/mnn.mtok`` and ``mnn.txt``) and bench text: the first ``--lines``
(5,000) distinct lines, each encoded once (``encode(line, add_special_tokens=False)``; MNN:
``mnn_tok bench FILE LINES raw``, its ``encode(text, false)`` per line) by a tokenizer loaded fresh
for the pass; best of ``--passes`` (2) passes, ours and MNN's interleaved in the same run.  Load is
``Tokenizer.from_file(..., semantics="mnn")`` against MNN's ``load_ms`` (best of the passes).
Without ``MNN_TOK_BIN`` the other side is the HF semantics of the same file
(``Tokenizer.from_file``), measured the same way.

The compiled module (``mtokspec/speedups.py``) is measured when built; ``MTOKSPEC_PURE=1`` measures
the pure-Python path.  ``--record`` merges the ratios into ``benchmarks/records/speed.json``
(section ``mnn-cpp-<path>`` or ``mnn-hf-<path>``, path ``compiled`` or ``pure``); ``python -m
tools.readme_tables`` puts them in the README's mnn table.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from records import record

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
KINDS = ("en", "zh", "code")


def distinct_lines(kind: str, n: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for line in (CORPUS / "text" / f"bench_{kind}.txt").read_text(encoding="utf-8").splitlines():
        if line and line not in seen:
            seen.add(line)
            out.append(line)
            if len(out) == n:
                break
    return out


def ours(path: Path, lines: list[str], semantics: str) -> tuple[float, float]:
    """(load seconds, encode seconds) of one pass with a fresh tokenizer."""
    import mtokspec

    gc.collect()
    t0 = time.perf_counter()
    tok = mtokspec.Tokenizer.from_file(path, semantics=semantics)
    t1 = time.perf_counter()
    encode = tok.encode
    for line in lines:
        encode(line, add_special_tokens=False)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def mnn(binary: str, path: Path, lines_file: Path) -> tuple[float, float]:
    """(load seconds, encode seconds) of one ``mnn_tok bench`` pass."""
    out = subprocess.run([binary, "bench", str(path), str(lines_file), "raw"], capture_output=True, text=True,
                         check=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    if r.get("errors"):
        raise RuntimeError(f"mnn_tok bench: {r['errors']} errors on {path}")
    return r["load_ms"] / 1000, r["seconds"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=5000, help="distinct lines per bench text (default 5000)")
    ap.add_argument("--passes", type=int, default=2, help="passes per measurement, the best kept (default 2)")
    ap.add_argument("--tok", nargs="*", help="corpus tokenizer names (default: all)")
    ap.add_argument("--record", action="store_true", help="merge the ratios into benchmarks/records/speed.json")
    args = ap.parse_args()
    if not CORPUS.is_dir():
        print(f"no corpus at {CORPUS}", file=sys.stderr)
        return 2
    from mtokspec import speedups

    binary = os.environ.get("MNN_TOK_BIN")
    other = "MNN C++" if binary else "HF semantics"
    files = sorted(p for p in CORPUS.glob("tok/*/mnn.*") if p.suffix in (".mtok", ".txt")
                   and (not args.tok or p.parent.name in args.tok))
    texts = {k: distinct_lines(k, args.lines) for k in KINDS}
    print(f"mnn semantics ({'compiled' if speedups.enabled() else 'pure'} path) against {other}: "
          f"the other's time / ours, best of {args.passes}, {args.lines} distinct lines per text")
    print(f"{'file':<36} " + " ".join(f"{k:>7}" for k in (*KINDS, "load")))
    values: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        line_files = {}
        for k, lines in texts.items():
            line_files[k] = Path(tmp) / f"{k}.txt"
            line_files[k].write_text("\n".join(lines) + "\n", encoding="utf-8")
        for path in files:
            label = f"{path.parent.name} {path.name}"
            row: dict[str, float] = {}
            best_load = [math.inf, math.inf]
            for k in KINDS:
                mine = theirs = math.inf
                for _ in range(args.passes):  # interleaved: ours, theirs, ours, theirs
                    load, enc = ours(path, texts[k], "mnn")
                    mine = min(mine, enc)
                    best_load[0] = min(best_load[0], load)
                    if binary:
                        load, enc = mnn(binary, path, line_files[k])
                    else:
                        load, enc = ours(path, texts[k], "hf")
                    theirs = min(theirs, enc)
                    best_load[1] = min(best_load[1], load)
                row[k] = theirs / mine
            row["load"] = best_load[1] / best_load[0]
            values[label] = row
            print(f"{label:<36} " + " ".join(f"{row[c]:>7.2f}" for c in (*KINDS, "load")), flush=True)
    enc = [v[k] for v in values.values() for k in KINDS]
    geo = math.exp(sum(map(math.log, enc)) / len(enc)) if enc else float("nan")
    print(f"encode geometric mean {geo:.2f}; lowest {min(enc):.2f}; load lowest {min(v['load'] for v in values.values()):.2f}")
    if args.record:
        values["geometric mean"] = {"encode": geo}
        record(f"mnn-{'cpp' if binary else 'hf'}-{'compiled' if speedups.enabled() else 'pure'}", values)
    return 0


if __name__ == "__main__":
    sys.exit(main())
