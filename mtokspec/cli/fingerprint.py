"""fingerprint: a short hash of a file's structure and behaviour (``register(subparsers)``)."""

from __future__ import annotations

import argparse
import json
import sys

from mtokspec.cli._io import one_line
from mtokspec.reading import read_input
from mtokspec.errors import Error


def cmd_fingerprint(args: argparse.Namespace) -> int:
    from mtokspec.fingerprinting import fingerprint

    code = 0
    for path in args.files:
        try:
            fp = fingerprint(read_input(path))
        except (Error, OSError) as e:
            print(f"mtokspec fingerprint: {path}: {one_line(e)}", file=sys.stderr)
            code = 2
            continue
        if args.json:
            print(json.dumps({"file": path, **fp.to_json()}, ensure_ascii=False))
        else:
            print(f"{path}: {fp}")
    return code


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "fingerprint", help="a short hash of the file's behaviour (hf, mnn, chat) and structure",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Print, for each FILE, its behaviour fingerprint (16 hex digits: equal for files that "
                    "answer every probe alike, different when any probed output differs), then the hashes "
                    "it is made of: structure (the canonical bytes), hf (encode, decode, every id, in HF "
                    "semantics), mnn (the same, as MNN's runtime runs the file), chat (the chat template "
                    "rendered by transformers' rules and by MNN's engine), and the probe set's version. "
                    "See docs/design/fingerprint.md.")
    p.add_argument("files", nargs="+", metavar="FILE", help=".mtok or tokenizer.txt files ('-': standard input)")
    p.add_argument("--json", action="store_true", help="one JSON object per file")
    p.set_defaults(func=cmd_fingerprint)
