"""Format next, checked against MNN's own code (by hand; the recordings are what the tests replay).

    MNN_TOK_BIN=<released mnn_tok> python -m tools.mnn_next_check compat   [DIR ...] [--rows] [--record]
    MNN_TOK_BIN=<patched mnn_tok>  python -m tools.mnn_next_check patched  [DIR ...] [--rows] [--record]

For each HF folder (``--rows``: the folders built with HF ``tokenizers`` around every row of the
``--target mnn`` decision table; with no DIR and no ``--rows``: the corpus's ``tok/*/``), the
``--target mnn-next`` file runs over the probe texts and the corpus texts, four outputs each (encode,
encode without specials, the engine's per-id decode of HF's ids, each stream in a fresh process, and
``decode(ids)``).

``compat``: a released ``mnn_tok`` (built from MNN at ``patches/mnn/MNN_COMMIT`` without the patch)
on the file and on the same file without its extension: the count of differing answers must be 0.
``patched``: ``mnn_tok`` built by ``tools/mnn_next_build.sh`` against the ``mnn-next`` semantics.
``--record`` writes the binary's answers (a sha256 per folder and output, no text) to
``tests/fixtures/format_next/<mode>.json``; ``tests/test_format_next.py`` replays them without MNN.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from tools.folder_agreement import semantics_outputs
from tools.mnn_agreement import OUTPUTS, _mnn_tok_outputs

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "tests" / "fixtures" / "format_next"
CORPUS = ROOT.parent / "shared" / "corpus"


def texts_for(tree, extra: list[str]) -> list[str]:
    """The probe texts of a converted tree, then ``extra``."""
    from mtokspec.convert.mnn_target.reference import probe_texts

    return probe_texts([a.content for a in sorted(tree.added_tokens, key=lambda a: not a.special)], extra)


def source_sha256(folder: Path) -> str:
    """sha256 of the folder's ``tokenizer.json`` (some decision-table folders come out of HF's
    trainers differently from run to run: a replay skips a folder that is not the recorded one)."""
    return hashlib.sha256((folder / "tokenizer.json").read_bytes()).hexdigest()


def digest(values: list) -> str:
    """sha256 of one output's answers (ids lists, decoded bytes as hex, None)."""
    plain = [v.hex() if isinstance(v, bytes) else v for v in values]
    return hashlib.sha256(json.dumps(plain, separators=(",", ":")).encode()).hexdigest()


def case(folder: Path, extra: list[str]):
    """``(extended tree, texts, HF's ids of the texts)`` of one folder."""
    import tokenizers

    from mtokspec.convert import from_hf

    tree = from_hf(folder, target="mnn-next").tree
    texts = texts_for(tree, extra)
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    return tree, texts, [hf.encode(x, add_special_tokens=False).ids for x in texts]


def run(mode: str, folder: Path, binary: str, extra: list[str], work: Path) -> dict:
    """One folder's row: cases, differing answers per output, and the binary's digests."""
    import mtokspec

    tree, texts, ids = case(folder, extra)
    path = work / (folder.name + ".mtok")
    path.write_bytes(mtokspec.build(tree))
    got = _mnn_tok_outputs(binary, path, texts, ids)
    if mode == "compat":
        plain = work / (folder.name + ".plain.mtok")
        plain.write_bytes(mtokspec.build(replace(tree, extension=None)))
        want = _mnn_tok_outputs(binary, plain, texts, ids)
    else:
        want = semantics_outputs(tree, "mnn-next", texts, ids)
    row: dict = {"folder": folder.name, "cases": len(texts), "extension": tree.extension is not None,
                 "source_sha256": source_sha256(folder)}
    examples = []
    for o in OUTPUTS:
        bad = [k for k, (a, b) in enumerate(zip(got[o], want[o])) if a != b]
        row[o] = len(bad)
        examples += [(o, texts[k], got[o][k], want[o][k]) for k in bad[:2]]
    row["digests"] = {o: digest(got[o]) for o in OUTPUTS}
    row["examples"] = [repr(e)[:300] for e in examples]
    return row


def folders_of(args) -> tuple[list[Path], list[str], tempfile.TemporaryDirectory | None]:
    """The folders to check, the texts probed besides each file's own, and the folder of built rows."""
    folders = list(args.folders)
    extra: list[str] = []
    tmp = None
    if args.rows:
        sys.path.insert(0, str(ROOT))
        from mtokspec.convert.mnn_target.variants import rows as variant_rows
        from tests._support.variant_folders import PROBE_EXTRA, folder_for

        tmp = tempfile.TemporaryDirectory()
        extra += PROBE_EXTRA
        folders += [folder_for(v, Path(tmp.name)) for v in variant_rows() if v.example is not None]
    elif not folders:
        folders = sorted(p for p in (CORPUS / "tok").glob("*") if (p / "tokenizer.json").is_file())
        from tools.folder_agreement import corpus_texts

        extra += corpus_texts()
    return folders, extra, tmp


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("compat", "patched"))
    ap.add_argument("folders", nargs="*", type=Path)
    ap.add_argument("--rows", action="store_true", help="the decision table's folders (built with HF tokenizers)")
    ap.add_argument("--record", action="store_true", help="write tests/fixtures/format_next/<mode>.json")
    args = ap.parse_args(argv)
    binary = os.environ.get("MNN_TOK_BIN")
    if not binary:
        ap.error("set MNN_TOK_BIN (released: ../shared/tools/mnn-reference/build.sh; patched: tools/mnn_next_build.sh)")
    from mtokspec.convert import ConversionError

    folders, extra, tmp = folders_of(args)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for folder in folders:
            try:
                row = run(args.mode, folder, binary, extra, Path(work))
            except ConversionError as e:
                print(f"{folder.name}: refused ({str(e)[:100]})")
                continue
            rows.append(row)
            print(f"{row['folder']}: {row['cases']} cases, differing: "
                  + ", ".join(f"{o} {row[o]}" for o in OUTPUTS), *row["examples"], sep="\n    ")
    if tmp is not None:
        tmp.cleanup()
    total = sum(r["cases"] for r in rows) * len(OUTPUTS)
    bad = sum(r[o] for r in rows for o in OUTPUTS)
    what = "extended vs plain file on released MNN" if args.mode == "compat" else "mnn-next semantics vs patched MNN"
    print(f"\n{what}: {bad} differing of {total} answers ({len(rows)} folders)")
    if args.record:
        commit = Path(binary).parent / "MNN_COMMIT"
        RECORDS.mkdir(parents=True, exist_ok=True)
        out = RECORDS / f"{args.mode}{'-rows' if args.rows else '-corpus'}.json"
        out.write_text(json.dumps({
            "made_by": f"python -m tools.mnn_next_check {args.mode}" + (" --rows" if args.rows else ""),
            "mnn_commit": commit.read_text().strip() if commit.is_file() else "unknown",
            "patched": args.mode == "patched",
            "rows": [{k: r[k] for k in ("folder", "cases", "extension", "source_sha256", "digests", *OUTPUTS)}
                     for r in rows]},
            indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out.relative_to(ROOT)}")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
