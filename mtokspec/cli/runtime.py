"""encode, decode, compare: the runtime commands (``register(subparsers)``)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from mtokspec.cli._io import read_input, read_tokenizer_file
from mtokspec.errors import MtokFormatError
from mtokspec.names import DEVICES, SEMANTICS


def _fail(what: str, err: Exception) -> int:
    from mtokspec.cli._io import one_line
    print(f"mtokspec: {what}: {one_line(err)}", file=sys.stderr)
    return 2


def _load(path: str, runtime: str = "hf"):
    from mtokspec.tokenizer import Tokenizer
    return Tokenizer.from_bytes(read_tokenizer_file(path, stdin=True), semantics=runtime)


def cmd_encode(args) -> int:
    from mtokspec.errors import TokenizerError
    if args.file == "-" and (args.text is None or args.text == "-"):
        return _fail("encode", ValueError("the file and the text cannot both come from standard input"))
    try:
        tok = _load(args.file, args.runtime)
        # standard input: bounded, and bytes that are not UTF-8 kept as surrogates (as the CLI's stdin)
        text = read_input("-").decode("utf-8", "surrogateescape") if args.text in (None, "-") else args.text
        special = args.special if args.special is not None else args.runtime in DEVICES
        ids = tok.encode(text, add_special_tokens=special)
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
    from mtokspec.errors import TokenizerError
    try:
        tok = _load(args.file, args.runtime)
        unknown = [i for i in args.ids if tok.id_to_token(i) is None]
        if unknown and not args.allow_unknown:
            shown = ", ".join(map(str, unknown[:10])) + (", ..." if len(unknown) > 10 else "")
            raise TokenizerError(f"not a token of this file: id {shown} (--allow-unknown decodes them as the "
                                 "runtime does: nothing, or the unknown token)")
        if args.runtime in DEVICES:
            data = tok.decode_bytes(args.ids, stream=args.stream)
        else:
            if args.stream:
                return _fail("decode", ValueError("--stream goes with --runtime mnn"))
            data = tok.decode(args.ids, skip_special_tokens=args.skip_special).encode("utf-8", "surrogatepass")
    except (OSError, MtokFormatError, TokenizerError) as e:
        return _fail(args.file, e)
    # MNN's bytes as they are, UTF-8 or not (a text-only stdout gets them surrogate-escaped)
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:
        sys.stdout.write(data.decode("utf-8", "surrogateescape") + "\n")
    else:
        sys.stdout.flush()
        binary.write(data + b"\n")
        binary.flush()
    return 0


def cmd_compare(args) -> int:
    from mtokspec.errors import TokenizerError
    if args.chat:
        from mtokspec.cli.chat import cmd_compare_chat
        return cmd_compare_chat(args)
    from mtokspec.cli.cases import read_cases
    from mtokspec.cli.progress import Progress
    from mtokspec.compare import SAMPLE_TEXTS, compare
    from mtokspec.errors import CasesError
    texts, sets = list(SAMPLE_TEXTS), ["samples"] * len(SAMPLE_TEXTS)
    if args.text:
        texts, sets = [], []
        for path in args.text:
            try:
                cases = read_cases(path)
            except (OSError, CasesError) as e:
                return _fail(path, e)
            texts += cases
            sets += [os.path.basename(path)] * len(cases)
    special = args.special
    from mtokspec.parallel import default_jobs

    jobs = default_jobs() if args.jobs is None else args.jobs
    if jobs < 1:
        return _fail("--jobs", ValueError(f"expected a positive number of processes, got {jobs}"))
    try:
        with Progress("compare", len(texts), quiet=args.quiet) as progress:
            tally = None
            if args.runtime in DEVICES:
                from mtokspec.compare import compare_runtimes, device_tally
                report = compare_runtimes(args.file, texts, against=args.against,
                                          add_special_tokens=True if special is None else special,
                                          sets=sets, progress=progress.update, jobs=jobs, semantics=args.runtime)
                tally = device_tally(args.file, texts, against=args.against, semantics=args.runtime)
            else:
                if args.against is None:
                    return _fail("compare", ValueError("--against tokenizer.json is needed with --runtime hf"))
                report = compare(args.file, args.against, texts, add_special_tokens=bool(special), sets=sets,
                                 progress=progress.update, jobs=jobs)
    except (OSError, MtokFormatError, TokenizerError, Exception) as e:  # HF raises plain Exception
        return _fail(args.file, e)
    device = {"device": tally.to_dict()} if tally is not None else {}
    if args.json:
        print(json.dumps(report.to_dict() | device, ensure_ascii=False, indent=1, default=repr))
    elif args.jsonl:
        doc = report.to_dict() | device
        mismatches = doc.pop("mismatches")
        print(json.dumps({"summary": doc}, ensure_ascii=False, default=repr))
        for m in mismatches:
            print(json.dumps(m, ensure_ascii=False, default=repr))
    else:
        print(report.summary(limit=None if args.all else args.show))
        if tally is not None:
            print(tally.summary())
    same = report.matched == report.total and (tally is None or all(a == n for a, n in tally.outputs.values()))
    return 0 if same else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "encode", help="print the token ids of a text",
        description="Tokenize TEXT (or standard input with '-' or no TEXT) with the runtime built from "
                    "FILE, like HF tokenizers' encode(text).ids, or with --runtime mnn as MNN's C++ "
                    "runtime does on a device (its encode(text): prefix ids, special split, post-processor).")
    p.add_argument("file", metavar="FILE", help="the .mtok file (or a legacy tokenizer.txt)")
    p.add_argument("text", metavar="TEXT", nargs="?", help="the text ('-' or omitted: standard input)")
    p.add_argument("--runtime", choices=SEMANTICS, default="hf",
                   help="tokenize as HF tokenizers (default) or as MNN's C++ runtime on a device (mnn@VERSION: "
                        "as that released version)")
    p.add_argument("--special", action=argparse.BooleanOptionalAction, default=None,
                   help="add special tokens (hf: the post-processor program, else the header's prefix ids; "
                        "default off) -- with --runtime mnn, MNN's encode(text) (default on)")
    p.add_argument("--json", action="store_true", help="print the ids as a JSON list")
    p.add_argument("--tokens", action="store_true", help="print id:token pairs")
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser(
        "decode", help="print the text of token ids",
        description="Decode IDs with the runtime built from FILE, like HF tokenizers' decode(ids), or with "
                    "--runtime mnn as MNN does: Tokenizer::decode(ids), or with --stream what the LLM "
                    "engine prints; MNN's bytes are written as they are, UTF-8 or not.")
    p.add_argument("file", metavar="FILE", help="the .mtok file (or a legacy tokenizer.txt)")
    p.add_argument("ids", metavar="ID", nargs="+", type=int, help="token ids")
    p.add_argument("--runtime", choices=SEMANTICS, default="hf",
                   help="decode as HF tokenizers (default) or as MNN's C++ runtime (its exact bytes; "
                        "mnn@VERSION: as that released version)")
    p.add_argument("--skip-special", action="store_true", help="leave out special tokens (hf)")
    p.add_argument("--stream", action="store_true",
                   help="with --runtime mnn: what the LLM engine prints, each id decoded alone")
    p.add_argument("--allow-unknown", action="store_true",
                   help="decode ids that are not tokens of the file (default: refuse them, exit 2)")
    p.set_defaults(func=cmd_decode)

    p = sub.add_parser(
        "compare", help="compare the runtime (HF or MNN semantics) with HF on texts",
        description="Encode each text with the runtime built from FILE and with HF, and print the match "
                    "rate and the first mismatches with the diverging tokens. "
                    "--runtime hf (default): mtokspec's HF semantics against HF tokenizers loading "
                    "--against tokenizer.json. --runtime mnn: what MNN's C++ runtime does on a device, "
                    "against --against tokenizer.json or, without it, the file's own HF semantics; each "
                    "difference names the divergence rules that explain it, or says UNEXPLAINED; then a "
                    "tally of every output a device produces (encode, encode without specials, decode, "
                    "stream decode, the chat template's prompts) with their causes. "
                    "With --chat conversations.json: per conversation, the prompt transformers renders "
                    "with the file's chat template and the prompt MNN's Jinja engine renders on a device, "
                    "side by side, with the first difference and the rules that explain it. "
                    "Exit 0 when all match, 1 when some differ, 2 on errors. --against needs the "
                    "`tokenizers` package.")
    p.add_argument("file", metavar="FILE", help="the .mtok file (or a legacy tokenizer.txt with --runtime mnn)")
    p.add_argument("--runtime", choices=SEMANTICS, default="hf",
                   help="the semantics to run the file with (default hf)")
    p.add_argument("--against", metavar="tokenizer.json|MODEL_DIR",
                   help="the HF tokenizer.json, or the model folder holding it, to compare with "
                        "(needed with --runtime hf)")
    p.add_argument("--text", metavar="FILE", action="append",
                   help="cases: a JSON list of strings, JSON Lines or plain text (one case per line); "
                        "repeatable, each file a text set in the summary (default: a few built-in samples)")
    p.add_argument("--special", action=argparse.BooleanOptionalAction, default=None,
                   help="encode with special tokens (default: off for hf; on for mnn, as MNN's encode(text))")
    p.add_argument("--show", type=int, default=5, help="how many mismatches to print (default 5)")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="encode the texts in N processes (default: every core this process may use; "
                        "the report is the same for any N)")
    p.add_argument("--chat", metavar="conversations.json",
                   help="compare chat prompts instead of encodings: a conversation (list of messages), a list "
                        "of them, or an object of named ones (each a list or {messages, add_generation_prompt})")
    p.add_argument("--no-generation-prompt", action="store_true",
                   help="with --chat: conversations without their own add_generation_prompt end without "
                        "the assistant prompt")
    p.add_argument("--all", action="store_true", help="print every mismatch")
    p.add_argument("--json", action="store_true", help="print the whole report as JSON (every mismatch)")
    p.add_argument("--jsonl", action="store_true",
                   help="print JSON Lines: a summary object, then one object per mismatch")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_compare)
