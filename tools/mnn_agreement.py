"""How often MNN gives Hugging Face's answer, for the exporter's file and for ``--target mnn`` (by hand).

    python -m tools.mnn_agreement [--corpus DIR] [--file NAME=PATH ...]
    MNN_TOK_BIN=/path/mnn_tok python -m tools.mnn_agreement      # MNN's real C++ runtime
    MNN_TEST_BIN=/path/test_tokenizer python -m tools.mnn_agreement --goldens   # + MNN's device test
    ... --record       # also write benchmarks/records/mnn_target.json (the README's table)

For every corpus folder ``tok/<name>/`` the table of issue 21: encode (``encode(text)`` against HF
with special tokens), raw (``encode(text, false)`` against HF without), stream (the engine's
per-id decode of HF's ids, joined, against HF's decode) and seq (``Tokenizer::decode(ids)`` against
HF's decode), over the corpus texts, for the exporter's ``mnn.mtok`` and for
``convert.from_hf(folder, target="mnn")``.  The runtime is MNN's own ``mnn_tok`` when
``MNN_TOK_BIN`` is set, else the ``mnn`` semantics (which agrees with it on every recorded case).
``--goldens`` also writes ``goldens`` for each folder with the ``--target mnn`` file and runs
MNN's ``test_tokenizer`` over them (``MNN_TEST_BIN``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

TEXT_SETS = ("en", "zh", "code", "edge", "mixed")
OUTPUTS = ("encode", "raw", "stream", "seq")
RECORD = Path(__file__).resolve().parents[1] / "benchmarks" / "records" / "mnn_target.json"


def _bytes(v) -> bytes:
    return bytes.fromhex(v["hex"]) if isinstance(v, dict) else v.encode("utf-8")


def mnn_tok_run(binary: str, mode: str, path: Path, payloads: list[dict]) -> list[dict]:
    """One answer per payload from ``mnn_tok MODE FILE`` (lines cut at ``\n`` only: its JSON keeps
    U+2028 and U+0085 as they are)."""
    stdin = "".join(json.dumps(p, ensure_ascii=True) + "\n" for p in payloads).encode("ascii")
    proc = subprocess.run([binary, mode, str(path)], input=stdin, capture_output=True, timeout=1200)
    rows = [json.loads(line) for line in proc.stdout.decode("utf-8", "surrogateescape").split("\n") if line]
    if len(rows) != len(payloads):
        raise RuntimeError(f"mnn_tok {mode} {path}: {len(rows)} answers for {len(payloads)} requests: "
                           f"{proc.stderr.decode(errors='replace')[-500:]}")
    return rows


def mnn_tok_text(r: dict):
    """A decode answer's bytes (None: MNN's error)."""
    if "error" in r:
        return None
    return bytes.fromhex(r["hex"]) if r.get("invalid_utf8") else r["text"].encode("utf-8")


def _mnn_tok_outputs(binary: str, path: Path, texts: list[str], ids: list[list[int]]) -> dict[str, list]:
    """encode, raw, stream and seq of ``mnn_tok``; each stream in a fresh process, as a response
    follows its prompt's encode (the format-next patch starts a stream there)."""
    tp = [{"text": x} for x in texts]
    ip = [{"ids": i} for i in ids]
    return {"encode": [r.get("ids") for r in mnn_tok_run(binary, "encode", path, tp)],
            "raw": [r.get("ids") for r in mnn_tok_run(binary, "encode-raw", path, tp)],
            "stream": [mnn_tok_text(mnn_tok_run(binary, "decode", path, [p])[0]) for p in ip],
            "seq": [mnn_tok_text(r) for r in mnn_tok_run(binary, "decode-seq", path, ip)]}


def _semantics_outputs(path: Path, texts: list[str], ids: list[list[int]]) -> dict[str, list]:
    from mtokspec.runtime.mnn import MnnTokenizer

    tok = MnnTokenizer.from_file(path)
    return {"encode": [tok.encode(x) for x in texts], "raw": [tok.encode(x, add_special_tokens=False) for x in texts],
            "stream": [tok.decode_bytes(i, stream=True) for i in ids], "seq": [tok.decode_bytes(i) for i in ids]}


