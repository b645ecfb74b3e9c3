"""Benchmark the runtime tokenizer against HF ``tokenizers`` (run by hand, not a test).

    TOKENIZERS_PARALLELISM=false python benchmarks/bench_runtime.py [--quick N] [--tok NAME ...]

Every ratio is a speed ratio, **HF's time / ours** (above 1: faster than HF; below 1: slower).

The headline is what a user meets with new text: for each corpus tokenizer and bench text, the first
``--distinct`` (15,000) distinct lines, each encoded once (``add_special_tokens=False``) by a
tokenizer loaded fresh for the pass, HF single-threaded in the same run, best of two passes.

Then, for each corpus tokenizer (``../shared/corpus/tok/*/mnn.mtok`` next to ``tokenizer.json``):
load time (ours: ``Tokenizer.from_file`` = parse + build; HF: ``Tokenizer.from_file``; best of 5, teardown
excluded; our struct/regex caches are cleared before each run, so every load pays what a first load
in a fresh process pays); "ready" adds the first ``encode`` of one ordinary line (``FIRST_LINE``),
which is when our tokenizer builds the tables it keeps lazily (Unigram lattice tables, BPE merge
analysis), so the two columns together show what load defers; and for each
``text/bench_*.txt`` the encode throughput in MB/s with one ``encode`` call per line, ours cold
(fresh tokenizer, empty caches), ours warm (same lines again) and HF single-threaded, with the
ratios measured in the same run.  Also checks that both give the same ids.  The loads of all
tokenizers are timed first, then the encodes (so no load is timed on a heap an encode run left).
Memory: what a tokenizer holds after load and after its first line (tracemalloc).

With the compiled module built (``mtokspec/speedups.py``) this measures the compiled path;
``MTOKSPEC_PURE=1`` measures the pure-Python one.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import time
from pathlib import Path

from records import record

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
SKIP = {"tokenizer-wiki"}  # its Whitespace pre-tokenizer is dropped by the exporter
FIRST_LINE = "The quick brown fox jumps over the lazy dog, then naps in the sun."


def _cold_caches() -> None:
    """Forget what an earlier load left in the library caches (compiled struct formats and regex
    patterns), so a repeated load costs what the first one in a fresh process costs."""
    import re
    import struct

    import regex
    struct._clearcache()
    re.purge()
    regex.purge()


def _best(f, repeat: int, setup=None) -> float:
    """Best of ``repeat`` timings of ``f()``; the result is kept alive until the clock stopped, so
    its teardown (and the previous one's) is not counted, and each run starts after a collection
    (and ``setup()``, not timed)."""
    best = math.inf
    for _ in range(repeat):
        if setup is not None:
            setup()
        gc.collect()
        t0 = time.perf_counter()
        r = f()
        best = min(best, time.perf_counter() - t0)
        del r
    return best


def gm(xs) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def distinct_lines(lines: list[str], n: int) -> list[str]:
    """The first ``n`` distinct non-empty lines, in order."""
    return list(dict.fromkeys(s for s in lines if s))[:n]


def new_text(folders, texts, n: int, tokenizers, Tokenizer) -> dict[str, dict[str, float]]:
    """The headline: distinct lines, once each, on a tokenizer loaded fresh for the pass (best of
    two passes per side), as speed ratios HF time / ours."""
    names = list(texts)
    print(f"new text: the first {n} distinct lines of each bench text, each encoded once by a fresh "
          "tokenizer; speed vs HF = HF's time / ours (above 1 is faster)")
    print(f"{'tokenizer':24} " + " ".join(f"{name.replace('bench_', ''):>7}" for name in names) + "    same ids")
    ratios = []
    recorded: dict[str, dict[str, float]] = {}
    for folder in folders:
        mtok, hf_json = folder / "mnn.mtok", str(folder / "tokenizer.json")
        cells, same = [], []
        for name in names:
            lines = distinct_lines(texts[name], n)

            def ours_pass():
                _cold_caches()
                tok = Tokenizer.from_file(mtok)
                enc = tok.encode
                gc.collect()
                t0 = time.perf_counter()
                out = [enc(s) for s in lines]
                return time.perf_counter() - t0, out

            def hf_pass():
                tok = tokenizers.Tokenizer.from_file(hf_json)
                enc = tok.encode
                gc.collect()
                t0 = time.perf_counter()
                out = [enc(s, add_special_tokens=False).ids for s in lines]
                return time.perf_counter() - t0, out

            (t_ours, ours), (t_hf, ref) = min(ours_pass(), ours_pass(), key=lambda r: r[0]), \
                min(hf_pass(), hf_pass(), key=lambda r: r[0])
            ratios.append(t_hf / t_ours)
            recorded.setdefault(folder.name, {})[name.replace("bench_", "encode ")] = round(t_hf / t_ours, 2)
            cells.append(f"{t_hf / t_ours:7.2f}")
            same.append(sum(a == b for a, b in zip(ours, ref)) * 100 // max(1, len(lines)))
        print(f"{folder.name:24} " + " ".join(cells) + "    " + "/".join(f"{p}%" for p in same))
    print(f"geometric mean (speed vs HF, above 1 is faster): {gm(ratios):.2f}; lowest {min(ratios):.2f}")
    print()
    return recorded


def memory(folders, Tokenizer) -> None:
    """What a loaded tokenizer holds (tracemalloc: Python objects and the compiled cores' tables),
    after load and after the first line."""
    import tracemalloc

    print(f"{'tokenizer':24} {'after load':>10} {'ready':>9}   (MB, tracemalloc)")
    for folder in folders:
        mtok = folder / "mnn.mtok"
        Tokenizer.from_file(mtok).encode(FIRST_LINE)  # imports and module caches: not the tokenizer's
        gc.collect()
        tracemalloc.start()
        try:
            tok = Tokenizer.from_file(mtok)
            gc.collect()
            load = tracemalloc.get_traced_memory()[0]
            tok.encode(FIRST_LINE)
            gc.collect()
            ready = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        del tok
        print(f"{folder.name:24} {load / 1e6:10.2f} {ready / 1e6:9.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", type=int, metavar="N", help="use only the first N lines of each text")
    ap.add_argument("--tok", nargs="*", help="tokenizer folder names (default: all)")
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--distinct", type=int, default=15000, metavar="N",
                    help="distinct lines per text in the new-text headline (default 15000)")
    ap.add_argument("--headline-only", action="store_true", help="only the new-text headline")
    ap.add_argument("--record", action="store_true",
                    help="merge the encode, load and ready speeds into benchmarks/records/speed.json "
                         "(the README's table is generated from it: python -m tools.readme_tables)")
    args = ap.parse_args(argv)
    try:
        import tokenizers
    except ImportError:
        print("HF tokenizers is not installed (pip install tokenizers)", file=sys.stderr)
        return 2
    from mtokspec import Tokenizer

    if not args.corpus.is_dir():
        print(f"corpus not found at {args.corpus}", file=sys.stderr)
        return 2
    folders = sorted(p for p in (args.corpus / "tok").iterdir() if (p / "mnn.mtok").is_file())
    folders = [p for p in folders if (args.tok and p.name in args.tok) or (not args.tok and p.name not in SKIP)]
    texts = {}
    for b in sorted((args.corpus / "text").glob("bench_*.txt")):
        lines = b.read_text(encoding="utf-8").split("\n")
        if args.quick:
            lines = lines[: args.quick]
        texts[b.stem] = lines

    encode = new_text(folders, texts, args.distinct, tokenizers, Tokenizer)
    if args.record:
        record("encode", encode)
    if args.headline_only:
        return 0

    ratios_cold, ratios_warm, load_ratios, ready_ratios = [], [], [], []
    print(f"{'tokenizer':24} {'load ours':>9} {'load hf':>8} {'speed':>6}   "
          f"{'ready ours':>10} {'ready hf':>9} {'speed':>6}   (speed = HF time / ours)")
    rows = []
    loads: dict[str, dict[str, float]] = {}
    # Every load is timed before any encoding: timed after the other tokenizers' encode runs, whose
    # garbage leaves the heap fragmented, the last tokenizer's load was 15-20% slower (HF's is not
    # affected), so its number would depend on the order of the folders.
    for folder in folders:
        mtok = folder / "mnn.mtok"
        hf_json = str(folder / "tokenizer.json")
        ours_load = _best(lambda: Tokenizer.from_file(mtok), 5, _cold_caches)
        hf_load = _best(lambda: tokenizers.Tokenizer.from_file(hf_json), 5)

        def ours_ready():
            t = Tokenizer.from_file(mtok)
            t.encode(FIRST_LINE)
            return t

        def hf_ready():
            t = tokenizers.Tokenizer.from_file(hf_json)
            t.encode(FIRST_LINE, add_special_tokens=False)
            return t
        ours_rd = _best(ours_ready, 5, _cold_caches)
        hf_rd = _best(hf_ready, 5)
        load_ratios.append(ours_load / hf_load)
        ready_ratios.append(ours_rd / hf_rd)
        loads[folder.name] = {"load": round(hf_load / ours_load, 1), "ready": round(hf_rd / ours_rd, 1)}
        print(f"{folder.name:24} {ours_load * 1e3:8.1f}ms {hf_load * 1e3:7.1f}ms {hf_load / ours_load:6.2f}   "
              f"{ours_rd * 1e3:9.1f}ms {hf_rd * 1e3:8.1f}ms {hf_rd / ours_rd:6.2f}")
    print()
    if args.record:
        record("load", loads)
    memory(folders, Tokenizer)
    for folder in folders:
        mtok = folder / "mnn.mtok"
        hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        for name, lines in texts.items():
            mb = sum(len(s.encode("utf-8")) for s in lines) / 1e6
            tok = Tokenizer.from_file(mtok)
            enc = tok.encode
            # Both sides run on the same heap: results kept for the comparison become tuples, which
            # the collector stops tracking, so neither side's collections walk the other's ids.
            gc.collect()
            t0 = time.perf_counter()
            ours = [enc(s) for s in lines]
            cold = time.perf_counter() - t0
            ours = list(map(tuple, ours))
            gc.collect()
            t0 = time.perf_counter()
            for s in lines:
                enc(s)
            warm = time.perf_counter() - t0
            hfe = hf.encode
            gc.collect()
            t0 = time.perf_counter()
            ref = [hfe(s, add_special_tokens=False).ids for s in lines]
            hft = time.perf_counter() - t0
            ref = list(map(tuple, ref))
            same = sum(a == b for a, b in zip(ours, ref))
            rc, rw = hft / cold, hft / warm
            ratios_cold.append(rc)
            ratios_warm.append(rw)
            rows.append((folder.name, name, mb / cold, mb / warm, mb / hft, rc, rw, same, len(lines)))
    print()
    print(f"{'tokenizer':24} {'text':11} {'ours cold':>10} {'ours warm':>10} {'hf':>8} "
          f"{'cold×hf':>8} {'warm×hf':>8}  same ids")
    for n, t, c, w, h, rc, rw, same, total in rows:
        print(f"{n:24} {t:11} {c:7.2f}MB/s {w:7.2f}MB/s {h:5.2f}MB/s {rc:8.2f} {rw:8.2f}  {same}/{total}")

    print()
    print(f"geometric mean encode speed vs HF (above 1 is faster): cold {gm(ratios_cold):.2f}, "
          f"warm {gm(ratios_warm):.2f}")
    print(f"geometric mean load speed vs HF (HF time / ours, above 1 is faster): {gm([1 / r for r in load_ratios]):.2f}, "
          f"ready {gm([1 / r for r in ready_ratios]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
