"""The ``mtokspec`` command: composes the library, adds no behaviour of its own."""

from __future__ import annotations

import argparse
import sys

from mtokspec import __version__
from mtokspec.cli import chat, codec, convert, edit, fingerprint, lint, mnn, report, runtime, stream, upgrade
from mtokspec.cli._io import configure_streams, one_line, silence_stdout
from mtokspec.errors import Error

DESCRIPTION = """\
Read, check, write and run MNN tokenizer files (.mtok, legacy tokenizer.txt).

Exit codes: 0 success; 1 the command ran and found problems (validate findings, compare
mismatches); 2 a file could not be read, parsed or written (nothing is left half-written).

Files: every input is read up to 2 GiB (MTOKSPEC_MAX_INPUT=BYTES sets another limit); -o replaces
only a regular file (a symlink's target; a device, FIFO or folder is refused; '-' is standard
output), keeps its mode and owner, and refuses the command's own input unless --force."""


COMMAND_MODULES = [codec, edit, lint, runtime, stream, fingerprint, chat, convert, upgrade, mnn, report]
"""Each sub-command module has ``register(subparsers)``; the order is the order of ``--help``."""


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mtokspec", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"mtokspec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    configure_streams()
    parser = make_parser()
    args, extras = parser.parse_known_args(argv)
    # argparse cannot fill an optional positional that comes after a flag
    # (`encode FILE --special TEXT`); take it here rather than refuse a natural command line.
    if len(extras) == 1 and not extras[0].startswith("-") and getattr(args, "text", False) is None:
        args.text = extras[0]
    elif extras:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a full disk or a closed pipe is reported here, not at exit
        return code
    except BrokenPipeError:  # e.g. `mtokspec dump big.mtok | head`
        silence_stdout()
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130
    except UnicodeEncodeError as e:  # a character the stdout's encoding lacks (not a surrogate)
        silence_stdout()
        print(f"mtokspec {args.command}: standard output ({e.encoding}) cannot write {e.object[e.start]!r}; "
              "PYTHONIOENCODING=utf-8 writes it", file=sys.stderr)
        return 2
    except (Error, OSError, RecursionError) as e:  # what a command did not catch itself: still one line
        silence_stdout()
        print(f"mtokspec {args.command}: {one_line(e)}", file=sys.stderr)
        return 2
    except MemoryError as e:  # an input within MTOKSPEC_MAX_INPUT that this machine cannot hold
        silence_stdout()
        print(f"mtokspec {args.command}: {one_line(e)}", file=sys.stderr)
        return 2



if __name__ == "__main__":
    sys.exit(main())