def agreement(folder: Path, path: Path, corpus: Path, binary: str | None) -> dict[str, tuple[int, int]]:
    """``{output: (agreeing cases, cases)}`` of ``path`` run by MNN against HF's references."""
    texts, special, raw, decoded = [], [], [], []
    for ts in TEXT_SETS:
        texts += json.loads((corpus / "text" / f"{ts}.json").read_text(encoding="utf-8"))
        ref = json.loads((folder / f"ref_{ts}.json").read_text(encoding="utf-8"))
        special += ref["special"]
        raw += ref["no_special"]
        decoded += [d.encode("utf-8") for d in ref["decode_no_special"]]
    got = _mnn_tok_outputs(binary, path, texts, raw) if binary else _semantics_outputs(path, texts, raw)
    want = {"encode": special, "raw": raw, "stream": decoded, "seq": decoded}
    return {o: (sum(a == b for a, b in zip(got[o], want[o])), len(texts)) for o in OUTPUTS}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(Path(__file__).resolve().parents[2] / "shared" / "corpus"))
    ap.add_argument("--goldens", action="store_true", help="also run MNN's test_tokenizer ($MNN_TEST_BIN) on goldens")
    ap.add_argument("--only", action="append", default=[], help="corpus folder name (repeatable)")
    ap.add_argument("--record", action="store_true",
                    help=f"write {RECORD.relative_to(RECORD.parents[2])} (needs MNN_TOK_BIN and MNN_TEST_BIN, all folders)")
    args = ap.parse_args(argv)
    import mtokspec
    from mtokspec.convert import from_hf

    corpus = Path(args.corpus)
    binary = os.environ.get("MNN_TOK_BIN")
    test_bin = os.environ.get("MNN_TEST_BIN")
    if args.record and (not binary or not test_bin or args.only):
        ap.error("--record needs MNN_TOK_BIN and MNN_TEST_BIN (MNN's own code) and every folder")
    args.goldens = args.goldens or args.record
    rows: list[dict] = []
    runtime = f"MNN's mnn_tok ({binary})" if binary else "the mnn semantics"
    print(f"runtime: {runtime}\n")
    print("| tokenizer | file | encode | raw | stream | seq |" + (" test_tokenizer |" if args.goldens else ""))
    print("|---|---|---|---|---|---|" + ("---|" if args.goldens else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for folder in sorted((corpus / "tok").iterdir()):
            if args.only and folder.name not in args.only:
                continue
            target = Path(tmp) / folder.name / "tokenizer.mtok"
            target.parent.mkdir(parents=True)
            target.write_bytes(mtokspec.build(from_hf(folder, target="mnn").tree))
            for label, path in (("exporter", folder / "mnn.mtok"), ("--target mnn", target)):
                res = agreement(folder, path, corpus, binary)
                cells = [f"{a}/{n}" if a != n else f"{a}" for a, n in (res[o] for o in OUTPUTS)]
                extra = ""
                device = ""
                if args.goldens:
                    models = Path(tmp) / ("models-" + label.strip("-").replace(" ", "-"))
                    device = _device_test(folder, path, models, test_bin)
                    extra = " " + device + " |"
                rows.append({"tokenizer": folder.name, "file": label, "cases": res["encode"][1],
                             **{o: res[o][0] for o in OUTPUTS}, "test_tokenizer": device})
                print(f"| {folder.name} | {label} | " + " | ".join(cells) + " |" + extra)
    if args.record:
        import datetime as dt

        from mtokspec.runtime.mnn import MNN_COMMIT

        commit = (Path(binary).parent / "MNN_COMMIT")
        RECORD.write_text(json.dumps({
            "made_by": "python -m tools.mnn_agreement --record", "date": dt.date.today().isoformat(),
            "mnn_commit": commit.read_text().strip() if commit.is_file() else MNN_COMMIT,
            "runtime": "mnn_tok (MNN's C++ tokenizer)", "rows": rows}, indent=1) + "\n", encoding="utf-8")
    return 0


def _device_test(folder: Path, path: Path, models: Path, test_bin: str | None) -> str:
    """MNN's ``test_tokenizer`` over goldens of ``folder`` with ``path`` as the model's file."""
    from mtokspec.convert.mnn_target.goldens import goldens, jsonl

    d = models / folder.name
    d.mkdir(parents=True, exist_ok=True)
    (d / "tokenizer.mtok").write_bytes(path.read_bytes())
    (d / "test_cases.jsonl").write_text(jsonl(goldens(folder)[0]), encoding="utf-8")
    if not test_bin:
        return "(MNN_TEST_BIN not set)"
    proc = subprocess.run([test_bin, str(models), folder.name], capture_output=True, timeout=1200)
    out = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout.decode("utf-8", "replace"))
    lines = [line for line in out.splitlines() if "passed" in line]
    return lines[0].strip() if lines else f"no result (exit {proc.returncode})"


if __name__ == "__main__":
    sys.exit(main())
