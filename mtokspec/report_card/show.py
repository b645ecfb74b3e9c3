"""How the pages print a rate and a text whose invisible characters matter."""

from __future__ import annotations

import unicodedata

__all__ = ["percent", "visible"]


def percent(rate: float | None) -> str:
    """A rate as a percentage with one decimal, never rounded up to 100% (or down to 0%) unless
    it is; ``n/a`` for ``None``."""
    if rate is None:
        return "n/a"
    if rate in (0, 1):
        return f"{100 * rate:.0f}%"
    return f"{min(max(100 * rate, 0.1), 99.9):.1f}%"


def visible(s: str) -> str:
    """Text with invisible characters shown: escapes for controls, format characters and white
    space other than the plain space."""
    out = []
    for c in s:
        if c == " ":
            out.append(c)
        elif c in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[c])
        elif unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"):
            out.append(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
        else:
            out.append(c)
    return "".join(out)
