"""How often MNN gives Hugging Face's answer on any HF model folder (by hand; no recorded reference).

    python -m tools.folder_agreement DIR [DIR ...] [--json OUT]
    MNN_TOK_BIN=/path/mnn_tok MNN_TEST_BIN=/path/test_tokenizer python -m tools.folder_agreement DIR ...
    ... --record     # merge the rows into benchmarks/records/public_pipelines.json (the README's table)

For each folder: ``convert.from_hf(folder, target=...)`` (``--target``: mnn, or mnn-next), then, over the corpus texts
(``../shared/corpus/text/*.json`` when present, else the probe texts), HF ``tokenizers`` run live
on the folder's ``tokenizer.json`` (the reference: never mtokspec's own HF semantics) against MNN:
its real ``mnn_tok`` when ``MNN_TOK_BIN`` is set, else the target's semantics.  Outputs: encode
(with special tokens), raw (without), stream (the engine's per-id print of HF's ids, joined) and
seq (``decode(ids)``) against HF's ``decode(ids, skip_special_tokens=False)``; "lenient" counts a
decode with one extra leading space as passing, as MNN's ``test_tokenizer`` judges.  With
``MNN_TEST_BIN``, MNN's ``test_tokenizer`` also runs on ``goldens`` of the folder.  Each differing
output is put down to the rules that name it (:func:`causes`, the README's "why the rest differs").  ``--record``
(MNN's binaries only) merges the rows, by folder, into the target's section of
``benchmarks/records/public_pipelines.json``, each with the kind of folder ``tools.public_pipelines``
built it as.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mtokspec.names import DEVICES
from tools.mnn_agreement import OUTPUTS, _mnn_tok_outputs

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
RECORD = Path(__file__).resolve().parents[1] / "benchmarks" / "records" / "public_pipelines.json"
KEPT = ("folder", "kind", "commit", "cases", "encode", "raw", "stream", "stream_lenient", "seq", "seq_lenient",
        "test_tokenizer", "causes")
"""What the record keeps of a row."""


def corpus_texts() -> list[str]:
    """The corpus's texts (en, zh, code, edge, mixed), else the probe texts."""
    texts: list[str] = []
    for name in ("en", "zh", "code", "edge", "mixed"):
        p = CORPUS / "text" / f"{name}.json"
        if p.is_file():
            texts += json.loads(p.read_text(encoding="utf-8"))
    if not texts:
        from mtokspec.convert.mnn_target.reference import BASE_TEXTS
        texts = list(BASE_TEXTS)
    return texts


def semantics_outputs(source, semantics: str, texts: list[str], ids: list[list[int]]) -> dict[str, list]:
    """The four outputs of a file (a tree or a path) run in ``semantics`` (None where it refuses:
    undefined in MNN)."""
    from mtokspec import Error
    from mtokspec.tokenizer import load

    tok = load(source, semantics=semantics)

    def safe(f, *a, **k):
        try:
            return f(*a, **k)
        except Error:
            return None

    return {"encode": [safe(tok.encode, x) for x in texts],
            "raw": [safe(tok.encode, x, add_special_tokens=False) for x in texts],
            "stream": [safe(tok.decode_bytes, i, stream=True) for i in ids],
            "seq": [safe(tok.decode_bytes, i) for i in ids]}


def measure(folder: Path, texts: list[str], binary: str | None, test_bin: str | None, work: Path,
            target: str = "mnn") -> dict:
    """One folder's row: per output ``[agreeing, cases]``, lenient decode, convert time, device test."""
    import tokenizers

    import mtokspec
    from mtokspec.convert import from_hf

    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    t0 = time.perf_counter()
    conv = from_hf(folder, target=target)
    seconds = time.perf_counter() - t0
    path = work / folder.name / "tokenizer.mtok"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(mtokspec.build(conv.tree))
    special = [hf.encode(x, add_special_tokens=True).ids for x in texts]
    raw = [hf.encode(x, add_special_tokens=False).ids for x in texts]
    decoded = [hf.decode(i, skip_special_tokens=False).encode("utf-8") for i in raw]
    got = _mnn_tok_outputs(binary, path, texts, raw) if binary else semantics_outputs(path, target, texts, raw)
    want = {"encode": special, "raw": raw, "stream": decoded, "seq": decoded}
    row: dict = {"folder": folder.name, "cases": len(texts), "convert_s": round(seconds, 2)}
    differing = {o: [k for k, (a, b) in enumerate(zip(got[o], want[o])) if a != b] for o in OUTPUTS}
    for o in OUTPUTS:
        row[o] = len(texts) - len(differing[o])
        if o in ("stream", "seq"):
            row[o + "_lenient"] = sum(a == b or (a is not None and a == b" " + b) for a, b in zip(got[o], want[o]))
    row["examples"] = {o: [[repr(x) for x in (texts[k], want[o][k], got[o][k])] for k in differing[o][:3]]
                       for o in OUTPUTS}
    row["causes"] = causes(folder, conv.tree, target, texts, differing)
    row["report_first_line"] = conv.report.splitlines()[0] if getattr(conv, "report", None) else ""
    if test_bin:
        row["test_tokenizer"] = _device(folder, path, work / "models", test_bin)
    return row


