"""Does the ``mnn`` semantics still give MNN's own answers on ``--target mnn`` files of new folders?

    MNN_TOK_BIN=/path/mnn_tok python -m tools.mnn_semantics_check DIR [DIR ...] [--record]
    MNN_TOK_BIN=/path/mnn_tok python -m tools.mnn_semantics_check --rows [--record]

For each HF folder (``--rows``: a folder built with HF ``tokenizers`` around every row of the
``--target mnn`` decision table, as the test suite builds them), the ``--target mnn`` file is run
by MNN's real ``mnn_tok`` and by the ``mnn`` semantics on the probe texts (and the corpus texts
when ``../shared/corpus`` is there): encode, encode without specials, ``decode(ids)`` and the
engine's per-id decode of HF's ids.  ``--record`` writes ``benchmarks/records/mnn_semantics_new.json``
(a test checks that every decision row is in it and agrees).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from tools.mnn_agreement import mnn_tok_run, mnn_tok_text

RECORD = Path(__file__).resolve().parents[1] / "benchmarks" / "records" / "mnn_semantics_new.json"


def check(folder: Path, binary: str, extra: list[str], work: Path) -> dict:
    """``{"folder", "cases", "agree", "examples"}`` for one folder's ``--target mnn`` file."""
    import tokenizers

    import mtokspec
    from mtokspec.convert import from_hf
    from mtokspec.convert.mnn_target.reference import probe_texts
    from mtokspec.runtime.mnn import MnnTokenizer

    tree = from_hf(folder, target="mnn").tree
    path = work / (folder.name + ".mtok")
    path.write_bytes(mtokspec.build(tree))
    tok = MnnTokenizer.from_tree(tree)
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    texts = probe_texts([a.content for a in tree.added_tokens], extra)
    ids = [hf.encode(x, add_special_tokens=False).ids for x in texts]
    theirs = list(zip([r.get("ids") for r in mnn_tok_run(binary, "encode", path, [{"text": x} for x in texts])],
                      [r.get("ids") for r in mnn_tok_run(binary, "encode-raw", path, [{"text": x} for x in texts])],
                      [mnn_tok_text(r) for r in mnn_tok_run(binary, "decode-seq", path, [{"ids": i} for i in ids])],
                      [mnn_tok_text(r) for r in mnn_tok_run(binary, "decode", path, [{"ids": i} for i in ids])]))
    agree, examples = 0, []
    for k, x in enumerate(texts):
        try:
            ours = (tok.encode(x), tok.encode(x, add_special_tokens=False), tok.decode_bytes(ids[k]),
                    tok.decode_bytes(ids[k], stream=True))
        except mtokspec.Error as e:  # undefined in MNN: MNN's answer is not a model's to match
            ours = (f"refused: {e}",) * 4
        if ours == theirs[k]:
            agree += 1
        elif len(examples) < 3:
            examples.append(repr((x, ours, theirs[k]))[:400])
    return {"folder": folder.name, "cases": len(texts), "agree": agree, "examples": examples}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="*", type=Path)
    ap.add_argument("--rows", action="store_true", help="the decision table's folders (built with HF tokenizers)")
    ap.add_argument("--record", action="store_true", help=f"write {RECORD.name}")
    args = ap.parse_args(argv)
    binary = os.environ.get("MNN_TOK_BIN")
    if not binary:
        ap.error("set MNN_TOK_BIN to MNN's mnn_tok (../shared/tools/mnn-reference/build.sh)")
    from tools.folder_agreement import corpus_texts

    extra = corpus_texts()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folders = list(args.folders)
        if args.rows:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from mtokspec.convert.mnn_target.variants import rows as variant_rows
            from tests._support.variant_folders import PROBE_EXTRA, folder_for

            extra += PROBE_EXTRA
            folders += [folder_for(v, Path(tmp) / "rows") for v in variant_rows() if v.example is not None]
        from mtokspec.convert import ConversionError

        for folder in folders:
            try:
                row = check(folder, binary, extra, Path(tmp))
            except ConversionError as e:  # a folder --target mnn refuses: no file to check
                print(f"{folder.name}: refused ({e})")
                continue
            rows.append(row)
            print(f"{row['folder']}: {row['agree']}/{row['cases']}", *row["examples"], sep="\n    ")
    total, agree = sum(r["cases"] for r in rows), sum(r["agree"] for r in rows)
    print(f"\nthe mnn semantics gives mnn_tok's four answers on {agree}/{total} cases")
    if args.record:
        import datetime as dt

        commit = Path(binary).parent / "MNN_COMMIT"
        RECORD.write_text(json.dumps({
            "made_by": "python -m tools.mnn_semantics_check" + (" --rows" if args.rows else ""),
            "date": dt.date.today().isoformat(),
            "mnn_commit": commit.read_text().strip() if commit.is_file() else "unknown",
            "rows": [{k: r[k] for k in ("folder", "cases", "agree")} for r in rows]}, indent=1) + "\n",
            encoding="utf-8")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
