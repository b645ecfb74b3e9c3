"""Agreement of the corpus files' MNN outputs with the ``mnn`` semantics and with HF (by hand).

    python -m tools.mnn_report [CORPUS]                  # default ../shared/corpus
    python -m tools.mnn_report --record benchmarks/records/mnn_agreement.json   # also write the record

For each corpus ``mnn.mtok``/``mnn.txt`` and each of MNN's four recorded outputs: how many cases the
``mnn`` semantics reproduces, and how many cases MNN agrees with HF (the reference ids and texts of
``ref_*.json``).  The README's agreement table is generated from the record
(``python -m tools.readme_tables``).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

from mtokspec.runtime.mnn import MnnTokenizer

TEXT_SETS = ("en", "zh", "code", "edge", "mixed")


def _bytes(v) -> bytes:
    return bytes.fromhex(v["hex"]) if isinstance(v, dict) else v.encode("utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="?", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    ap.add_argument("--record", type=Path, metavar="JSON", help="write the counts to this record")
    args = ap.parse_args(argv)
    corpus = args.corpus
    rows = []
    print("| file | output | mnn semantics = MNN | MNN = HF |")
    print("|---|---|---|---|")
    for folder in sorted((corpus / "tok").iterdir()):
        ref_mnn = json.loads((folder / "ref_mnn.json").read_text(encoding="utf-8"))
        for fn, sets in ref_mnn["files"].items():
            tok = MnnTokenizer.from_file(folder / fn)
            same = {o: 0 for o in ("encode", "encode_raw", "decode_stream", "decode_seq")}
            like_hf = dict(same)
            total = 0
            for ts in TEXT_SETS:
                texts = json.loads((corpus / "text" / f"{ts}.json").read_text(encoding="utf-8"))
                hf = json.loads((folder / f"ref_{ts}.json").read_text(encoding="utf-8"))
                for k, text in enumerate(texts):
                    total += 1
                    ids = hf["no_special"][k]
                    ours = {"encode": tok.encode(text), "encode_raw": tok.encode(text, add_special_tokens=False),
                            "decode_stream": tok.decode_bytes(ids, stream=True), "decode_seq": tok.decode_bytes(ids)}
                    hf_out = {"encode": hf["special"][k], "encode_raw": ids,
                              "decode_stream": hf["decode_no_special"][k].encode(),
                              "decode_seq": hf["decode_no_special"][k].encode()}
                    for o in same:
                        rec = sets[ts][o][k]
                        rec = _bytes(rec) if o.startswith("decode") else rec
                        same[o] += ours[o] == rec
                        like_hf[o] += rec == hf_out[o]
            for o in same:
                print(f"| {folder.name}/{fn} | {o} | {same[o]}/{total} | {like_hf[o]}/{total} |")
                rows.append({"file": f"{folder.name}/{fn}", "output": o, "cases": total,
                             "mnn_semantics_equals_mnn": same[o], "mnn_equals_hf": like_hf[o]})
            mnn_commit = ref_mnn.get("mnn_commit")
    if args.record:
        record = {"made_by": "python -m tools.mnn_report --record", "date": date.today().isoformat(),
                  "mnn_commit": mnn_commit, "rows": rows}
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