def causes(folder: Path, tree, target: str, texts: list[str], differing: dict[str, list[int]]) -> dict[str, list[int]]:
    """``{rule: [encode, raw, stream, seq]}``: how many of each output's differing texts (``differing``:
    their indexes) each rule names, as ``compare --runtime`` names them (the decision table's
    ``format:`` rows and the divergence registry, on ``target``'s semantics against HF live); an
    output named by several rules counts for each.  ``semantics-gap``: the semantics give HF's
    answer where MNN's binary does not (a gap in mtokspec's model of MNN); ``unexplained``: no rule."""
    from mtokspec.convert.mnn_target.reference import HFReference
    from mtokspec.convert.mnn_target.report import rules_of
    from mtokspec.convert.mnn_target.variants import rows_of

    tj = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    cases = [(o, texts[i]) for o in OUTPUTS for i in differing[o]]
    named = rules_of(tree, HFReference(tj, tree), rows_of(tj), target, cases)
    out: dict[str, list[int]] = {}
    for (o, _), rules in zip(cases, named):
        for rule in (["semantics-gap"] if rules is None else rules or ["unexplained"]):
            out.setdefault(rule, [0] * len(OUTPUTS))[OUTPUTS.index(o)] += 1
    return dict(sorted(out.items()))


def record(rows: list[dict], target: str, binary: str, n_texts: int, path: Path = RECORD) -> None:
    """Merge ``rows`` (by folder, each with the commit that measured it) into ``target``'s section of
    the record, with the date, the MNN commit the binary was built from and HF ``tokenizers``' version."""
    import datetime as dt

    import tokenizers

    from benchmarks.records import _commit
    from mtokspec.runtime.mnn import MNN_COMMIT
    from tools.public_pipelines import all_specs

    kinds = {s.name: "tokenizers-api" if s.source == "tokenizers-api" else "converter" for s in all_specs()}
    doc = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"targets": {}}
    section = doc["targets"].get(target, {})
    by_folder = {r["folder"]: r for r in section.get("rows", [])}
    commit = _commit()
    for r in rows:
        row = {**r, "kind": kinds.get(r["folder"], "other"), "commit": commit}
        by_folder[r["folder"]] = {k: row[k] for k in KEPT if k in row}
    built = Path(binary).parent / "MNN_COMMIT"
    doc["targets"][target] = {
        "made_by": f"python -m tools.folder_agreement --target {target} --record", "date": dt.date.today().isoformat(),
        "mnn_commit": built.read_text().strip() if built.is_file() else MNN_COMMIT,
        "patched": target == "mnn-next", "tokenizers": tokenizers.__version__, "texts": n_texts, "rows": sorted(by_folder.values(), key=lambda r: r["folder"])}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _device(folder: Path, path: Path, models: Path, test_bin: str) -> str:
    from mtokspec.convert.mnn_target.goldens import goldens, jsonl

    d = models / folder.name
    d.mkdir(parents=True, exist_ok=True)
    (d / "tokenizer.mtok").write_bytes(path.read_bytes())
    (d / "test_cases.jsonl").write_text(jsonl(goldens(folder)[0]), encoding="utf-8")
    proc = subprocess.run([test_bin, str(models), folder.name], capture_output=True, timeout=1200)
    out = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout.decode("utf-8", "replace"))
    lines = [line for line in out.splitlines() if "passed" in line]
    return lines[0].strip() if lines else f"no result (exit {proc.returncode})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--json", type=Path, help="write the rows as JSON here")
    ap.add_argument("--examples", action="store_true", help="print the first differing cases")
    ap.add_argument("--target", choices=DEVICES, default="mnn",
                    help="convert --target (mnn-next: run MNN_TOK_BIN built with patches/mnn/)")
    ap.add_argument("--record", action="store_true",
                    help="merge the rows into benchmarks/records/public_pipelines.json (needs MNN_TOK_BIN and MNN_TEST_BIN)")
    args = ap.parse_args(argv)
    binary, test_bin = os.environ.get("MNN_TOK_BIN"), os.environ.get("MNN_TEST_BIN")
    if args.record and not (binary and test_bin):
        ap.error("--record measures MNN's own binaries: set MNN_TOK_BIN and MNN_TEST_BIN")
    texts = corpus_texts()
    print(f"target {args.target}; runtime: {binary or 'the ' + args.target + ' semantics'}; reference: HF tokenizers live; {len(texts)} texts\n")
    print("| folder | encode | raw | stream | seq | stream+1sp | seq+1sp | convert s | test_tokenizer |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    tot = [0, 0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        from mtokspec.convert import ConversionError

        for folder in args.folders:
            try:
                row = measure(folder, texts, binary, test_bin, Path(tmp), args.target)
            except ConversionError as e:  # refused: every output of the folder counts as differing
                print(f"| {folder.name} | refused: {str(e)[:80]} |")
                tot[2] += 4 * len(texts)
                continue
            rows.append(row)
            n = row["cases"]
            cells = [f"{row[o]}/{n}" for o in OUTPUTS] + [f"{row['stream_lenient']}/{n}", f"{row['seq_lenient']}/{n}"]
            print(f"| {row['folder']} | " + " | ".join(cells) + f" | {row['convert_s']} | {row.get('test_tokenizer', '')} |")
            tot[0] += sum(row[o] for o in OUTPUTS)
            tot[1] += row["encode"] + row["raw"] + row["stream_lenient"] + row["seq_lenient"]
            tot[2] += 4 * n
            if args.examples:
                for o, ex in row["examples"].items():
                    for e in ex:
                        print(f"    {o}: {' | '.join(e)}"[:400])
    print(f"\nall outputs: {tot[0]}/{tot[2]} = {100 * tot[0] / max(tot[2], 1):.1f}%; "
          f"decode with one extra leading space passing: {100 * tot[1] / max(tot[2], 1):.1f}%")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.record:
        assert binary is not None
        record(rows, args.target, binary, len(texts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
