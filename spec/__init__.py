"""The byte layouts of MNN's tokenizer files, declared once with ``construct``.

``mtok`` declares the binary ``.mtok`` format.  The declarations double as a slow reference
codec (``reference_parse`` / ``reference_build``); ``tools/generate.py`` turns them into the fast
codec, the tree classes and ``FORMAT.md`` in ``generated/``.
"""

from __future__ import annotations

import construct as c

from . import mtok

__all__ = ["mtok", "reference_parse", "reference_build", "ReferenceError"]


class ReferenceError(ValueError):
    """Any failure of the reference codec, with construct's path in the message."""


def reference_parse(data: bytes) -> dict:
    """Parse with construct (slow, independent of the generated code) into the plain form."""
    try:
        return mtok.MtokFile.parse(bytes(data))
    except (c.ConstructError, ValueError, OverflowError, RecursionError) as e:
        raise ReferenceError(str(e)) from None


def reference_build(plain: dict) -> bytes:
    """Build from the plain form with construct."""
    try:
        return mtok.MtokFile.build(plain)
    except (c.ConstructError, ValueError, OverflowError, RecursionError, KeyError, TypeError) as e:
        raise ReferenceError(f"{type(e).__name__}: {e}") from None
