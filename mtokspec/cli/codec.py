"""inspect, validate, dump, build: the file-format commands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import mtokspec
from mtokspec.cli._io import FORCE_HELP, one_line, read_input, read_tokenizer_file, write_output
from mtokspec.errors import Error, MtokFormatError


def fail(path: str, err: Exception) -> int:
    print(f"mtokspec: {path}: {one_line(err)}", file=sys.stderr)
    return 2


def load_tree(path: str):
    """(tree, size) of a file; raises MtokFormatError or OSError."""
    data = read_tokenizer_file(path, stdin=True)
    return mtokspec.parse(data), len(data)


def cmd_inspect(args) -> int:
    from mtokspec.format.inspect import FORMAT_NAMES, format_ids, inspect_rows, labelled_roles
    from mtokspec.format.tree import format_key

    try:
        tree, size = load_tree(args.file)
    except (OSError, MtokFormatError) as e:
        return fail(args.file, e)
    rows = inspect_rows(tree)
    roles = labelled_roles(tree)
    if args.json:
        print(json.dumps({"file": args.file, "size": size, "format": format_key(tree),
                          "sections": [{"name": n, "size": s, "summary": d} for n, s, d in rows],
                          "header": {role: [{"id": i, "token": s} for i, s in pairs] for role, pairs in roles.items()}},
                         ensure_ascii=False, indent=1))
        return 0
    print(f"{args.file}: {FORMAT_NAMES[type(tree)]}, {size:,} bytes")
    width = max(len(n) for n, _, _ in rows)
    for name, sz, desc in rows:
        size_text = "-" if sz is None else f"{sz:,} B"
        print(f"  {name:<{width}}  {size_text:>12}  {desc}")
    for role, pairs in roles.items():
        if pairs:
            print(f"  {role + ' ids':<{width}}  {len(pairs):>12}  {format_ids(pairs, None if args.all_ids else 12)}")
    return 0


def report_findings(args, check) -> int:
    """Run ``check(bytes)`` on each of ``args.files`` and print its findings (``--json``, ``--all``),
    then, for several files, one table of them (file, errors, warnings, codes);
    exit 2 if a file could not be read, else 1 if any finding is a warning or an error, else 0."""
    worst = 0
    table: list[tuple[str, str, str, str]] = []
    for path in args.files:
        try:
            findings = check(read_tokenizer_file(path, stdin=True))
        except (OSError, Error) as e:  # Error: also a chat template too long or deep to lint
            fail(path, e)
            worst = 2
            table.append((path, "-", "-", "unreadable"))
            continue
        counts = {s: sum(f.severity == s for f in findings) for s in ("error", "warning")}
        codes = sorted({f.code for f in findings if f.severity != "info"})
        table.append((path, str(counts["error"]), str(counts["warning"]), ", ".join(codes) or "ok"))
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
    if len(table) > 1 and not args.json:
        w = max(len("file"), *(len(row[0]) for row in table))
        print(f"\n{'file':<{w}}  {'errors':>6}  {'warnings':>8}  codes")
        for path, errors, warnings, codes in table:
            print(f"{path:<{w}}  {errors:>6}  {warnings:>8}  {codes}")
    return worst


def cmd_validate(args) -> int:
    return report_findings(args, mtokspec.validate)


def _suffix_format(path: str | None) -> str | None:
    """``json`` or ``yaml`` as a file's suffix says (None: no path, standard input or output, or
    another suffix)."""
    if not path or path == "-":
        return None
    return {".json": "json", ".yaml": "yaml", ".yml": "yaml"}.get(Path(path).suffix.lower())


def cmd_dump(args) -> int:
    from mtokspec.format import plainio

    from mtokspec.cli.progress import Progress

    fmt = args.format or _suffix_format(args.output) or "yaml"
    with Progress("dump", quiet=args.quiet) as progress:
        progress.stage("reading")
        try:
            tree, _ = load_tree(args.file)
        except (OSError, MtokFormatError) as e:
            return fail(args.file, e)
        progress.stage(f"writing {fmt.upper()}")
        text = plainio.dumps(mtokspec.to_dict(tree), fmt)
    if args.output and args.output != "-":
        try:
            write_output(args.output, text, [args.file], args.force)
        except OSError as e:
            return fail(args.output, e)
    else:
        sys.stdout.write(text)
    return 0


def cmd_build(args) -> int:
    from mtokspec.format import plainio

    try:
        text = read_input(args.tree).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return fail(args.tree, e)
    fmt = args.format or _suffix_format(args.tree)
    from mtokspec.cli._checked import refuse, verdict
    from mtokspec.cli.progress import Progress

    with Progress("build", quiet=args.quiet) as progress:
        try:
            progress.stage(f"reading {(fmt or 'the tree').upper()}")
            tree = mtokspec.from_dict(plainio.loads(text, fmt))
            progress.stage("building")
            data = mtokspec.build(tree)
        except MtokFormatError as e:
            return fail(args.tree, e)
        progress.stage("validating")
        findings = mtokspec.validate(tree)
    if refuse("build", args.output, findings, args.force):
        return 2
    try:
        write_output(args.output, data, [args.tree], args.force)
    except OSError as e:
        return fail(args.output, e)
    if not args.quiet:
        print(f"{args.output}: {len(data):,} bytes; {verdict(findings)}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from mtokspec.cli._checked import add_force

    p = sub.add_parser("inspect", help="summarise a file: components, counts, bytes per section",
                       description="Summarise a .mtok or legacy tokenizer.txt file: each section's size in "
                                   "bytes and what it holds.")
    p.add_argument("file", help="the .mtok or tokenizer.txt file ('-' for standard input)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON (every header id with its token)")
    p.add_argument("--all-ids", action="store_true", help="list every header id (default: the first 12 of each role)")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser(
        "validate", help="check files against the format's semantic rules",
        description="Parse each file and run the semantic checks (sorted vocab for MNN's binary search, ids in "
                    "range, merges sorted, norm tables sorted, header ids known, a stop id, eos a token, post-processor ops...). "
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
    p.add_argument("--format", choices=["yaml", "json"],
                   help="output format (default: from the suffix of -o, .json or .yaml; else yaml)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("-o", "--output", help="write here (atomically) instead of standard output ('-')")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=cmd_dump)

    p = sub.add_parser(
        "build", help="write a file from a YAML or JSON tree",
        description="Build a .mtok (or tokenizer.txt, by the tree's `format`) from a tree written by "
                    "`mtokspec dump` or by hand. The file is checked with `validate` first: an error-level "
                    "finding is refused (exit 2, nothing written) unless --force; it is written atomically: "
                    "on any failure nothing is written. A one-line verdict goes to stderr.",
    )
    p.add_argument("tree", help="TREE.yaml or TREE.json ('-' for standard input)")
    p.add_argument("-o", "--output", required=True, help="the file to write ('-' for standard output)")
    p.add_argument("--format", choices=["yaml", "json"], help="input format (default: from the file suffix)")
    add_force(p)
    p.add_argument("--no-validate", dest="force", action="store_true", help=argparse.SUPPRESS)  # the old name
    p.add_argument("-q", "--quiet", action="store_true", help="no verdict line on stderr")
    p.set_defaults(func=cmd_build)
