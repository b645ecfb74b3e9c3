"""fix, goldens: tokenizer files for MNN's runtime, and MNN's own device test with HF's answers."""

from __future__ import annotations

import argparse
import json
import sys

from mtokspec.cli._io import FORCE_HELP, one_line, read_tokenizer_file, write_output
from mtokspec.cli.convert import EXIT_DIFFERS, REFERENCE_HELP, hf_inputs, write_conversion
from mtokspec.cli.progress import Progress
from mtokspec.names import REFERENCES


def cmd_fix(args) -> int:
    import mtokspec
    from mtokspec.convert.mnn_target.fix import fix
    from mtokspec.convert.mnn_target.reference import read_texts

    def run():
        texts = read_texts(args.text) if args.text else None
        return fix(mtokspec.parse(read_tokenizer_file(args.file, stdin=True)), against=args.against, texts=texts,
                   reference=args.reference)

    inputs = [args.file] + (hf_inputs(args.against) if args.against else [])
    return write_conversion("fix", args.file, args.output, args.report, run,
                            " (checked against " + args.against + ")" if args.against else
                            " (no --against: checked against the file's own HF semantics)",
                            inputs=inputs, force=args.force)


def cmd_goldens(args) -> int:
    from mtokspec.convert.mnn_target.goldens import goldens, jsonl
    from mtokspec.convert.mnn_target.reference import read_texts
    from mtokspec.errors import Error
    from mtokspec.parallel import default_jobs

    try:
        texts = read_texts(args.text) if args.text else None
        conversations = None
        if args.chat:
            with open(args.chat, encoding="utf-8") as f:
                conversations = json.load(f)
            if not isinstance(conversations, list) or not all(
                    isinstance(c, dict) and isinstance(c.get("messages"), list) for c in conversations):
                print(f"mtokspec goldens: {args.chat}: expected a JSON list of "
                      '{"name", "messages", "add_generation_prompt"} objects', file=sys.stderr)
                return 2
        jobs = default_jobs() if args.jobs is None else args.jobs
        if jobs < 1:
            raise ValueError(f"--jobs: expected a positive number of processes, got {jobs}")
        with Progress("goldens: HF's answers", quiet=args.quiet) as progress:
            lines, notes = goldens(args.model_dir, texts, conversations, jobs=jobs, reference=args.reference,
                                   progress=lambda done, total: progress.update(done))
        write_output(args.output, jsonl(lines), hf_inputs(args.model_dir), args.force)
    except (Error, OSError, ValueError) as e:
        print(f"mtokspec goldens: {args.model_dir}: {one_line(e)}", file=sys.stderr)
        return 2
    cases = [x for x in lines if x.get("type") != "meta"]
    meta = next((x for x in lines if x.get("type") == "meta"), {})
    print(f"{args.output}: {len(cases)} test cases (answers: {meta.get('reference', '?')})", file=sys.stderr)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


GOLDENS_HELP = """\
Write MNN's device-test file for a model folder: one JSON object a line, in the schema MNN's
transformers/llm/engine/test/test_tokenizer.cpp reads ({"type": "basic", "input", "ids_raw",
"ids_full", "decoded_full"} and {"type": "chat", "name", "messages", "add_generation_prompt",
"formatted_text"}), with Hugging Face's answers (HF tokenizers on tokenizer.json; refused without
it unless --reference mtokspec, which takes mtokspec's own HF semantics and says so; chat texts
as transformers renders the folder's template).  The first line, {"type": "meta", "reference",
...}, records what answered (MNN's test skips a line of another type).

Run MNN's test with them: build test_tokenizer from MNN's transformers/llm/engine/test/
test_tokenizer.cpp with MNN's LLM engine (for the device, or for a desktop), then
  mkdir -p models/mymodel
  mtokspec convert MODEL_DIR --target mnn -o models/mymodel/tokenizer.mtok
  mtokspec goldens MODEL_DIR -o models/mymodel/test_cases.jsonl
  ./test_tokenizer models mymodel                      # desktop
  adb push models test_tokenizer /data/local/tmp/      # an Android device
  adb shell 'cd /data/local/tmp && ./test_tokenizer models mymodel'
It prints "N/M passed" per model folder and a summary (a folder may hold tokenizer.txt instead)."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "fix", help="make an existing .mtok or tokenizer.txt right for MNN's runtime (with a report)",
        description=(
            "Set every lever of `convert --target mnn` on a file someone already has (a .mtok from "
            "MNN's exporter, or a legacy tokenizer.txt, written as .mtok). With --against, HF's "
            "tokenizer.json decides and the report is against it; without, only what the file "
            "alone shows is fixed (a post-processor layout MNN misreads, BOS twice, header special "
            "ids, the clean-up flag) and the report says what could not be checked."),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("file", metavar="FILE", help="the .mtok or tokenizer.txt ('-' for stdin)")
    p.add_argument("--against", metavar="tokenizer.json|MODEL_DIR",
                   help="the Hugging Face tokenizer the file was made from")
    p.add_argument("-o", "--output", required=True, metavar="OUT.mtok",
                   help="where to write the fixed .mtok (atomically)")
    p.add_argument("--text", metavar="FILE", help="more probe texts (a JSON list of strings, or one per line)")
    p.add_argument("--reference", choices=REFERENCES, default="hf", help=REFERENCE_HELP + " (with --against)")
    p.add_argument("--report", choices=("text", "json"), default="text",
                   help="format of the report printed to stderr")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=cmd_fix)
    p.epilog = (f"exit status: 0 written and MNN gives the reference's answer on every probe; 2 an error (nothing "
                f"written); {EXIT_DIFFERS} written, but MNN differs from the reference on some probe (see the report)")

    g = subparsers.add_parser(
        "goldens", help="write MNN's device-test cases (test_cases.jsonl) with HF's answers",
        description=GOLDENS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    g.add_argument("model_dir", metavar="MODEL_DIR", help="model folder, or the path of its tokenizer.json")
    g.add_argument("-o", "--output", required=True, metavar="test_cases.jsonl",
                   help="where to write the cases (atomically)")
    g.add_argument("--text", metavar="FILE", help="more texts (a JSON list of strings, or one per line)")
    g.add_argument("--chat", metavar="FILE",
                   help="conversations instead of the built-in ones: a JSON list of "
                        '{"name", "messages", "add_generation_prompt"}')
    g.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="HF's answers in N processes (default: every core this process may use; the file is "
                        "the same for any N)")
    g.add_argument("--reference", choices=REFERENCES, default="hf",
                   help="what gives the answers: hf (HF tokenizers; refused when missing) or mtokspec (its own HF "
                        "semantics of the folder's plain .mtok, recorded in the meta line; refused where the "
                        "format loses or approximates a stage, so its cases are HF's own or none)")
    g.add_argument("--quiet", "-q", action="store_true", help="no progress line on a terminal")
    g.add_argument("--force", action="store_true", help=FORCE_HELP)
    g.set_defaults(func=cmd_goldens)
