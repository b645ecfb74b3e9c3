"""Differential fuzzing of the ``mnn`` semantics against MNN's own C++ tokenizer (by hand).

    python -m tools.mnn_diff --driver $OUT/mnn_tok --texts 2000 FILE...   # corpus files, random text
    python -m tools.mnn_diff --driver $OUT/mnn_tok --trees 300            # generated files and text

The driver is ``../shared/tools/mnn-reference`` built from a git copy of alibaba/MNN (see its
README).  For each file, Hypothesis draws texts (pieces of the file's own tokens and special
tokens, white space runs, digits, byte-piece spellings, any Unicode), and every text goes through
``encode``, ``encode-raw`` and both decodes of the ids MNN gave, on both sides.  Mismatches are
printed with the file, the text and both results; the exit code is 1 when there is any.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.testing import strategies as mst
from mtokspec.runtime.mnn import MnnTokenizer, UndefinedInMnn

_SETTINGS = dict(database=None, deadline=None, suppress_health_check=list(HealthCheck))


def draw_all(strategy, n: int, seed: int) -> list:
    out: list = []

    @settings(max_examples=n, derandomize=False, **_SETTINGS)
    @given(strategy)
    def collect(x):
        out.append(x)

    random.seed(seed)
    collect()
    return out


def text_strategy(tree) -> st.SearchStrategy[str]:
    words: list[str] = []
    tokens = getattr(tree, "tokens", None)
    if tokens is None and hasattr(tree, "pieces"):
        tokens = [p[0] for p in tree.pieces]
    if tokens is None and hasattr(tree, "model"):
        tokens = [row[0] for row in tree.model.vocab]
        words += [a.content for a in tree.added_tokens]
    for tok in (tokens or [])[:: max(1, len(tokens or []) // 400)]:
        try:
            words.append(tok.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    parts = [
        st.text(max_size=6),
        st.sampled_from([" ", "  ", "\t", "\n", "\r\n", "\u3000", "\u00a0", "  \n ", "0", "123", "12345",
                         "<0x41>", "<0x0A>", "\u2581", "'s", "'LL", "##", "é", "e\u0301", "中文", "😀", "\u200b",
                         "\ufffd", "\x00", "\x7f", "\u0085", "[UNK]", "!?.,"]),
    ]
    if words:
        parts.append(st.sampled_from(words))
    return st.lists(st.one_of(*parts), max_size=12).map("".join)


def _limit_memory() -> None:
    # MNN has no bounds checks: a hostile file can make it allocate until the machine runs out
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def run_driver(driver: str, mode: str, path: str, payloads: list[dict], timeout: float = 30) -> list[dict]:
    """One result per payload; when the batch dies (a crash, a hang, out of memory), each payload
    is run alone so that only the ones that fail are marked failed."""
    data = "".join(json.dumps(p, ensure_ascii=True) + "\n" for p in payloads).encode()
    try:
        proc = subprocess.run([driver, mode, path], input=data, capture_output=True, timeout=timeout,
                              preexec_fn=_limit_memory)
        lines = [json.loads(x) for x in proc.stdout.decode("utf-8", "surrogateescape").split("\n") if x.strip()]
    except subprocess.TimeoutExpired:
        lines = []
    if len(lines) == len(payloads):
        return lines
    if len(payloads) == 1:
        return [{"error": "MNN crashed, hung or ran out of memory"}]
    return [run_driver(driver, mode, path, [p], timeout=5)[0] for p in payloads]


def _text_of(r: dict):
    if "hex" in r:
        return bytes.fromhex(r["hex"])
    if "text" in r:
        return r["text"].encode("utf-8", "surrogatepass")
    return r


undefined = [0]


def compare_file(driver: str, path: str, texts: list[str], report) -> tuple[int, int]:
    tree = mtokspec.parse(Path(path).read_bytes())
    try:
        ours = MnnTokenizer.from_tree(tree)
    except UndefinedInMnn:
        return 0, 0
    enc = run_driver(driver, "encode", path, [{"text": t} for t in texts])
    raw = run_driver(driver, "encode-raw", path, [{"text": t} for t in texts])
    ids = [r.get("ids", []) for r in enc]
    dst = run_driver(driver, "decode", path, [{"ids": i} for i in ids])
    dsq = run_driver(driver, "decode-seq", path, [{"ids": i} for i in ids])
    tried = bad = 0
    for k, text in enumerate(texts):
        theirs = {"encode": enc[k].get("ids", enc[k]), "encode_raw": raw[k].get("ids", raw[k]),
                  "decode_stream": _text_of(dst[k]), "decode_seq": _text_of(dsq[k])}
        try:
            mine = {"encode": ours.encode(text), "encode_raw": ours.encode(text, add_special_tokens=False),
                    "decode_stream": ours.decode_bytes(ids[k], stream=True), "decode_seq": ours.decode_bytes(ids[k])}
        except UndefinedInMnn:
            mine = None
        if any(isinstance(v, dict) for v in theirs.values()):
            # MNN failed (an exception, a crash, out of memory): we should have refused too
            if mine is not None:
                report(path, "MNN failed, we did not", text, mine, theirs)
                bad += 1
            continue
        tried += 1
        if mine is None:
            undefined[0] += 1  # MNN's behaviour is undefined here: it answered, from memory it does not own
            continue
        for key in theirs:
            if mine[key] != theirs[key]:
                bad += 1
                report(path, key, text, mine[key], theirs[key])
                break
    return tried, bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help=".mtok or tokenizer.txt files")
    ap.add_argument("--driver", required=True, help="the built mnn_tok")
    ap.add_argument("--texts", type=int, default=500, help="texts per file (default 500)")
    ap.add_argument("--trees", type=int, default=0, help="generated files to try (each with --texts // 10 texts)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    shown = [0]

    def report(path, key, text, mine, theirs):
        if shown[0] < 30:
            print(f"MISMATCH {path} {key} text={text!r}\n   ours  ={mine!r}\n   MNN's ={theirs!r}")
        shown[0] += 1

    total_tried = total_bad = 0
    for path in args.files:
        tree = mtokspec.parse(Path(path).read_bytes())
        texts = draw_all(text_strategy(tree), args.texts, args.seed)
        tried, bad = compare_file(args.driver, path, texts, report)
        print(f"{path}: {tried} texts, {bad} mismatches")
        total_tried += tried
        total_bad += bad
    if args.trees:
        trees = draw_all(st.one_of(mst.mtok_files(), mst.txt_files()), args.trees, args.seed)
        with tempfile.TemporaryDirectory() as tmp:
            for n, tree in enumerate(trees):
                path = str(Path(tmp) / f"t{n}.mtok")
                Path(path).write_bytes(mtokspec.build(tree))
                texts = draw_all(text_strategy(tree), max(5, args.texts // 10), args.seed + n)
                tried, bad = compare_file(args.driver, path, texts, report)
                total_tried += tried
                total_bad += bad
                if bad:
                    print(f"  tree {n}: {bad} mismatches: {tree!r}"[:2000])
        print(f"generated files: {len(trees)}")
    print(f"total: {total_tried} texts compared, {total_bad} mismatches, {undefined[0]} where MNN's behaviour "
          "is undefined (we refuse; MNN answers from memory it does not own)")
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
