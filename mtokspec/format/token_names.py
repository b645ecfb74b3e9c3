"""The text of each id a file names, read from the tree alone (no runtime): what ``inspect``,
``diff`` and ``set`` show next to an id, and how ``set`` finds a token given by its text."""

from __future__ import annotations

from collections.abc import Iterator

from mtokspec.format import tree as t

__all__ = ["token_bytes", "token_text", "tokens_by_id", "ids_of_text", "labelled"]


def _rows(tree: t.TokenizerFile) -> Iterator[tuple[int, bytes]]:
    """(id, token bytes) of the model's vocabulary (or the legacy lines), then the added tokens."""
    if isinstance(tree, t.MtokFile):
        for row in tree.model.vocab:
            yield row[1], row[0]
        for a in tree.added_tokens:
            yield a.id, a.content.encode("utf-8", "surrogatepass")
    elif isinstance(tree, t.SentencePieceTxtFile):
        for i, piece in enumerate(tree.pieces):
            yield i, piece[0]
    else:
        yield from enumerate(tree.tokens)


def tokens_by_id(tree: t.TokenizerFile) -> dict[int, bytes]:
    """id -> token bytes; an added token wins over a vocabulary row of the same id."""
    return dict(_rows(tree))


def token_bytes(tree: t.TokenizerFile, ids: list[int]) -> dict[int, bytes]:
    """The token bytes of the given ids that the file knows (one pass over its tables)."""
    wanted = set(ids)
    return {i: b for i, b in _rows(tree) if i in wanted}


def token_text(b: bytes | None) -> str | None:
    """Token bytes as text (invalid UTF-8 as \\x escapes), None for an unknown id."""
    return None if b is None else b.decode("utf-8", "backslashreplace")


def ids_of_text(tree: t.TokenizerFile, text: str) -> list[int]:
    """The ids whose token is exactly ``text`` (added tokens first, as they are matched first)."""
    want = text.encode("utf-8", "surrogatepass")
    rows = list(_rows(tree))
    added = {a.id for a in tree.added_tokens} if isinstance(tree, t.MtokFile) else set()
    hits = [i for i, b in rows if b == want]
    return sorted(set(hits), key=lambda i: (i not in added, i))


def labelled(tree: t.TokenizerFile, ids: list[int]) -> list[tuple[int, str | None]]:
    """(id, token text or None) for each id, in order."""
    known = token_bytes(tree, ids)
    return [(i, token_text(known.get(i))) for i in ids]
