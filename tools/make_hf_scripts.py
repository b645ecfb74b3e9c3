"""Write ``mtokspec/runtime/hf/_scripts_data.py``: the scripts HF's ``UnicodeScripts`` pre-tokenizer tells apart.

    pip install tokenizers && python -m tools.make_hf_scripts [--check]

HF splits a text where the script changes (its own table, of an older Unicode version than
Python's: a character it does not list is ``Any``, as the space is, and joins the piece before it;
Hiragana, Katakana and U+30FC count as Han).  The table is measured here on HF ``tokenizers``
itself, by pre-tokenizing strings of every code point: which characters are ``Any`` (no split
against Latin nor Han), where the script changes along the code points, and which of those runs
share a script (named after the ``regex`` module's script of the run's first character).
``--check``: exit 1 when the written table is not what this ``tokenizers`` gives.
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

from tools.make_mnn_unicode import _wrapped

OUT = Path(__file__).resolve().parents[1] / "mtokspec" / "runtime" / "hf" / "_scripts_data.py"
BATCH = 4096
_CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def _pieces(pre, text: str) -> list[str]:
    return [p for p, _ in pre.pre_tokenize_str(text)]


def _transparent_to(pre, anchor: str, chars: list[str]) -> set[str]:
    """The characters that split nothing between two ``anchor`` characters: ``anchor``'s script or Any."""
    out: set[str] = set()
    for i in range(0, len(chars), BATCH):
        batch = chars[i:i + BATCH]
        text = anchor + anchor.join(batch) + anchor
        offsets, pos = [], 1
        for c in batch:  # where each probe character sits
            offsets.append(pos)
            pos += len(c) + 1
        starts = set()
        at = 0
        for piece in _pieces(pre, text):
            at = text.index(piece, at)
            starts.add(at)
            at += len(piece)
        # a character splits when a piece starts at it or at the anchor after it
        out.update(c for c, o in zip(batch, offsets) if o not in starts and o + len(c) not in starts)
    return out


def measure() -> tuple[list[int], list[str]]:
    """``(starts, names)``: from ``starts[i]`` up to the next start, code points of script ``names[i]``
    ("" for Any)."""
    import regex
    from tokenizers.pre_tokenizers import UnicodeScripts

    pre = UnicodeScripts()
    chars = [chr(c) for c in _CODE_POINTS]
    any_chars = _transparent_to(pre, "a", chars) & _transparent_to(pre, "\u4e00", chars)
    scripted = [c for c in chars if c not in any_chars]
    # runs of one script along the code points: HF's pieces of the scripted characters in order
    runs: list[list[str]] = []
    for i in range(0, len(scripted), BATCH):
        text = "".join(scripted[i:i + BATCH])
        pieces = _pieces(pre, text)
        if runs and _pieces(pre, runs[-1][-1] + pieces[0][0]) == [runs[-1][-1] + pieces[0][0]]:
            runs[-1].extend(pieces[0])
            pieces = pieces[1:]
        runs.extend(list(p) for p in pieces)
    # which runs share a script: compare each run's first character with one of each script so far
    reps: list[str] = []
    label_of_run: list[int] = []
    for run in runs:
        c = run[0]
        for k, r in enumerate(reps):
            if len(_pieces(pre, r + c)) == 1:
                label_of_run.append(k)
                break
        else:
            reps.append(c)
            label_of_run.append(len(reps) - 1)
    names: list[str] = []
    for r in reps:
        name = next((n for n in _SCRIPT_NAMES if regex.match(r"\p{sc=%s}" % n, r)), None)
        if name is None:  # the first words of the character's Unicode name (Tangut, Old Italic, ...)
            words = unicodedata.name(r, f"U+{ord(r):04X}").title().replace("-", "_").split()
            name = next((n for n in ("_".join(words[:k]) for k in range(1, len(words) + 1)) if n not in names),
                        f"U+{ord(r):04X}")
        names.append(name)
    script: dict[int, str] = {}
    for run, k in zip(runs, label_of_run):
        for c in run:
            script[ord(c)] = names[k]
    starts, labels = [0], [script.get(0, "")]
    for cp in range(1, 0x110000):
        s = script.get(cp, "")
        if s != labels[-1]:
            starts.append(cp)
            labels.append(s)
    return starts, labels


_SCRIPT_NAMES = ("Latin", "Common", "Han", "Inherited", "Cyrillic", "Greek", "Arabic", "Hebrew", "Hangul", "Thai",
                 "Devanagari", "Bengali", "Tamil", "Telugu", "Kannada", "Malayalam", "Gujarati", "Gurmukhi", "Oriya",
                 "Sinhala", "Armenian", "Georgian", "Ethiopic", "Khmer", "Lao", "Tibetan", "Myanmar", "Mongolian",
                 "Bopomofo", "Yi", "Syriac", "Thaana", "Cherokee")
"""Names for the scripts people meet most (the rest are named by the ``regex`` module's script)."""


def render(starts: list[int], labels: list[str], version: str) -> str:
    names = sorted(set(labels) - {""})
    index = {n: i + 1 for i, n in enumerate(names)}
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    lines = [
        f'"""The scripts HF ``tokenizers`` {version}\'s UnicodeScripts tells apart. Generated by tools/make_hf_scripts.py '
        '(measured on HF itself); do not edit."""',
        "",
        "from itertools import accumulate as _accumulate",
        "",
        f"TOKENIZERS_VERSION = {version!r}",
        f"SCRIPTS = {tuple(names)!r}",
        '"""Script names (index 0 of a run is Any: the space and what HF\'s table does not list)."""',
        "",
        "# code points from STARTS[i] up to the next start have script SCRIPTS[RUNS[i] - 1] (0: Any),",
        "# the starts written as the gaps between them",
        "_GAPS = (",
        *_wrapped([str(g) for g in gaps], " "),
        ")",
        "STARTS = (0, *_accumulate(map(int, ''.join(_GAPS).split())))",
        "RUNS = (",
        *_wrapped([str(index.get(label, 0)) for label in labels], " "),
    ]
    lines += [")", "RUNS = tuple(map(int, ''.join(RUNS).split()))", ""]
    return "\n".join(lines)


def measured_main(argv: list[str] | None, doc: str, out: Path, make: Callable[[str], tuple[str, str]]) -> int:
    """The command of a table measured on HF ``tokenizers``: write ``out`` with the text of
    ``make(version)`` (``(text, summary)``) and print the summary, or with ``--check`` exit 1 when
    the written text differs from what this ``tokenizers`` gives (its five header lines aside)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the written table differs from this tokenizers'")
    args = ap.parse_args(argv)
    try:
        import tokenizers
    except ImportError:
        print("needs HF tokenizers (pip install tokenizers)", file=sys.stderr)
        return 2
    text, summary = make(tokenizers.__version__)
    if args.check:
        old = out.read_text(encoding="utf-8") if out.exists() else ""
        if old.split("\n", 5)[5:] != text.split("\n", 5)[5:]:
            print(f"{out} differs from what tokenizers {tokenizers.__version__} gives", file=sys.stderr)
            return 1
        return 0
    out.write_text(text, encoding="utf-8")
    print(f"{out}: {summary} (tokenizers {tokenizers.__version__})")
    return 0


def main(argv: list[str] | None = None) -> int:
    def make(version: str) -> tuple[str, str]:
        starts, labels = measure()
        return render(starts, labels, version), f"{len(starts)} runs, {len(set(labels)) - 1} scripts"

    return measured_main(argv, __doc__, OUT, make)


if __name__ == "__main__":
    sys.exit(main())
