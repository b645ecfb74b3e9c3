"""stream, hold-table: the streaming decoder and its per-id table (``register(subparsers)``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, cast

from mtokspec.cli._io import one_line, write_output
from mtokspec.reading import read_input
from mtokspec.errors import Error
from mtokspec.names import SEMANTICS

if TYPE_CHECKING:
    from mtokspec.tokenizer import Semantics, Tokenizer


def _tokenizer(path: str, runtime: str) -> "Tokenizer":
    from mtokspec.tokenizer import Tokenizer

    return Tokenizer.from_bytes(read_input(path), semantics=cast("Semantics", runtime))


def cmd_stream(args: argparse.Namespace) -> int:
    try:
        tok = _tokenizer(args.file, args.runtime)
        s = tok.stream(skip_special_tokens=args.skip_special)
        steps = [s.step(i) for i in args.ids]
        steps.append(s.flush())
    except (Error, OSError) as e:
        print(f"mtokspec stream: {args.file}: {one_line(e)}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([{"id": i, "text": x} for i, x in zip(args.ids, steps)] + [{"flush": steps[-1]}],
                         ensure_ascii=False))
    else:
        print("".join(steps))
    return 0


def cmd_hold_table(args: argparse.Namespace) -> int:
    try:
        from mtokspec.tokenizer import hold_table

        doc = hold_table(read_input(args.file))
        text = json.dumps(doc, ensure_ascii=False, indent=args.indent)
    except (Error, OSError) as e:
        print(f"mtokspec hold-table: {args.file}: {one_line(e)}", file=sys.stderr)
        return 2
    try:
        write_output(args.output, text + "\n", [args.file], args.force)
    except (Error, OSError) as e:
        print(f"mtokspec hold-table: {args.output}: {one_line(e)}", file=sys.stderr)
        return 2
    if args.output != "-":
        counts = ", ".join(f"{k} {v}" for k, v in doc["hold_counts"].items()) or "nothing held"
        print(f"{args.output}: {len(doc['tokens']):,} ids (utf8 {doc['utf8']}; {counts})", file=sys.stderr)
    return 0


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "stream", help="decode ids one at a time as a chat app prints them (what decode of the prefix adds)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Feed the IDs one at a time to the streaming decoder and print what each adds: exactly "
                    "what the semantics' decode of the ids so far adds, held back where a later id can "
                    "still change it (an incomplete UTF-8 character, a <0xHH> byte run), never half a "
                    "character; the last step (flush) prints what is still held. Joined, the output is "
                    "`decode FILE ID...`. (decode --stream --runtime mnn is the MNN engine's per-id print.)")
    p.add_argument("file", metavar="FILE", help="the .mtok file (or a legacy tokenizer.txt)")
    p.add_argument("ids", metavar="ID", nargs="+", type=int, help="token ids, in the order they arrive")
    p.add_argument("--runtime", choices=SEMANTICS, default="hf",
                   help="hf: what HF tokenizers' decode adds (default); mnn: what MNN's Tokenizer::decode adds "
                        "(mnn@VERSION: in that released version)")
    p.add_argument("--skip-special", action="store_true", help="leave out special tokens (hf)")
    p.add_argument("--json", action="store_true", help="one JSON list: each id with the text it printed, then the flush")
    p.set_defaults(func=cmd_stream)

    p = sub.add_parser(
        "hold-table", help="the per-id table an app's streaming loop runs on (JSON, for C++/Kotlin/Swift)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write the hold table of FILE's decoder as JSON: for every id the bytes it adds (and, "
                    "where it differs, as the first id), whether it is special, and why a loop may have to "
                    "buffer it (an incomplete UTF-8 character, a <0xHH> byte-fallback byte, a first-token "
                    "rule, a strip character). The header ('algorithm', 'fields') states the loop; run "
                    "with it, the loop prints what HF tokenizers' decode prints (docs/design/streaming.md). "
                    "A decoder that acts across tokens (a multi-character Replace after Fuse) has no table: "
                    "exit 2 with the reason.")
    p.add_argument("file", metavar="FILE", help="the .mtok file (or a legacy tokenizer.txt, upgraded)")
    p.add_argument("-o", "--output", default="-", metavar="OUT", help="where to write the JSON (default '-': standard output)")
    p.add_argument("--indent", type=int, default=None, metavar="N", help="indent the JSON by N spaces")
    p.add_argument("--force", action="store_true", help="allow -o to replace the input file")
    p.set_defaults(func=cmd_hold_table)
