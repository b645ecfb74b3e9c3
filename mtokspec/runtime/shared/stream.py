"""The prefix stream: what a sequence decode of the ids so far adds, printed where it is stable.

``PrefixStream(decode, stable_end)`` keeps every id; ``step(id)`` decodes the whole prefix (one
sequence decode per id: O(n) work per id) and prints the part past what it printed before, up to
``stable_end(ids, text)``, the end of the part no later id can change; ``flush()`` prints the rest,
so the joined output is the decode of the whole sequence.  Both semantics use it where no per-id
table describes the decoder (``docs/design/streaming.md``).
"""

from __future__ import annotations

import codecs
from typing import Callable

from mtokspec.errors import TokenizerError
from mtokspec.args import token_id

__all__ = ["PrefixStream", "utf8_complete_end"]


def utf8_complete_end(data: bytes) -> int:
    """The end of ``data`` without a trailing UTF-8 sequence that more bytes could still complete
    (what an incremental UTF-8 decoder keeps pending); invalid bytes count as complete."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    decoder.decode(data)
    return len(data) - len(decoder.getstate()[0])


class PrefixStream:
    """Text as ids arrive: ``step(id)`` returns the new stable text ("" while it holds), ``flush()``
    the rest.  ``decode(ids)`` is the semantics' sequence decode as text; ``stable_end(ids, text)``
    says how much of ``text`` is final."""

    __slots__ = ("_decode", "_stable_end", "_ids", "_printed")

    def __init__(self, decode: Callable[[list[int]], str], stable_end: Callable[[list[int], str], int]):
        self._decode = decode
        self._stable_end = stable_end
        self._ids: list[int] = []
        self._printed = ""

    def step(self, token_id_: int) -> str:
        self._ids.append(token_id("token_id", token_id_))
        text = self._decode(self._ids)
        end = self._stable_end(self._ids, text)
        return self._take(text, end)

    def flush(self) -> str:
        """What is still held: the decode of every id so far, past what was printed."""
        text = self._decode(self._ids)
        return self._take(text, len(text))

    def _take(self, text: str, end: int) -> str:
        printed = self._printed
        if end <= len(printed):
            if not text.startswith(printed[:max(end, 0)]):
                raise TokenizerError(f"stream: the decode of the ids so far changed text already printed "
                                     f"({printed!r} -> {text!r})")
            return ""
        if not text.startswith(printed):
            raise TokenizerError(f"stream: the decode of the ids so far changed text already printed "
                                 f"({printed!r} -> {text!r})")
        new = text[len(printed):end]
        self._printed = text[:end]
        return new
