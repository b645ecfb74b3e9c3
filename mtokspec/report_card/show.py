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
    """Text with invisible characters shown: escapes for controls, format characters, white
    space other than the plain space, and a combining mark at the start or after an ASCII
    character (``e\u0301``, which would look like ``é``; marks of other scripts stay as they are)."""
    out = []
    for k, c in enumerate(s):
        cat = unicodedata.category(c)
        if c == " ":
            out.append(c)
        elif c in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[c])
        elif cat in ("Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp") or (
                cat[0] == "M" and (k == 0 or s[k - 1].isascii())):
            out.append(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
        else:
            out.append(c)
    return "".join(out)
