"""Decoders: tokens back to text, like HF ``tokenizers/src/decoders``.

Each class has ``decode_chain(tokens) -> tokens``; :func:`decode` joins the final tokens with ``""``
as HF's ``Decoder::decode`` does.  A missing or unknown HF decoder is written by the exporter as
``ByteLevel`` (https://github.com/alibaba/MNN/blob/4d40bdbd7efb73a58383bb5da867a6f41eb1776e/transformers/llm/export/utils/tokenizer.py#L490-L533); the runtime follows the file.
"""

from __future__ import annotations

from mtokspec.format import tree as t
from mtokspec.runtime.shared.registry import build_from_registry, pieces_size, run_chain, stage_registry
from mtokspec.runtime.hf.pre_tokenizers import UNICODE_TO_BYTES
from mtokspec.runtime.shared.bounds import current, grown

__all__ = ["Decoder", "ByteLevel", "ByteFallback", "Metaspace", "WordPiece", "Fuse", "Replace",
           "Strip", "Sequence", "REGISTRY", "from_tree", "wordpiece_cleanup"]


class Decoder:
    __slots__ = ()

    def decode_chain(self, tokens: list[str]) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def decode(self, tokens: list[str]) -> str:
        return "".join(self.decode_chain(tokens))


class ByteLevel(Decoder):
    """Byte-level characters back to bytes (a token with any other character keeps its UTF-8
    bytes), then the whole byte string as UTF-8 with U+FFFD for invalid sequences."""

    __slots__ = ()

    def decode_chain(self, tokens: list[str]) -> list[str]:
        m = UNICODE_TO_BYTES
        out = bytearray()
        for tok in tokens:
            try:
                out += bytes([m[c] for c in tok])
            except KeyError:
                out += tok.encode("utf-8", "surrogatepass")
        return [out.decode("utf-8", "replace")]

    @classmethod
    def from_tree(cls, node) -> "ByteLevel":
        return cls()


def _byte_token(t: str) -> int | None:
    if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
        h = t[3:5]
        if all(c in "0123456789abcdefABCDEF" for c in h) or (h[0] == "+" and h[1] in
                                                               "0123456789abcdefABCDEF"):
            return int(h, 16)
    return None


class ByteFallback(Decoder):
    """``<0xXX>`` tokens back to bytes; an invalid UTF-8 run becomes one U+FFFD per byte."""

    __slots__ = ()

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        pending = bytearray()
        for tok in tokens:
            b = _byte_token(tok) if len(tok) == 6 else None
            if b is not None:
                pending.append(b)
                continue
            if pending:
                self._flush(pending, out)
                pending = bytearray()
            out.append(tok)
        if pending:
            self._flush(pending, out)
        return out

    @staticmethod
    def _flush(pending: bytearray, out: list[str]) -> None:
        try:
            out.append(pending.decode("utf-8"))
        except UnicodeDecodeError:
            out.extend(["\ufffd"] * len(pending))

    @classmethod
    def from_tree(cls, node) -> "ByteFallback":
        return cls()


class Metaspace(Decoder):
    """The replacement character back to a space; dropped in the first token when the prefix
    scheme is not "never" (the file's ``add_prefix_space``)."""

    __slots__ = ("replacement", "add_prefix_space")

    def __init__(self, replacement: str, add_prefix_space: bool):
        self.replacement = replacement
        self.add_prefix_space = add_prefix_space

    def decode_chain(self, tokens: list[str]) -> list[str]:
        r = self.replacement
        out = [t.replace(r, " ") for t in tokens]
        if out and self.add_prefix_space:
            out[0] = tokens[0].replace(r, "")
        return out

    @classmethod
    def from_tree(cls, node: t.MetaspaceDecoder) -> "Metaspace":
        return cls(node.replacement, node.add_prefix_space)


def wordpiece_cleanup(s: str) -> str:
    """HF's ``cleanup`` of the WordPiece decoder."""
    return (s.replace(" .", ".").replace(" ?", "?").replace(" !", "!").replace(" ,", ",")
            .replace(" ' ", "'").replace(" n't", "n't").replace(" 'm", "'m")
            .replace(" do not", " don't").replace(" 's", "'s").replace(" 've", "'ve")
            .replace(" 're", "'re"))


class WordPiece(Decoder):
    """Non-initial tokens: drop ``prefix`` if present, else put a space before; then cleanup."""

    __slots__ = ("prefix", "cleanup")

    def __init__(self, prefix: str, cleanup: bool):
        self.prefix = prefix
        self.cleanup = cleanup

    def decode_chain(self, tokens: list[str]) -> list[str]:
        p = self.prefix
        out = []
        for i, tok in enumerate(tokens):
            if i:
                tok = tok[len(p):] if tok.startswith(p) else " " + tok
            if self.cleanup:
                tok = wordpiece_cleanup(tok)
            out.append(tok)
        return out

    @classmethod
    def from_tree(cls, node: t.WordPieceDecoder) -> "WordPiece":
        return cls(node.prefix, node.cleanup)


class Fuse(Decoder):
    __slots__ = ()

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]

    @classmethod
    def from_tree(cls, node) -> "Fuse":
        return cls()


class Replace(Decoder):
    """Literal replacement in each token (an empty pattern inserts ``content`` at every character
    boundary of a non-empty token, as HF's empty regex does)."""

    __slots__ = ("pattern", "content")

    def __init__(self, pattern: str, content: str):
        self.pattern = pattern
        self.content = content

    def decode_chain(self, tokens: list[str]) -> list[str]:
        p, c = self.pattern, self.content
        if len(c) > len(p):
            if p:
                n = sum(grown(t, p, c) for t in tokens)
            else:  # content at every boundary of a non-empty token
                n = sum(len(t) + (len(t) + 1) * len(c) if t else 0 for t in tokens)
            current(sum(map(len, tokens))).size("decoder Replace", n)
        return [t.replace(p, c) if t else t for t in tokens]

    @classmethod
    def from_tree(cls, node: t.ReplaceDecoder) -> "Replace":
        return cls(node.pattern, node.content)


class Strip(Decoder):
    """Remove up to ``start`` leading and ``stop`` trailing ``content`` characters per token."""

    __slots__ = ("content", "start", "stop")

    def __init__(self, content: str, start: int, stop: int):
        self.content = content
        self.start = start
        self.stop = stop

    def decode_chain(self, tokens: list[str]) -> list[str]:
        c, start, stop = self.content, self.start, self.stop
        out = []
        for tok in tokens:
            n = len(tok)
            a = 0
            while a < start and a < n and tok[a] == c:
                a += 1
            b = n
            k = 0
            while k < stop and b > a and tok[b - 1] == c:
                b -= 1
                k += 1
            out.append(tok[a:b])
        return out

    @classmethod
    def from_tree(cls, node: t.StripDecoder) -> "Strip":
        return cls(node.content, node.start, node.stop)


class Sequence(Decoder):
    __slots__ = ("decoders",)

    def __init__(self, decoders: list[Decoder]):
        self.decoders = decoders

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return run_chain(self.decoders, tokens, "decode_chain", "decoder Sequence", pieces_size)

    @classmethod
    def from_tree(cls, node: t.SequenceDecoder) -> "Sequence":
        return cls([from_tree(d) for d in node.decoders])


REGISTRY: dict[type, type[Decoder]] = stage_registry(
    "Decoder", ByteLevel, ByteFallback, Metaspace, WordPiece, Fuse, Replace, Strip, Sequence)


def from_tree(node) -> Decoder:
    """The runtime decoder for a tree node."""
    return build_from_registry(REGISTRY, node, "decoder")
