"""convert, export-hf: Hugging Face tokenizer folders to ``.mtok`` and back."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import mtokspec
from mtokspec.cli._io import FORCE_HELP, check_output, one_line, read_tokenizer_file, write_output
from mtokspec.errors import MtokFormatError
from mtokspec.names import REFERENCES, TARGETS


MAX_INDENT = 16


def indent_width(text: str) -> int:
    """``--indent``: a number of spaces from 0 to MAX_INDENT."""
    if not text.isdigit() or len(text) > 3 or int(text) > MAX_INDENT:
        raise argparse.ArgumentTypeError(f"expected a number of spaces from 0 to {MAX_INDENT}, got {text[:20]!r}")
    return int(text)


def write_conversion(command: str, source: str, output: str, report: str, convert, what: str = "",
                     inputs=(), force: bool = False, **report_extra) -> int:
    """Run ``convert() -> ConversionResult``, build the .mtok, validate it, write it atomically,
    report the losses and end with a one-line verdict.

    Exit 0 written; 1 a strict conversion refused losses (nothing written); 2 an error-level
    validate finding without ``force`` (nothing written) or anything else failed (an output that
    is one of ``inputs`` without ``force`` too, refused before converting); :data:`EXIT_DIFFERS`
    written, but MNN's runtime differs from the reference on some probe (``--target mnn``,
    ``fix``: the report's first line says where).
    Shared by ``convert``, ``fix`` and ``upgrade``.
    """
    from mtokspec.cli._checked import refuse, verdict
    from mtokspec.convert import ConversionError, render_json, render_text

    def fail(message: str, losses=(), code: int = 2) -> int:
        if report == "json":
            print(render_json(list(losses), error=message, source=source), file=sys.stderr)
        else:
            # a strict refusal lists its losses, one per line, after the message
            print(f"mtokspec {command}: {source}: {message if losses else one_line(message)}", file=sys.stderr)
        return code

    try:
        if output != "-":
            check_output(output, inputs, force)
    except OSError as e:
        print(f"mtokspec {command}: {output}: {one_line(e)}", file=sys.stderr)
        return 2
    try:
        result = convert()
        data = mtokspec.build(result.tree)
    except ConversionError as e:
        return fail(str(e) if report != "json" else e.message, e.losses, 1 if e.losses else 2)
    except (OSError, MtokFormatError, ValueError) as e:
        return fail(str(e))
    findings = mtokspec.validate(result.tree)
    if refuse(command, output, findings, force):
        return 2
    try:
        write_output(output, data, inputs, force)
    except OSError as e:
        print(f"mtokspec {command}: {output}: {one_line(e)}", file=sys.stderr)
        return 2
    mnn = {"verdict": result.verdict(), "reference": result.reference, "differing_probes": result.differing_probes,
           "agreement": {o: {"differing": bad, "probes": n} for o, (bad, n) in result.agreement.items()}} \
        if result.agreement else {}
    code = EXIT_DIFFERS if result.differs else 0
    if report == "json":
        print(render_json(result.losses, source=source, output=output, size=len(data),
                          unicode_version=result.unicode_version, **report_extra, **mnn, exit_status=code,
                          findings=[{"severity": f.severity, "path": f.path, "message": f.message, "code": f.code}
                                    for f in findings]), file=sys.stderr)
    else:
        if mnn:
            print(f"{output}: {mnn['verdict']}", file=sys.stderr)
        print(f"{output}: {len(data):,} bytes{what} (Unicode tables {result.unicode_version})", file=sys.stderr)
        print(render_text(result.losses), file=sys.stderr)
        print(f"{output}: {verdict(findings, len(result.losses))}", file=sys.stderr)
        if code:
            print(f"{output}: written, but MNN differs from {result.reference} on {result.differing_probes:,} probe "
                  f"text(s): exit {EXIT_DIFFERS} (each cause is listed above; --strict refuses to write such a file)",
                  file=sys.stderr)
    return code


EXIT_DIFFERS = 3
"""``convert --target mnn`` / ``fix``: the file is written, and MNN's runtime differs from the
reference on at least one probe text."""


REFERENCE_HELP = ("what answers for Hugging Face in the report: hf (HF tokenizers, the 'hf' extra; refused "
                  "when missing) or mtokspec (mtokspec's own HF semantics of the written file, named so in "
                  "the report: not HF wherever the format loses something)")


def cmd_convert(args) -> int:
    from mtokspec.convert import from_hf

    return write_conversion(
        "convert", args.model_dir, args.output, args.report,
        lambda: from_hf(args.model_dir, strict=args.strict, exact_whitespace=args.exact_whitespace,
                        target=args.target, reference=args.reference),
        inputs=hf_inputs(args.model_dir), force=args.force)


def hf_inputs(model_dir: str) -> list[str]:
    """The files ``convert`` may read from a model folder (or a tokenizer.json and its folder)."""
    from mtokspec.convert.inputs import HF_INPUT_NAMES

    folder = Path(model_dir)
    files = [] if folder.is_dir() else [folder]
    if not folder.is_dir():
        folder = folder.parent
    return [str(p) for p in files + [folder / name for name in HF_INPUT_NAMES]]


def cmd_export_hf(args) -> int:
    from mtokspec.convert import to_hf_with_notes

    try:
        tree = mtokspec.parse(read_tokenizer_file(args.file, stdin=True))
        upgraded = []
        if not isinstance(tree, mtokspec.MtokFile):  # a legacy tokenizer.txt: its .mtok equivalent
            from mtokspec.convert.upgrade import upgrade

            result = upgrade(tree)
            tree = result.tree
            upgraded = [f"upgraded from a legacy tokenizer.txt with default options "
                        f"({len(result.losses)} losses; see `mtokspec upgrade`)"]
        doc, notes = to_hf_with_notes(tree)
        notes = upgraded + notes
        text = json.dumps(doc, ensure_ascii=False, indent=args.indent)
    except (OSError, MtokFormatError, ValueError) as e:
        print(f"mtokspec export-hf: {args.file}: {one_line(e)}", file=sys.stderr)
        return 2
    try:
        if args.output == "-":
            sys.stdout.write(text + "\n")
        else:
            write_output(args.output, text + "\n", [args.file], args.force)
    except OSError as e:
        print(f"mtokspec export-hf: {args.output}: {one_line(e)}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


def register(subparsers) -> None:
    from mtokspec.cli._checked import add_force

    p = subparsers.add_parser(
        "convert",
        help="convert a Hugging Face tokenizer folder to .mtok (no transformers needed)",
        description=(
            "Convert a Hugging Face model folder (tokenizer.json, plus tokenizer_config.json, "
            "special_tokens_map.json and generation_config.json when present) to a .mtok file, "
            "byte-identical to what MNN's exporter writes from the same folder. Everything the "
            ".mtok cannot represent is listed on stderr as a loss report."),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("model_dir", metavar="MODEL_DIR",
                   help="model folder, or the path of its tokenizer.json")
    p.add_argument("-o", "--output", required=True, metavar="FILE.mtok",
                   help="where to write the .mtok (atomically: nothing is left behind on failure)")
    p.add_argument("--strict", action="store_true",
                   help="fail (exit 1, nothing written) when the conversion would lose anything")
    p.add_argument("--exact-whitespace", action="store_true",
                   help="write HF's Whitespace pre-tokenizer as an equivalent Split instead of dropping "
                        "it (differs from the reference exporter's bytes)")
    p.add_argument("--target", choices=tuple(TARGETS), default="exporter",
                   help="; ".join(f"{name}: {what}" for name, what in TARGETS.items()))
    p.add_argument("--reference", choices=REFERENCES, default="hf", help=REFERENCE_HELP + " (the device targets: mnn, mnn-next, mnn@VERSION)")
    p.add_argument("--report", choices=("text", "json"), default="text",
                   help="format of the loss report printed to stderr")
    add_force(p)
    p.set_defaults(func=cmd_convert)
    p.epilog = (f"exit status: 0 written (with --target mnn: and MNN gives the reference's answer on every probe); "
                f"1 --strict refused a loss (nothing written); 2 an error (nothing written); {EXIT_DIFFERS} "
                "--target mnn: written, but MNN differs from the reference on some probe (the report's first line "
                "gives the rate per output, and each difference its cause)")

    q = subparsers.add_parser(
        "export-hf",
        help="write a .mtok file as a Hugging Face tokenizer.json",
        description=(
            "Write the tokenizer.json that tokenizes like FILE.mtok; Hugging Face `tokenizers` "
            "loads it with Tokenizer.from_file (an independent oracle for any .mtok)."),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    q.add_argument("file", metavar="FILE.mtok",
                   help="the .mtok to export ('-' for stdin); a legacy tokenizer.txt is upgraded first")
    q.add_argument("-o", "--output", required=True, metavar="tokenizer.json",
                   help="where to write the JSON ('-' for stdout)")
    q.add_argument("--indent", type=indent_width, default=None, metavar="0-%d" % MAX_INDENT,
                   help="indent the JSON by this many spaces (default: compact)")
    q.add_argument("--force", action="store_true", help=FORCE_HELP)
    q.set_defaults(func=cmd_export_hf)
