"""Facts of a ``.mtok`` vocabulary's rows that both runtimes read: an id's text, the byte pieces,
and the rows ``--target mnn`` writes for BPE's unknown token."""

from __future__ import annotations

from typing import Any

__all__ = ["BYTE_PIECES", "LEAD_BYTES", "texts_by_id", "looked_up", "hf_unk_id", "unknown_rows_id"]

BYTE_PIECES = [b"<0x%02X>" % b for b in range(256)]
"""The byte-fallback piece of each byte."""

LEAD_BYTES = frozenset((*range(0x80), *range(0xC2, 0xF5)))
"""The bytes that begin a character in UTF-8 (continuation bytes 0x80-0xBF, never-used 0xC0, 0xC1,
0xF5-0xFF are left out)."""


def texts_by_id(rows: Any) -> dict[int, bytes]:
    """Each id's text: its last row (MNN's loader writes ``id_to_token[id]`` row after row, so of
    rows sharing an id the last is what the id decodes to)."""
    return {row[1]: row[0] for row in rows}


def looked_up(rows: Any, text: bytes) -> int | None:
    """The id MNN's look-up of ``text`` finds: its first row's (rows are sorted by text; equal texts
    follow each other), or None."""
    return next((row[1] for row in rows if row[0] == text), None)


def hf_unk_id(model_node: Any) -> int | None:
    """The id of a ``tokenizer.json`` model's ``unk_token`` in its own vocabulary (HF's id: a
    written file may spell its text otherwise), or None."""
    if not isinstance(model_node, dict):
        return None
    vocab, unk = model_node.get("vocab"), model_node.get("unk_token")
    i = vocab.get(unk) if isinstance(vocab, dict) and isinstance(unk, str) else None
    return i if isinstance(i, int) else None


def unknown_rows_id(rows: Any, byte_fallback: bool) -> int | None:
    """The unknown id a BPE vocabulary's rows carry, or None: without byte fallback, ``<0xHH>`` rows
    for exactly the bytes that begin a character, all of one id.  MNN's BPE looks a character no
    token covers up byte by byte as ``<0xHH>`` pieces (whatever the flag) and drops the bytes it
    does not find, so such rows give that id once per character: HF's ``unk_token`` without
    ``fuse_unk``; mtokspec's HF semantics reads them so too."""
    if byte_fallback:
        return None
    pieces = {p: b for b, p in enumerate(BYTE_PIECES)}
    found = {pieces[row[0]]: row[1] for row in rows if row[0] in pieces}
    ids = set(found.values())
    return ids.pop() if len(ids) == 1 and found.keys() == LEAD_BYTES else None
