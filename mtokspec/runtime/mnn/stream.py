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

from typing import TYPE_CHECKING

from mtokspec.format import tree as t
from mtokspec.runtime.shared.stream import PrefixStream, utf8_complete_end

if TYPE_CHECKING:
    from mtokspec.runtime.mnn.tokenizer import MnnTokenizer

__all__ = ["stream", "tail_hold"]


def tail_hold(tok: "MnnTokenizer") -> int | None:
    """How many trailing bytes of the decode a later id can still change (None: all of them)."""
    from mtokspec.runtime.mnn import pipeline

    if not isinstance(tok, pipeline.PipelineTokenizer):
        return 0  # the legacy types join their per-id decodes
    tree = tok.tree
    assert isinstance(tree, t.MtokFile)
    joined = False
    for node, _ in t.walk_stage(tree.decoder):
        if isinstance(node, (t.FuseDecoder, t.WordPieceDecoder)):
            joined = True
        elif joined and (isinstance(node, t.ReplaceDecoder) and len(node.pattern.encode("utf-8", "surrogatepass")) > 1
                         or isinstance(node, t.StripDecoder) and node.start > 0
                         and len(node.content.encode("utf-8", "surrogatepass")) > 1
                         or isinstance(node, (t.MetaspaceDecoder, t.ByteFallbackDecoder))):
            return None
    patterns: list[bytes] = []
    if tok.wordpiece_decode:
        patterns += [a for a, _ in pipeline._WORDPIECE_CLEANUP]
    if tok.clean_up_spaces:
        patterns += [a for a, _ in pipeline._CLEANUP]
    return max((len(a) - 1 for a in patterns), default=0)


def stream(tok: "MnnTokenizer") -> PrefixStream:
    """The streaming decoder of ``tok`` (see the module doc)."""
    hold = tail_hold(tok)

    def stable_end(ids: list[int], text: str) -> int:
        if hold is None:
            return 0
        data = tok.decode_bytes(ids)
        end = utf8_complete_end(data[:max(0, utf8_complete_end(data) - hold)])
        return len(data[:end].decode("utf-8", "replace"))

    return PrefixStream(tok.decode, stable_end)
