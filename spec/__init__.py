"""The byte layouts of MNN's tokenizer files, declared once with ``construct``.

``mtok`` declares the binary ``.mtok`` format.  The declarations double as a slow reference
codec (``reference_parse`` / ``reference_build``); ``tools/generate/`` turns them into the fast
codec, the tree classes and ``FORMAT.md`` in ``generated/``.
"""

from __future__ import annotations

import construct as c

from . import _dsl, mtok, txt

__all__ = ["mtok", "txt", "reference_parse", "reference_build", "ReferenceError", "ROOTS"]

#: line 1 -> the root declaration; the plain form's "format" key -> the same
ROOTS = {_dsl.unwrap(root.subcons[0]).magic_line: root for root in (mtok.MtokFile, *txt.ROOTS.values())}
FORMATS = {
    "mtok": mtok.MtokFile,
    "txt-sentencepiece": txt.SentencePieceTxtFile,
    "txt-tiktoken": txt.TiktokenTxtFile,
    "txt-bert": txt.BertTxtFile,
    "txt-huggingface": txt.HuggingFaceTxtFile,
}


class ReferenceError(ValueError):
    """Any failure of the reference codec, with construct's path in the message."""


def reference_parse(data: bytes) -> dict:
    """Parse with construct (slow, independent of the generated code) into the plain form."""
    data = bytes(data)
    root = ROOTS.get(data[:6])
    if root is None:
        raise ReferenceError(f"unknown magic line {data[:6]!r}")
    try:
        return root.parse(data)
    except (c.ConstructError, ValueError, OverflowError, RecursionError) as e:
        raise ReferenceError(str(e)) from None


def reference_build(plain: dict) -> bytes:
    """Build from the plain form with construct."""
    root = FORMATS.get(plain.get("format", "mtok"))
    if root is None:
        raise ReferenceError(f"unknown format {plain.get('format')!r}")
    try:
        return root.build({k: v for k, v in plain.items() if k != "format"})
    except (c.ConstructError, ValueError, OverflowError, RecursionError, KeyError, TypeError) as e:
        raise ReferenceError(f"{type(e).__name__}: {e}") from None
