"""set, diff: edit a file in place of a YAML round trip, and say what differs between two files."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from mtokspec.names import SEMANTICS

if TYPE_CHECKING:
    from mtokspec.format.tree import TokenizerFile

_SET_EPILOG = """\
tokens:  +ID or +TEXT adds, -ID or -TEXT removes, a bare ID or TEXT adds; ids and texts must be
         tokens of the file (text:X for a text that looks like an id or starts with + or -).
         A value starting with '-' goes after '=': --stop=-50256.
order:   added tokens, then roles, then eos/bos, chat template, flags; the roles never touch
         each other (a stop id added is never a prefix id).
exit:    0 written (or --dry-run); 2 a refused edit, an error-level validate finding (nothing
         written; --force writes it) or a file that cannot be read or written.

example: mtokspec set tokenizer.mtok --stop +'<|im_end|>' --eos '<|im_end|>' --dry-run"""


def _fail(command: str, what: str, err: Exception) -> int:
    from mtokspec.cli._io import one_line

    print(f"mtokspec {command}: {what}: {one_line(err)}", file=sys.stderr)
    return 2


def apply_set(tree: TokenizerFile, args: argparse.Namespace, notes: list[str]) -> TokenizerFile:
    """The tree with every edit of ``args`` applied, in the documented order; ``notes`` gets the
    id of each added token."""
    from mtokspec.format import edit

    for text, special in [(x, False) for x in args.add_token or ()] + [(x, True) for x in args.add_special_token or ()]:
        tree, new_id = edit.add_token(tree, text, special=special)
        if edit.in_vocabulary(tree, new_id):
            notes.append(f"{text!r} is id {new_id}")
        else:
            notes.append(f"{text!r} is id {new_id}, an added token past the vocabulary "
                         f"({len(getattr(tree.model, 'vocab', ())):,} rows) like the file's others: added tokens "
                         "hold every id inside it; MNN encodes it, but its decode looks ids up in the "
                         "vocabulary only (mnn-unk-decode)")
    from mtokspec.format.tree import HEADER_ROLES

    edits = [edit.parse_role_edit(role, spec) for role in HEADER_ROLES for spec in getattr(args, role) or ()]
    if edits:
        tree = edit.edit_roles(tree, edits)
    if args.eos is not None:
        tree = edit.set_text(tree, "eos_token", args.eos, must_be_token=True)
    if args.bos is not None:
        tree = edit.set_text(tree, "bos_token", args.bos, must_be_token=True)
    if args.chat_template is not None:
        from mtokspec.reading import read_input

        try:
            text = read_input(args.chat_template).decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise edit.EditError(f"{args.chat_template}: {e}") from None
        tree = edit.set_text(tree, "chat_template", text)
    if args.chat_template_from is not None:
        tree = edit.set_text(tree, "chat_template", edit.template_from_config(args.chat_template_from))
    for spec in args.flag or ():
        name, _, value = spec.partition("=")
        if value not in ("on", "off"):
            raise edit.EditError(f"--flag {spec!r}: expected NAME=on or NAME=off")
        tree = edit.set_flag(tree, name, value == "on")
    return tree


def _template_note(before: TokenizerFile, after: TokenizerFile) -> str:
    """For a chat template ``set`` changed that transformers cannot parse (MNN's engine renders
    any text): what the verdict says of it; '' otherwise."""
    template = getattr(after, "chat_template", None)
    if not template or template == getattr(before, "chat_template", None):
        return ""
    import jinja2

    from mtokspec.chat.environment import parsing_environment
    from mtokspec.cli._io import one_line

    try:
        parsing_environment().parse(template)
    except jinja2.TemplateSyntaxError as e:
        return f"warning: transformers cannot parse the chat template (line {e.lineno}: {one_line(e.message)})"
    except RecursionError:
        return "warning: the chat template nests too deeply for transformers' parser"
    return ""


def cmd_set(args: argparse.Namespace) -> int:
    import mtokspec
    from mtokspec.cli._checked import refuse, verdict
    from mtokspec.cli._io import write_output
    from mtokspec.reading import read_tokenizer_file
    from mtokspec.format.diff import diff, format_text

    if sum(map(bool, (args.output, args.in_place, args.dry_run))) != 1:
        return _fail("set", args.file, ValueError("give exactly one of -o OUT, --in-place, --dry-run"))
    if args.in_place and args.file == "-":
        return _fail("set", args.file, ValueError("--in-place cannot replace standard input (nor keep a backup "
                                                  "of it); give -o OUT, or -o - for standard output"))
    if args.chat_template is not None and args.chat_template_from is not None:
        return _fail("set", args.file, ValueError("--chat-template and --chat-template-from exclude each other"))
    try:
        original = read_tokenizer_file(args.file, stdin=True)
        before = mtokspec.parse(original)
        notes: list[str] = []
        after = apply_set(before, args, notes)
        data = mtokspec.build(after)
    except (OSError, mtokspec.Error) as e:
        return _fail("set", args.file, e)
    changes = diff(before, after)
    findings = mtokspec.validate(after)
    extra = _template_note(before, after)
    for note in notes:
        print(f"mtokspec set: added token {note}", file=sys.stderr)
    out = args.file if args.in_place else args.output or args.file
    if args.dry_run:
        sys.stdout.write(format_text(changes, args.file, "after set"))
        blocked = any(f.severity == "error" for f in findings) and not args.force
        print(f"{args.file}: dry run, nothing written; {verdict(findings, extra=extra)}"
              + ("; would be refused" if blocked else ""), file=sys.stderr)
        return 2 if blocked else 0
    if refuse("set", out, findings, args.force):
        return 2
    try:
        if args.in_place:  # replacing the input is what --in-place asks for
            write_output(args.file + args.backup_suffix, original, [args.file], args.force)
            write_output(out, data)
        else:
            write_output(out, data, [args.file], args.force)
    except OSError as e:
        return _fail("set", out, e)
    what = ", ".join(d.section for d in changes) or "nothing"
    backup = f" (backup {args.file + args.backup_suffix})" if args.in_place else ""
    print(f"{out}: {len(data):,} bytes{backup}; changed: {what}; {verdict(findings, extra=extra)}", file=sys.stderr)
    return 0


def _culprit(args: argparse.Namespace, a: TokenizerFile, b: TokenizerFile) -> str:
    """Which input a failed behavioural diff names: the file whose tokenizer does not load (each
    is loaded again, only on this path), else the cases run on them."""
    from mtokspec import Error
    from mtokspec.tokenizer import Tokenizer

    path: str
    for path, tree in ((args.a, a), (args.b, b)):
        try:
            Tokenizer.from_tree(tree, semantics=args.runtime)
        except Error:
            return path
    return f"running the cases of {', '.join(args.text)}"


def cmd_diff(args: argparse.Namespace) -> int:
    import mtokspec
    from mtokspec.reading import read_tokenizer_file
    from mtokspec.behaviour import behaviour
    from mtokspec.format.diff import format_text, to_json
    from mtokspec.format.diff import diff as tree_diff

    trees = []
    for path in (args.a, args.b):
        try:
            trees.append(mtokspec.parse(read_tokenizer_file(path, stdin=True)))
        except (OSError, mtokspec.Error) as e:
            return _fail("diff", path, e)
    a, b = trees
    sections = tree_diff(a, b)
    cases = None
    if args.text:
        from mtokspec.cli.cases import read_cases
        from mtokspec.cli.progress import Progress

        texts: list[str] = []
        for path in args.text:
            try:
                texts += read_cases(path)
            except (OSError, mtokspec.Error) as e:
                return _fail("diff", path, e)
        try:
            with Progress("diff", len(texts), quiet=args.quiet) as progress:
                cases = behaviour(a, b, texts, args.runtime, progress=progress.update)
        except mtokspec.Error as e:
            return _fail("diff", _culprit(args, a, b), e)
    differ = bool(sections) or bool(cases)
    if args.json:
        doc = to_json(sections)
        if cases is not None:
            doc["behaviour"] = {"runtime": args.runtime, "cases": len(texts), "differing": len(cases),
                                "differences": [c.__dict__ for c in cases]}
        doc["same"] = not differ
        print(json.dumps(doc, ensure_ascii=False, indent=1))
        return 1 if differ else 0
    sys.stdout.write(format_text(sections, args.a, args.b))
    if cases is not None:
        print(f"behaviour ({args.runtime} semantics): {len(cases)} of {len(texts)} cases differ")
        for c in cases[:args.show]:
            print(f"  case {c.index}: {c.text[:60]!r}")
            if c.position is not None:
                print(f"    {args.a}: {c.window[0]}")
                print(f"    {args.b}: {c.window[1]}")
            if c.decoded_a != c.decoded_b:
                print(f"    decode: {c.decoded_a[:60]!r} -> {c.decoded_b[:60]!r}")
        if len(cases) > args.show:
            print(f"  ... and {len(cases) - args.show:,} more (--show N, --json)")
    return 1 if differ else 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from mtokspec.cli._checked import add_force

    p = sub.add_parser(
        "set", help="edit header roles, eos/bos, chat template, flags and added tokens of a file",
        description="Change a file without a YAML round trip: header ids by role (tokens by id or\n"
                    "text, checked to exist), eos/bos, the chat template, flags, new added tokens (put\n"
                    "in the vocabulary at their sorted place, as MNN's binary search needs, with an id\n"
                    "inside it, as its loader needs; past it only when added tokens hold every id inside,\n"
                    "as in whisper's). The result is validated before it is written; --dry-run prints\n"
                    "what would change.",
        epilog=_SET_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="the .mtok (or, for header roles, a legacy tokenizer.txt)")
    for role, doc in (("special", "special ids (split out whole, left out of decode)"),
                      ("stop", "stop ids (generation ends at them)"),
                      ("prefix", "prefix ids (put before every encode)")):
        p.add_argument(f"--{role}", action="append", metavar="[+-]TOKEN", help=f"edit the {doc}; repeatable")
    p.add_argument("--eos", metavar="TEXT", help="the eos_token text (a token of the file)")
    p.add_argument("--bos", metavar="TEXT", help="the bos_token text (a token of the file, or '')")
    p.add_argument("--chat-template", metavar="FILE", help="the chat template, from a Jinja file ('-': stdin)")
    p.add_argument("--chat-template-from", metavar="tokenizer_config.json",
                   help="the chat template of a tokenizer_config.json")
    p.add_argument("--flag", action="append", metavar="NAME=on|off",
                   help="set or clear a flag, e.g. clean_up_tokenization_spaces=on; repeatable")
    p.add_argument("--add-token", action="append", metavar="TEXT", help="add a (plain) added token; repeatable")
    p.add_argument("--add-special-token", action="append", metavar="TEXT",
                   help="add a special added token, also a header special id; repeatable")
    out = p.add_argument_group("where the result goes (one of)")
    out.add_argument("-o", "--output", metavar="OUT", help="write the result here (atomically)")
    out.add_argument("--in-place", action="store_true", help="replace FILE, keeping the old one as FILE.bak")
    out.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    p.add_argument("--backup-suffix", default=".bak", help="with --in-place (default %(default)s)")
    add_force(p)
    p.set_defaults(func=cmd_set)

    p = sub.add_parser(
        "diff", help="what differs between two files, by meaning (exit 0 same, 1 different)",
        description="Compare two tokenizer files section by section, by meaning rather than bytes: "
                    "header ids per role with their tokens, normalizer/pre-tokenizer/decoder/post-processor "
                    "trees, the model's settings, the vocabulary (added, removed, renumbered), merges by "
                    "token pair, added tokens by text, the chat template as a unified diff, eos/bos, flags. "
                    "--text adds a behavioural diff: the cases whose ids or decoded text differ. "
                    "Exit 0 the same, 1 different, 2 a file could not be read.")
    p.add_argument("a", metavar="A", help="the first file")
    p.add_argument("b", metavar="B", help="the second file")
    p.add_argument("--text", action="append", metavar="FILE",
                   help="cases to run both files on: a JSON list, JSON Lines or plain text (one case per "
                        "line); repeatable")
    p.add_argument("--runtime", choices=SEMANTICS, default="hf",
                   help="the semantics of the behavioural diff (default hf)")
    p.add_argument("--show", type=int, default=10, help="differing cases to print (default 10)")
    p.add_argument("--json", action="store_true", help="print the whole report as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_diff)
