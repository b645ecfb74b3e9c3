"""lint: what a device running the file will do differently from HF (``register(subparsers)``)."""

from __future__ import annotations

import argparse

from mtokspec.cli.codec import report_findings
from mtokspec.names import DEVICES


def cmd_lint(args) -> int:
    from mtokspec.divergences.lint import lint

    return report_findings(args, lambda data: lint(data, target=args.target))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "lint", help="predict where a runtime (MNN on a device) tokenizes differently from HF",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read each FILE and predict, without any text, which divergences between the target "
                    "runtime and HF will bite: MNN's post-processor misread, BOS twice, its special-token "
                    "split, normalizer, pre-tokenizer, model and decoder differences, the legacy types' "
                    "own tokenizers, BPE without a pre-tokenizer (quadratic time), and the chat template "
                    "constructs MNN's Jinja engine renders differently (paths chat_template...).\n\n"
                    "Each finding names its rule (see README, Divergences). Exit codes as validate: 0 "
                    "nothing but info, 1 warnings or errors, 2 a file could not be read.")
    p.add_argument("files", nargs="+", metavar="FILE", help=".mtok or tokenizer.txt files ('-': standard input)")
    p.add_argument("--target", choices=DEVICES, default="mnn",
                   help="the runtime to lint for (default mnn; mnn-next: MNN with patches/mnn/)")
    p.add_argument("--all", action="store_true", help="also print informational findings")
    p.add_argument("--json", action="store_true", help="one JSON object per file")
    p.set_defaults(func=cmd_lint)
