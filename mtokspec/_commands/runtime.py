"""encode, decode, compare: the runtime commands (``register(subparsers)``)."""

from __future__ import annotations

import argparse
import json
import sys

from mtokspec.errors import MtokFormatError


def _fail(what: str, err: Exception) -> int:
    from mtokspec._io import one_line
    print(f"mtokspec: {what}: {one_line(err)}", file=sys.stderr)
    return 2


def _load(path: str):
    from mtokspec._io import read_input
    from mtokspec.runtime import Tokenizer
    return Tokenizer.from_bytes(read_input(path))


def cmd_encode(args) -> int:
    from mtokspec.runtime import TokenizerError
    if args.file == "-" and (args.text is None or args.text == "-"):
        return _fail("encode", ValueError("the file and the text cannot both come from standard input"))
    try:
        tok = _load(args.file)
        text = sys.stdin.read() if args.text in (None, "-") else args.text
        ids = tok.encode(text, add_special_tokens=args.special)
    except (OSError, MtokFormatError, TokenizerError) as e:
        return _fail(args.file, e)
    if args.json:
        print(json.dumps(ids))
    elif args.tokens:
        print(" ".join(f"{i}:{tok.id_to_token(i)!r}" for i in ids))
    else:
        print(" ".join(map(str, ids)))
    return 0


def cmd_decode(args) -> int:
    from mtokspec.runtime import TokenizerError
    try:
        tok = _load(args.file)
        text = tok.decode(args.ids, skip_special_tokens=args.skip_special)
    except (OSError, MtokFormatError, TokenizerError) as e:
        return _fail(args.file, e)
    sys.stdout.write(text + "\n")
    return 0


def cmd_compare(args) -> int:
    from mtokspec.runtime import TokenizerError
    from mtokspec.runtime.compare import SAMPLE_TEXTS, compare
    texts = SAMPLE_TEXTS
    if args.text:
        try:
            with open(args.text, encoding="utf-8") as f:
                texts = json.load(f)
        except (OSError, ValueError) as e:
            return _fail(args.text, e)
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return _fail(args.text, ValueError("expected a JSON list of strings"))
    try:
        report = compare(args.file, args.against, texts, add_special_tokens=args.special)
    except (OSError, MtokFormatError, TokenizerError, Exception) as e:  # HF raises plain Exception
        return _fail(args.file, e)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=1))
    else:
        print(report.summary(limit=args.show))
    return 0 if report.matched == report.total else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "encode", help="print the token ids of a text",
        description="Tokenize TEXT (or standard input with '-' or no TEXT) with the runtime built from "
                    "FILE, like HF tokenizers' encode(text).ids.")
    p.add_argument("file", metavar="FILE", help="the .mtok file")
    p.add_argument("text", metavar="TEXT", nargs="?", help="the text ('-' or omitted: standard input)")
    p.add_argument("--special", action="store_true",
                   help="add special tokens (post-processor program, else the header's prefix ids)")
    p.add_argument("--json", action="store_true", help="print the ids as a JSON list")
    p.add_argument("--tokens", action="store_true", help="print id:token pairs")
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser(
        "decode", help="print the text of token ids",
        description="Decode IDs with the runtime built from FILE, like HF tokenizers' decode(ids).")
    p.add_argument("file", metavar="FILE", help="the .mtok file")
    p.add_argument("ids", metavar="ID", nargs="+", type=int, help="token ids")
    p.add_argument("--skip-special", action="store_true", help="leave out special tokens")
    p.set_defaults(func=cmd_decode)

    p = sub.add_parser(
        "compare", help="compare the runtime with HF tokenizers on texts",
        description="Encode each text with the runtime built from FILE.mtok and with HF tokenizers "
                    "loading tokenizer.json; print the match rate and the first mismatches with the "
                    "diverging tokens. Exit 0 when all match, 1 when some differ, 2 on errors. "
                    "Needs the `tokenizers` package.")
    p.add_argument("file", metavar="FILE.mtok", help="the .mtok file")
    p.add_argument("--against", required=True, metavar="tokenizer.json",
                   help="the HF tokenizer.json to compare with")
    p.add_argument("--text", metavar="cases.json",
                   help="a JSON list of strings (default: a few built-in sample strings)")
    p.add_argument("--special", action="store_true", help="encode with add_special_tokens=True")
    p.add_argument("--show", type=int, default=5, help="how many mismatches to print (default 5)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_compare)
