"""Generate ``generated/`` from the declarations in ``spec/``.

    python -m tools.generate           # write generated/
    python -m tools.generate --check   # exit 1 when generated/ differs from what the spec gives

It walks the construct declarations once (``spec_walk.py``: ``spec._dsl`` blocks carry names, docs,
count links and source links) and emits each output from its own module: ``tree.py`` (one dataclass
per record, a type alias per union, an ``IntEnum`` per enum block, the schema tables), ``codec.py``
(plain ``struct``/slice code: bounds-checked, bulk tables, no construct at run time; helpers in
``mtokspec/format/codec_support.py``), ``format.py`` (``FORMAT.md``, from ``templates/FORMAT.md.j2``) and
``ksy.py`` (``mtok.ksy`` and ``tokenizer_txt.ksy`` for Kaitai Struct).  Each dispatches on the block
kind through one table.  Nothing here knows the ``.mtok`` layout itself: it only knows how to read
and write each kind of block.
"""

from __future__ import annotations

import argparse
import sys

from .spec_walk import BANNER, ROOT, collect

from spec import mtok, txt  # noqa: E402  (spec_walk puts the repository root on sys.path)

from .codec import emit_codec
from .format import emit_format
from .ksy import KSY_LIMITS, emit_ksy, emit_txt_ksy
from .tree import emit_tree

OUT = ROOT / "generated"


def outputs() -> dict[str, str]:
    txt_roots = [r.record_name for r in txt.ROOTS.values()]
    m = collect(mtok.MtokFile, *txt.ROOTS.values())
    notes = (ROOT / "spec" / "NOTES.md").read_text(encoding="utf-8")
    txt_notes = (ROOT / "spec" / "NOTES_TXT.md").read_text(encoding="utf-8")
    return {
        "__init__.py": BANNER + '"""Generated from spec/: tree classes (tree.py) and the fast codec (codec.py)."""\n',
        "tree.py": emit_tree(m, mtok.MNN_COMMIT),
        "codec.py": emit_codec(m, ["MtokFile", *txt_roots]),
        "FORMAT.md": emit_format(m, "MtokFile", txt_roots, notes, txt_notes, KSY_LIMITS),
        "mtok.ksy": emit_ksy(
            m, "MtokFile",
            meta={"title": "MNN LLM tokenizer, binary .mtok (file type 4)", "file-extension": "mtok",
                  "license": "Apache-2.0", "ks-version": "0.11"},
        ),
        "tokenizer_txt.ksy": emit_txt_ksy(
            m, txt_roots,
            meta={"title": "MNN LLM tokenizer, legacy tokenizer.txt (file types 0-3)", "file-extension": "txt",
                  "license": "Apache-2.0", "ks-version": "0.11"},
            doc="MNN's legacy tokenizer.txt (file types 0-3): the three header lines of .mtok, a line of counts, "
                "then one line per entry.  Base64 columns are left as their text: Kaitai cannot decode base64.",
        ),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if generated/ is stale; write nothing")
    args = ap.parse_args(argv)
    stale = []
    for name, text in outputs().items():
        path = OUT / name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            stale.append(name)
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(path.suffix + ".tmp")
                tmp.write_text(text, encoding="utf-8")
                tmp.replace(path)
    if args.check:
        if stale:
            print("generated/ is stale: " + ", ".join(stale) + " (run: python -m tools.generate)")
            return 1
        print("generated/ is fresh")
        return 0
    print("wrote " + (", ".join(stale) if stale else "nothing (already fresh)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
