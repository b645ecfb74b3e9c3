"""The ``mnn-next`` semantics: MNN's C++ runtime with the format-next patch (``patches/mnn/``).

    tok = mtokspec.Tokenizer.from_file("tokenizer.mtok", semantics="mnn-next")

The patched loader reads the ``extension`` section (``spec/mtok.py``); everything else is the ``mnn``
semantics.  Fields: ``DecodeCleanupField`` (whether ``decode(ids)`` of a WordPiece decoder removes
the space before ``. ? ! ,``) and ``StreamDecodeField`` (the engine's per-id decode prints what HF's
``DecodeStream`` prints), ``BPESuffixField`` (HF BPE's ``end_of_word_suffix``), ``BPEDecoderField``
(HF's ``BPEDecoder``), ``BPEUnknownField`` (HF BPE's ``unk_token`` and ``fuse_unk``),
``UnigramTiesField`` (HF's Viterbi on equal scores).  Design: ``docs/design/format-next.md``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mtokspec.format import tree as t
from mtokspec.format.extension import field_of
from mtokspec.runtime.mnn._text import utf8
from mtokspec.runtime.mnn.models import BPE, Unigram
from mtokspec.runtime.mnn.pipeline import PipelineTokenizer
from mtokspec.names import EXTENDED
from mtokspec.runtime.mnn.tokenizer import MnnDecodeStream, MnnTokenizer, engine_fix
from mtokspec.runtime.mnn.versions import version_of
from mtokspec.args import token_ids
from mtokspec.errors import TokenizerError

__all__ = ["NextPipelineTokenizer", "EngineStream", "next_tokenizer", "device_tokenizer"]


def device_tokenizer(tree: t.TokenizerFile, semantics: str, **options: Any) -> MnnTokenizer:
    """The tokenizer device runtime ``semantics`` (one of ``mtokspec.names.DEVICES``) builds: the
    patched MNN for ``mnn-next``, else MNN at HEAD (``mnn``) or at a release (``mnn@VERSION``)."""
    if semantics == EXTENDED:
        return next_tokenizer(tree, **options)
    version = version_of(semantics)
    if version is None:
        raise TokenizerError(f"semantics: {semantics!r} is no device runtime")
    return MnnTokenizer.from_tree(tree, version=version, **options)


def next_tokenizer(tree: t.TokenizerFile, **options: Any) -> MnnTokenizer:
    """The tokenizer the patched MNN builds: a ``.mtok`` reads its extension, a legacy file runs as
    released MNN runs it (the patch does not touch the legacy tokenizers)."""
    if isinstance(tree, t.MtokFile):
        return NextPipelineTokenizer(tree, **options)
    return MnnTokenizer.from_tree(tree, **options)


def _ends_incomplete(b: bytes) -> bool:
    """The patch's ``ends_incomplete_utf8``: ``b`` ends inside a UTF-8 character, with an invalid
    one, or with U+FFFD (where HF's decode ends in U+FFFD)."""
    n = k = len(b)
    while k > 0 and n - k < 4 and b[k - 1] & 0xC0 == 0x80:
        k -= 1
    if k == 0:
        return n > 0
    lead = b[k - 1]
    size = 1 if lead < 0x80 else 2 if lead >> 5 == 0x6 else 3 if lead >> 4 == 0xE else 4 if lead >> 3 == 0x1E else 0
    return size != n - k + 1 or b.endswith(b"\xef\xbf\xbd")


class EngineStream:
    """The patched ``decode(id)`` with ``StreamDecodeField``: HF's ``DecodeStream.step`` over MNN's
    ``decode(ids)``; ``step(id)`` returns the bytes it prints (b"" while held)."""

    __slots__ = ("tok", "ids", "prefix", "prefix_index")

    def __init__(self, tok: PipelineTokenizer):
        self.tok = tok
        self.ids: list[int] = []
        self.prefix = b""
        self.prefix_index = 0

    def step(self, token_id: int) -> bytes:
        self.ids.append(token_id)
        text = self.tok._decode_seq(self.ids)
        if len(text) <= len(self.prefix) or _ends_incomplete(text) or not text.startswith(self.prefix):
            return b""
        out = text[len(self.prefix):]
        new_index = len(self.ids) - self.prefix_index
        self.ids = self.ids[self.prefix_index:]
        self.prefix = self.tok._decode_seq(self.ids)
        self.prefix_index = new_index
        return out


class _BPEDecoder:
    """The patch's ``BPEDecoderField``: HF's ``BPEDecoder`` in place of the decoder chain."""

    __slots__ = ("suffix",)

    def __init__(self, suffix: bytes):
        self.suffix = suffix

    def decode_chain(self, tokens: list[bytes]) -> list[bytes]:
        last = len(tokens) - 1
        return [tok.replace(self.suffix, b"" if k == last else b" ") for k, tok in enumerate(tokens)]


class NextPipelineTokenizer(PipelineTokenizer):
    """A ``.mtok`` file run by the patched MNN (``semantics="mnn-next"``)."""

    semantics = EXTENDED
    tree_type: ClassVar[type | None] = None  # (the mnn pipeline stays the class MnnTokenizer picks)

    def __init__(self, mtok: t.MtokFile, **kw: Any):
        super().__init__(mtok, **kw)
        cleanup = field_of(mtok, t.DecodeCleanupField)
        if cleanup is not None:
            self.wordpiece_cleanup = bool(cleanup.cleanup)  # type: ignore[union-attr]
        self.stream_decode = field_of(mtok, t.StreamDecodeField) is not None
        decoder = field_of(mtok, t.BPEDecoderField)
        if decoder is not None and decoder.suffix:  # type: ignore[union-attr]
            self.decoder = _BPEDecoder(utf8(decoder.suffix))  # type: ignore[union-attr]
        if field_of(mtok, t.UnigramTiesField) is not None and isinstance(mtok.model, t.UnigramModel):
            self.model = Unigram(mtok.model, hf_ties=True)
        suffix = field_of(mtok, t.BPESuffixField)
        unknown = field_of(mtok, t.BPEUnknownField)
        if (suffix is not None or unknown is not None) and isinstance(mtok.model, t.BPEModel):
            unk_id = unknown.unk_id if unknown is not None else -1  # type: ignore[union-attr]
            self.model = BPE(mtok.model, utf8(suffix.end_of_word_suffix) if suffix is not None else b"",  # type: ignore[union-attr]
                             unk_id if 0 <= unk_id < len(mtok.model.vocab) else -1,
                             bool(unknown is not None and unknown.fuse))  # type: ignore[union-attr]

    @classmethod
    def from_tree(cls, tree: t.TokenizerFile, **options: Any) -> MnnTokenizer:
        return next_tokenizer(tree, **options)

    def decode_bytes(self, ids, skip_special_tokens: bool = True, stream: bool = False) -> bytes:
        """As the ``mnn`` semantics; ``stream=True`` with ``StreamDecodeField``: the patched engine's
        per-id decode from a fresh stream (the patch starts one at each encode), joined."""
        if not (stream and self.stream_decode):
            return super().decode_bytes(ids, skip_special_tokens, stream)
        s = EngineStream(self)
        return b"".join(engine_fix(s.step(i)) for i in token_ids("ids", ids))

    def decode_stream(self, skip_special_tokens: bool = False) -> Any:
        """What the patched engine prints as ids arrive, in whole characters."""
        if not self.stream_decode:
            return super().decode_stream(skip_special_tokens)
        return _NextDecodeStream(EngineStream(self))


class _NextDecodeStream(MnnDecodeStream):
    """Complete characters of the patched engine's per-id decode, as ids arrive."""

    __slots__ = ("engine",)

    def __init__(self, engine: EngineStream):
        super().__init__(engine.tok)
        self.engine = engine

    def step(self, token_id: int) -> str | None:
        return self._decoder.decode(engine_fix(self.engine.step(token_ids("token_id", [token_id])[0]))) or None
