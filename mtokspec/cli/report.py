"""report: a fidelity report card per tokenizer (HTML, Markdown or JSON), an index of several."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from mtokspec.cli._io import FORCE_HELP, one_line, write_output

FORMATS = {"html": ".html", "md": ".md", "json": ".json"}


def _inputs(paths: list[str]) -> list[Path]:
    """Each path as given, a folder without ``tokenizer.json`` as its sub-folders that have one."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise FileNotFoundError(f"{p}: no such file or folder")
        if p.is_dir() and not (p / "tokenizer.json").is_file():
            models = sorted(q for q in p.iterdir() if q.is_dir() and (q / "tokenizer.json").is_file())
            if not models:
                raise FileNotFoundError(f"{p}: neither a model folder (no tokenizer.json) nor a folder of them")
            out += models
        else:
            out.append(p)
    return out


def _slug(name: str, taken: set[str]) -> str:
    base = "".join(c if c.isalnum() or c in "-._" else "_" for c in name).strip("._") or "card"
    slug, k = base, 2
    while slug in taken:
        slug, k = f"{base}-{k}", k + 1
    taken.add(slug)
    return slug


def _render(cards: list[Any], fmt: str) -> tuple[Any, Any]:
    from mtokspec.report_card import html, json_out, md

    return {"html": (html.render_html, html.render_html_index),
            "md": (md.render_markdown, md.render_markdown_index),
            "json": (json_out.render_json, json_out.render_json_index)}[fmt]


def _device_for(results: list[Any], name: str, single: bool) -> Any:
    """The log's result for the card named ``name`` (its folder name), or the only one."""
    folder = name.split("/")[0]
    for r in results:
        if r.model in (name, folder):
            return r
    return results[0] if single and len(results) == 1 else None


