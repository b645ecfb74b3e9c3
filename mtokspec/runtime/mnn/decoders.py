"""Decoders as MNN's C++ ``PipelineTokenizer::decode(vector)`` runs them: a list of token bytes
through each decoder's ``decode_chain``, then joined."""

from __future__ import annotations

from mtokspec.runtime.shared.registry import build_from_registry, pieces_size, run_chain, stage_registry
from mtokspec.runtime.mnn._text import i32, utf8
from mtokspec.runtime.shared.bounds import current, grown
from mtokspec.runtime.mnn import unicode as U
from mtokspec.errors import UndefinedInMnn
from mtokspec.runtime.mnn.pre_tokenizers import BYTE_MAP

# the UTF-8 of each GPT-2 stand-in character -> its byte
UNBYTE = {c: b for b, c in enumerate(BYTE_MAP)}
_HEX = b"0123456789abcdefABCDEF"
_C_SPACE = b" \t\n\v\f\r"


def scan_hex_byte(s: bytes, at: int) -> int | None:
    """``sscanf(s + at, "%02X", &b)``: white space skipped, an optional sign, then up to two
    characters of hex digits; the low byte of the value, or None when nothing converts."""
    n = len(s)
    while at < n and s[at] in _C_SPACE:
        at += 1
    neg = False
    width = 2
    if at < n and s[at] in b"+-":
        neg = s[at] == 45
        at += 1
        width -= 1
    digits = bytearray()
    while width and at < n and s[at] in _HEX:
        digits.append(s[at])
        at += 1
        width -= 1
    if not digits:
        return None
    v = int(digits, 16)
    return (-v if neg else v) & 0xFF


def byte_level_unmap(token: bytes) -> bytes:
    if token.isascii():  # ASCII stand-ins are their own bytes; the other ASCII bytes are not stand-ins
        return token
    out = bytearray()
    for off, r, _ in U.chars(token):
        ch = token[off:off + r]
        b = UNBYTE.get(ch)
        if b is None:
            out += ch
        else:
            out.append(b)
    return bytes(out)


class ByteLevel:
    @classmethod
    def from_tree(cls, n) -> "ByteLevel":
        return cls()

    def decode_chain(self, tokens: list[bytes]) -> list[bytes]:
        return [byte_level_unmap(token) for token in tokens]


class ByteFallback:
    @classmethod
    def from_tree(cls, n) -> "ByteFallback":
        return cls()

    def decode_chain(self, tokens: list[bytes]) -> list[bytes]:
        out = []
        for token in tokens:
            if len(token) >= 3 and token[:3] == b"<0x":
                b = scan_hex_byte(token, 3)
                if b is not None:
                    token = bytes([b])
            out.append(token)
        return out


class Metaspace:
    @classmethod
    def from_tree(cls, n) -> "Metaspace":
        return cls(utf8(n.replacement), n.add_prefix_space)

    def __init__(self, replacement: bytes, add_prefix_space: bool):
        self.replacement, self.add_prefix_space = replacement, add_prefix_space

    def decode_chain(self, tokens: list[bytes]) -> list[bytes]:
        if not self.replacement:
            if any(tokens):
                raise UndefinedInMnn("decoder: a Metaspace decoder with an empty replacement never ends in MNN")
            return tokens  # only empty tokens: MNN's loop never runs (Python's replace would insert)
        tokens = [token.replace(self.replacement, b" ") for token in tokens]
        if self.add_prefix_space and tokens and tokens[0][:1] == b" ":
            tokens[0] = tokens[0][1:]
        return tokens


class WordPiece:
    @classmethod
    def from_tree(cls, n) -> "WordPiece":
        return cls(utf8(n.prefix))

    def __init__(self, prefix: bytes):
        self.prefix = prefix

    def decode_chain(self, tokens: list[bytes]) -> list[bytes]:
        parts = []
        for i, token in enumerate(tokens):
            if token.startswith(self.prefix):
                parts.append(token[len(self.prefix):])
            elif i > 0:
                parts.append(b" " + token)
            else:
                parts.append(token)
        return [b"".join(parts)]


class Fuse:
    @classmethod
    def from_tree(cls, n) -> "Fuse":
        return cls()

    def decode_chain(self, tokens: list[bytes]) -> list[bytes]:
        return [b"".join(tokens)] if len(tokens) > 1 else tokens


class Replace:
    @classmethod
    def from_tree(cls, n) -> "Replace":
        return cls(utf8(n.pattern), utf8(n.content))

    def __init__(self, pattern: bytes, content: bytes):
        self.pattern, self.content = pattern, content

    def decode_chain(self, tokens: list[bytes]) -> list[bytes]:
        if not self.pattern:
            if tokens:
                raise UndefinedInMnn("decoder: a Replace decoder with an empty pattern never ends in MNN "
                                     "(the exporter writes a Regex pattern as empty)")
            return tokens
        if len(self.content) > len(self.pattern):
            current(sum(map(len, tokens))).size(
                "decoder Replace", sum(grown(token, self.pattern, self.content) for token in tokens))
        return [token.replace(self.pattern, self.content) for token in tokens]


class Strip:
    """Takes ``content`` once off the front (``start`` > 0) and once off the end (``stop`` > 0),
    whatever the counts say."""

    @classmethod
    def from_tree(cls, n) -> "Strip":
        return cls(utf8(n.content), n.start, n.stop)

    def __init__(self, content: bytes, start: int, stop: int):
        self.content = content
        self.start, self.stop = i32(start), i32(stop)

    def decode_chain(self, tokens: list[bytes]) -> list[bytes]:
        if not tokens:
            return tokens
        tokens = list(tokens)
        c = self.content
        if self.start > 0 and tokens[0] and tokens[0].startswith(c):
            tokens[0] = tokens[0][len(c):]
        if self.stop > 0 and tokens[-1]:
            pos = tokens[-1].rfind(c)
            if pos != -1 and pos + len(c) == len(tokens[-1]):
                tokens[-1] = tokens[-1][:pos]
        return tokens


class Sequence:
    @classmethod
    def from_tree(cls, n) -> "Sequence":
        return cls([from_tree(c) for c in n.decoders])

    def __init__(self, children):
        self.children = children

    def decode_chain(self, tokens: list[bytes]) -> list[bytes]:
        return run_chain(self.children, tokens, "decode_chain", "decoder Sequence", pieces_size)


# tree class -> the decoder MNN's loader builds for it
REGISTRY: dict[type, type | None] = stage_registry(
    "Decoder", ByteLevel, ByteFallback, Metaspace, WordPiece, Fuse, Replace, Strip, Sequence)



def from_tree(node):
    """The decoder MNN's loader builds for a tree node."""
    return build_from_registry(REGISTRY, node, "decoder")

