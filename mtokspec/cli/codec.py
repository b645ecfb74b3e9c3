"""inspect, validate, dump, build: the file-format commands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import mtokspec
from mtokspec.cli._io import FORCE_HELP, one_line, read_input, write_output
from mtokspec.format import plainio
from mtokspec.errors import Error, MtokFormatError
from mtokspec.format.inspect import FORMAT_NAMES, inspect_rows
from mtokspec.format.tree import format_key


def fail(path: str, err: Exception) -> int:
    print(f"mtokspec: {path}: {one_line(err)}", file=sys.stderr)
    return 2


def load_tree(path: str):
    """(tree, size) of a file; raises MtokFormatError or OSError."""
    data = read_input(path)
    return mtokspec.parse(data), len(data)


def cmd_inspect(args) -> int:
    try:
        tree, size = load_tree(args.file)
    except (OSError, MtokFormatError) as e:
        return fail(args.file, e)
    rows = inspect_rows(tree)
    if args.json:
        print(json.dumps({"file": args.file, "size": size, "format": format_key(tree),
                          "sections": [{"name": n, "size": s, "summary": d} for n, s, d in rows]},
                         ensure_ascii=False, indent=1))
        return 0
    print(f"{args.file}: {FORMAT_NAMES[type(tree)]}, {size:,} bytes")
    width = max(len(n) for n, _, _ in rows)
    for name, sz, desc in rows:
        size_text = "-" if sz is None else f"{sz:,} B"
        print(f"  {name:<{width}}  {size_text:>12}  {desc}")
    return 0


def report_findings(args, check) -> int:
    """Run ``check(bytes)`` on each of ``args.files`` and print its findings (``--json``, ``--all``);
    exit 2 if a file could not be read, else 1 if any finding is a warning or an error, else 0."""
    worst = 0
    for path in args.files:
        try:
            findings = check(read_input(path))
        except (OSError, Error) as e:  # Error: also a chat template too long or deep to lint
            fail(path, e)
            worst = 2
            continue
        shown = [f for f in findings if args.all or f.severity != "info"]
        counted = [f for f in findings if f.severity != "info"]
        if args.json:
            print(json.dumps({"file": path, "findings": [
                {"severity": f.severity, "path": f.path, "message": f.message, "code": f.code} for f in shown
            ]}, ensure_ascii=False))
        else:
            for f in shown:
                print(f"{path}: {f}")
            if not counted:
                print(f"{path}: ok" + (f" ({len(findings)} info)" if findings and not args.all else ""))
        if counted:
            worst = max(worst, 1)
    return worst


def cmd_validate(args) -> int:
    return report_findings(args, mtokspec.validate)


def cmd_dump(args) -> int:
    try:
        tree, _ = load_tree(args.file)
    except (OSError, MtokFormatError) as e:
        return fail(args.file, e)
    text = plainio.dumps(mtokspec.to_dict(tree), args.format)
    if args.output and args.output != "-":
        try:
            write_output(args.output, text, [args.file], args.force)
        except OSError as e:
            return fail(args.output, e)
    else:
        sys.stdout.write(text)
    return 0


def cmd_build(args) -> int:
    try:
        text = read_input(args.tree).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return fail(args.tree, e)
    fmt = args.format
    if fmt is None and args.tree != "-":
        fmt = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}.get(Path(args.tree).suffix.lower())
    try:
        data = mtokspec.build(mtokspec.from_dict(plainio.loads(text, fmt)))
    except MtokFormatError as e:
        return fail(args.tree, e)
    if not args.no_validate:
        errors = [f for f in mtokspec.validate(mtokspec.parse(data)) if f.severity == "error"]
        if errors:
            for f in errors:
                print(f"{args.tree}: {f}", file=sys.stderr)
            print(f"mtokspec: {args.tree}: not written: {len(errors)} error(s); --no-validate writes anyway",
                  file=sys.stderr)
            return 1
    try:
        write_output(args.output, data, [args.tree], args.force)
    except OSError as e:
        return fail(args.output, e)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("inspect", help="summarise a file: components, counts, bytes per section",
                       description="Summarise a .mtok or legacy tokenizer.txt file: each section's size in "
                                   "bytes and what it holds.")
    p.add_argument("file", help="the .mtok or tokenizer.txt file ('-' for standard input)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser(
        "validate", help="check files against the format's semantic rules",
        description="Parse each file and run the semantic checks (sorted vocab for MNN's binary search, ids in "
                    "range, merges sorted, norm tables sorted, header counts, post-processor ops...). "
                    "Exit 0: no errors or warnings; 1: findings; 2: a file could not be read or parsed.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help=".mtok or tokenizer.txt files")
    p.add_argument("--all", action="store_true", help="also print informational findings")
    p.add_argument("--json", action="store_true", help="one JSON object per file")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "dump", help="write a file's tree as YAML or JSON",
        description="Write the whole tree of a .mtok or tokenizer.txt file as YAML (default, for editing by "
                    "hand) or JSON. `mtokspec build` turns it back into the identical bytes.",
    )
    p.add_argument("file", help="the .mtok or tokenizer.txt file ('-' for standard input)")
    p.add_argument("--format", choices=["yaml", "json"], default="yaml", help="output format (default yaml)")
    p.add_argument("-o", "--output", help="write here (atomically) instead of standard output ('-')")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=cmd_dump)

    p = sub.add_parser(
        "build", help="write a file from a YAML or JSON tree",
        description="Build a .mtok (or tokenizer.txt, by the tree's `format`) from a tree written by "
                    "`mtokspec dump` or by hand. The file is checked with `validate` first and written "
                    "atomically: on any failure nothing is written.",
    )
    p.add_argument("tree", help="TREE.yaml or TREE.json ('-' for standard input)")
    p.add_argument("-o", "--output", required=True, help="the file to write ('-' for standard output)")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.add_argument("--format", choices=["yaml", "json"], help="input format (default: from the file suffix)")
    p.add_argument("--no-validate", action="store_true", help="write even when validation finds errors")
    p.set_defaults(func=cmd_build)
