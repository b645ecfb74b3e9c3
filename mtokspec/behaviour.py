"""Two tokenizer files run on the same texts: the cases whose ids or decoded text differ (what
``mtokspec diff --text`` adds to the section diff), and the first differing window of two id lists
(how ``diff`` and ``compare`` show a difference)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mtokspec.format import tree as t

if TYPE_CHECKING:
    from mtokspec.tokenizer import Semantics

__all__ = ["CaseDiff", "behaviour", "first_difference", "token_window"]


@dataclass
class CaseDiff:
    """A text two files treat differently: ``index`` in the cases, the ids each file gives, where
    they first differ (``position``; None when only the decode differs) and the decoded texts."""

    index: int
    text: str
    ids_a: list[int]
    ids_b: list[int]
    position: int | None
    decoded_a: str
    decoded_b: str
    window: list[str] = field(default_factory=list)


def first_difference(a: list[int], b: list[int]) -> int | None:
    """The first position where two id lists differ (the shorter one's length when one is a prefix
    of the other), None when they are equal."""
    if a == b:
        return None
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def token_window(ids: list[int], position: int, token: Any, context: int = 2) -> str:
    """The tokens around ``position`` as ``id:'text'``, ``context`` on each side, with ``...`` where
    the list goes on (``token(id)`` gives a token's text or None)."""
    lo, hi = max(0, position - context), min(len(ids), position + context + 1)
    parts = ["..."] if lo else []
    for i in range(lo, hi):
        parts.append(("[" if i == position else "") + f"{ids[i]}:{token(ids[i])!r}" + ("]" if i == position else ""))
    if position >= len(ids):
        parts.append("[end]")
    if hi < len(ids):
        parts.append("...")
    return " ".join(parts)


def behaviour(a: t.TokenizerFile, b: t.TokenizerFile, texts: list[str], semantics: Semantics = "hf",
              progress: Any = None) -> list[CaseDiff]:
    """The cases whose ids or decoded text differ between the files run with ``semantics``
    (``hf``: encode without special tokens; ``mnn`` and ``mnn@VERSION``: MNN's ``encode(text)`` and
    ``decode(ids)``)."""
    from mtokspec.tokenizer import Tokenizer

    runs = [Tokenizer.from_tree(x, semantics=semantics) for x in (a, b)]

    def run(tok: Any, text: str) -> tuple[list[int], str]:
        if semantics != "hf":
            ids = tok.encode(text)
            return ids, tok.decode_bytes(ids).decode("utf-8", "backslashreplace")
        ids = tok.encode(text, add_special_tokens=False)
        return ids, tok.decode(ids)

    out: list[CaseDiff] = []
    for n, text in enumerate(texts):
        if progress is not None:
            progress(n)
        (ia, da), (ib, db) = (run(tok, text) for tok in runs)
        if ia == ib and da == db:
            continue
        pos = first_difference(ia, ib)
        window = [] if pos is None else [token_window(ia, pos, runs[0].id_to_token),
                                         token_window(ib, pos, runs[1].id_to_token)]
        out.append(CaseDiff(n, text, ia, ib, pos, da, db, window))
    return out
