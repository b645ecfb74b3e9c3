"""What every command that writes a tokenizer file does first: ``validate`` what it is about to
write, refuse an error-level finding (say which, exit 2, nothing written) unless ``--force``, and
end with a one-line verdict."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mtokspec.format.validate import Finding

__all__ = ["add_force", "refuse", "verdict"]

SHOWN = 10  # error-level findings printed with a refusal


def add_force(p: argparse.ArgumentParser) -> None:
    """``--force`` of a command that writes a tokenizer file: past the validate refusal and the
    output-is-an-input refusal (``mtokspec.cli._io``) alike."""
    from mtokspec.cli._io import FORCE_HELP

    p.add_argument("--force", action="store_true",
                   help="write the file even when validate finds an error-level problem in it; also "
                        + FORCE_HELP)


def _codes(findings: list[Finding]) -> str:
    counts = Counter(f.code for f in findings)
    return ", ".join(code if n == 1 else f"{code} x{n}" for code, n in counts.items())


def refuse(command: str, output: str, findings: list[Finding], force: bool) -> bool:
    """Print the error-level findings and the refusal when there are some and not ``force``;
    True when the file must not be written."""
    errors = [f for f in findings if f.severity == "error"]
    if not errors or force:
        return False
    for f in errors[:SHOWN]:
        print(f"mtokspec {command}: {output}: {f}", file=sys.stderr)
    if len(errors) > SHOWN:
        print(f"mtokspec {command}: {output}: ... {len(errors) - SHOWN} more (mtokspec validate lists them)",
              file=sys.stderr)
    print(f"mtokspec {command}: {output}: not written: {len(errors)} error-level finding(s) "
          f"({_codes(errors)}); --force writes it anyway", file=sys.stderr)
    return True


def verdict(findings: list[Finding], losses: int | None = None, extra: str = "") -> str:
    """``validate ok`` or the error and warning counts with their codes; losses first when given."""
    errors = [f for f in findings if f.severity == "error"]
    warnings = [f for f in findings if f.severity == "warning"]
    parts = [] if losses is None else [f"{losses} loss(es)"]
    if not errors and not warnings:
        parts.append("validate ok")
    else:
        if errors:
            parts.append(f"{len(errors)} error(s) written with --force ({_codes(errors)})")
        if warnings:
            parts.append(f"{len(warnings)} warning(s) ({_codes(warnings)})")
    if extra:
        parts.append(extra)
    return "; ".join(parts)
