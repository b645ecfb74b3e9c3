"""Streaming decode with MNN semantics: what MNN's ``Tokenizer::decode(ids)`` of the ids so far adds.

:meth:`MnnTokenizer.stream` prints, as ids arrive, the part of the sequence decode of the ids so far
that no later id can change, in whole UTF-8 characters; ``flush()`` prints the rest, so the joined
output is ``decode(ids)``.  (The engine's own per-id print stays :meth:`MnnTokenizer.decode_stream`.)
It decodes the prefix at each id and holds back: an incomplete UTF-8 sequence, the bytes a
clean-up replacement over the whole text could still change (its longest pattern, less one), and,
when a decoder stage after a joining one (``Fuse``, ``WordPiece``) replaces across tokens,
everything until ``flush()``.  Design: ``docs/design/streaming.md``.
"""

from __future__ import annotations

from typing import Protocol

from mtokspec.runtime.shared.stream import PrefixStream, utf8_complete_end

__all__ = ["stream"]


class _Tokenizer(Protocol):
    """What this module reads of an :class:`~mtokspec.runtime.mnn.MnnTokenizer` (named here: the
    tokenizer imports this module, never the other way)."""

    def tail_hold(self) -> int | None: ...
    def decode_bytes(self, ids: list[int]) -> bytes: ...
    def decode(self, ids: list[int]) -> str: ...


def stream(tok: _Tokenizer) -> PrefixStream:
    """The streaming decoder of ``tok`` (see the module doc)."""
    hold = tok.tail_hold()

    def stable_end(ids: list[int], text: str) -> int:
        if hold is None:
            return 0
        data = tok.decode_bytes(ids)
        end = utf8_complete_end(data[:max(0, utf8_complete_end(data) - hold)])
        return len(data[:end].decode("utf-8", "replace"))

    return PrefixStream(tok.decode, stable_end)