def cmd_report(args: argparse.Namespace) -> int:
    from mtokspec.chat.compare import load_conversations
    from mtokspec.cli.cases import read_cases
    from mtokspec.errors import Error
    from mtokspec.format import plainio
    from mtokspec.parallel import default_jobs
    from mtokspec.reading import read_file
    from mtokspec.report_card import collect_card
    from mtokspec.report_card.device import parse_test_tokenizer_log, read_goldens

    def fail(what: str, e: BaseException) -> int:
        print(f"mtokspec report: {what}: {one_line(e)}", file=sys.stderr)
        return 2

    def say(msg: str) -> None:
        if not args.quiet:
            print(f"mtokspec report: {msg}", file=sys.stderr)

    fmt = args.format or next((f for f, ext in FORMATS.items() if args.output.endswith(ext)), "html")
    try:
        inputs = _inputs(args.inputs)
        texts = read_cases(args.text) if args.text else None
        convs = (load_conversations(plainio.load_json(read_file(args.chat).decode("utf-8")))
                 if args.chat else None)
        log = (parse_test_tokenizer_log(read_file(args.device_log).decode("utf-8", "replace"),
                                        f"test_tokenizer log {args.device_log}") if args.device_log else None)
        jobs = default_jobs() if args.jobs is None else args.jobs
        if jobs < 1:
            raise ValueError(f"--jobs: expected a positive number of processes, got {jobs}")
    except (Error, OSError, ValueError, UnicodeDecodeError, RecursionError) as e:
        return fail("input", e)
    several = len(inputs) > 1 or os.path.isdir(args.output) or args.output.endswith(os.sep)
    if several and args.output == "-":
        return fail("-o", ValueError("several cards are written to a folder, not to standard output"))
    if args.goldens and len(inputs) > 1 and not os.path.isdir(args.goldens):
        return fail("--goldens", ValueError("with several inputs, a folder of NAME/test_cases.jsonl"))
    cards = []
    for path in inputs:
        try:
            goldens = None
            if args.goldens:
                gpath = Path(args.goldens)
                if gpath.is_dir():
                    gpath = gpath / (path.name if path.is_dir() else path.resolve().parent.name) / "test_cases.jsonl"
                if gpath.exists() or not Path(args.goldens).is_dir():
                    goldens = (f"goldens {gpath}", read_goldens(read_file(gpath).decode("utf-8"), str(gpath)))
                else:
                    print(f"mtokspec report: {path}: no {gpath}: no device result", file=sys.stderr)
            def progress(msg: str, where: Path = path) -> None:
                say(f"{where}: {msg}")

            card = collect_card(path, against=args.against, texts=texts, texts_name=args.text,
                                conversations=convs, goldens=goldens, jobs=jobs, progress=progress)
            if log is not None:
                device = _device_for(log, card.name, len(inputs) == 1)
                if device is None:
                    card = replace(card, notes=card.notes + (f"{args.device_log} has no result for the model "
                                                             f"{card.name.split('/')[0]}",))
                    print(f"mtokspec report: {path}: no result for it in {args.device_log}", file=sys.stderr)
                card = replace(card, device=device or card.device)
            cards.append(card)
        except (Error, OSError, ValueError, UnicodeDecodeError) as e:
            return fail(str(path), e)
        except Exception as e:  # noqa: BLE001 - HF tokenizers raises plain Exceptions
            return fail(str(path), e)
    one, index = _render(cards, fmt)
    ext = FORMATS[fmt]
    sources = [str(p) for p in inputs]
    try:
        if not several:
            write_output(args.output, one(cards[0]).encode("utf-8", "backslashreplace"), sources, args.force)
            print(f"{args.output}: {cards[0].name}: {cards[0].verdict}", file=sys.stderr)
            return 0
        os.makedirs(args.output, exist_ok=True)
        taken: set[str] = {"index"}
        linked = []
        for card in cards:
            name = _slug(card.name, taken) + ext
            write_output(os.path.join(args.output, name), one(card).encode("utf-8", "backslashreplace"),
                         sources, args.force)
            linked.append((card, name))
        write_output(os.path.join(args.output, "index" + ext),
                     index(linked).encode("utf-8", "backslashreplace"), sources, args.force)
    except (Error, OSError) as e:
        return fail(args.output, e)
    for card, name in linked:
        print(f"{os.path.join(args.output, name)}: {card.verdict}", file=sys.stderr)
    print(f"{os.path.join(args.output, 'index' + ext)}: {len(linked)} cards", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "report", help="a report card per tokenizer: how often MNN gives HF's answer (HTML, Markdown, JSON)",
        description=(
            "Write a self-contained report card per tokenizer: the verdict first (MNN = HF per output: "
            "encode, encode without specials, stream decode, sequence decode, chat render, as a rate and "
            "a bar chart), the divergence rules behind each difference with counts and examples side by "
            "side, the chat prompts, the reference used and the MNN commit the mnn semantics models, and "
            "the device result when given. INPUT: a model folder (converted with --target mnn and compared "
            "with its tokenizer.json), a folder of model folders, or a .mtok / tokenizer.txt (compared "
            "with --against, else with its own HF semantics). Several cards: -o is a folder, with an "
            "index page linking each card. The JSON has the same numbers. Exit 0 when the cards are written "
            "(whatever they say: read the verdict or the JSON), 2 on errors."))
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="model folder(s), a folder of them, or tokenizer files")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="the card (a file, '-' for standard output), or a folder for several cards and the index")
    p.add_argument("--format", choices=tuple(FORMATS), default=None,
                   help="html (default), md or json (default: told by OUT's extension)")
    p.add_argument("--against", metavar="tokenizer.json|MODEL_DIR",
                   help="for a tokenizer file: the HF tokenizer to compare with (default: the file's HF semantics)")
    p.add_argument("--text", metavar="FILE",
                   help="cases instead of the probe texts: a JSON list of strings, JSON Lines or plain text")
    p.add_argument("--chat", metavar="conversations.json",
                   help="conversations instead of the built-in ones (as compare --chat reads them)")
    device = p.add_mutually_exclusive_group()
    device.add_argument("--device-log", metavar="FILE",
                        help="the output of MNN's test_tokenizer ('Testing: NAME ...' / 'N/M passed' per model)")
    device.add_argument("--goldens", metavar="test_cases.jsonl|DIR",
                        help="MNN's device-test cases (mtokspec goldens) to run on the mnn semantics; with several "
                             "inputs a folder laid out as test_tokenizer reads it (NAME/test_cases.jsonl)")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="compare in N processes (default: every core this process may use; the same card for any N)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=cmd_report)
