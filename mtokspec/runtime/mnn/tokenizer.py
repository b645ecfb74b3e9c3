"""What MNN's C++ ``Tokenizer`` does around its model: header ids, special-token split,
post-processor, and the two decodes (``tokenizer.cpp`` at the commit in ``MNN_COMMIT``).

- ``encode(text)`` is MNN's default ``Tokenizer::encode``: the header's prefix ids, then the text
  cut at every special id's decoded text (each special id's *streaming* decode, tried in header
  order at each byte, the first that matches wins), each piece encoded, then the post-processor
  program applied to the whole list, prefix ids included -- which gives Llama-style files BOS twice.
- ``encode(text, add_special_tokens=False)`` is ``encode(text, false)`` without the prefix ids.
- ``decode`` / ``decode_bytes`` is ``Tokenizer::decode(vector)``; ``decode_bytes(ids, stream=True)``
  is what the LLM engine prints: each id's ``decode(id)`` with the engine's ``<0xHH>`` fix, joined.
"""

from __future__ import annotations

import codecs
import os
import re
from typing import TYPE_CHECKING, Any, ClassVar

from mtokspec.format import tree as t
from mtokspec.errors import ArgumentTypeError, TokenizerError, UndefinedInMnn
from mtokspec.format import parse
from mtokspec.format.files import build_node, tree_of
from mtokspec.args import keyword_options, path as path_arg, texts, token_id, token_ids, token_text
from mtokspec.runtime.shared.bounds import (MAX_EXPANSION, budget_size, checked_max_expansion, enter_budget,
                                             exit_budget)
from mtokspec.runtime.shared.pickling import reduce_tokenizer
from mtokspec.runtime.mnn._compiled import stages
from mtokspec.runtime.mnn._text import i32
from mtokspec.runtime.mnn.versions import HEAD, VERSIONS, MnnVersion


if TYPE_CHECKING:
    from mtokspec.runtime.shared.stream import PrefixStream

__all__ = ["MnnTokenizer", "MnnDecodeStream", "MNN_COMMIT"]

MNN_COMMIT = t.MNN_COMMIT
"""The MNN commit this semantics models: the one ``spec/`` reads the layout from."""
_HEX = frozenset(b"0123456789abcdefABCDEF")
_COUNT_BYTES = len(build_node(t.PostProcessorProgram(ops=[])))  # the section's op count


def to_bytes(text: str | bytes) -> bytes:
    """The bytes MNN would be handed for ``text`` (``str`` as UTF-8; lone surrogates from a
    ``surrogateescape`` decoding back to their bytes)."""
    if type(text) is not str:
        if type(text) is bytes:
            return text
        if isinstance(text, (bytes, bytearray, memoryview)):
            return bytes(text)
        if not isinstance(text, str):
            raise ArgumentTypeError(f"text: encode expects str or bytes, got {type(text).__name__}")
    try:
        return text.encode()  # UTF-8
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return text.encode("utf-8", "surrogatepass")


def checked_version(version: MnnVersion | str) -> MnnVersion:
    """The :class:`MnnVersion` of ``version`` (one, or a tag of :data:`VERSIONS`, or ``"HEAD"``)."""
    if isinstance(version, MnnVersion):
        return version
    if not isinstance(version, str):
        raise ArgumentTypeError(f"version: expected an MNN version tag, got {type(version).__name__}")
    if version == HEAD.name:
        return HEAD
    if version not in VERSIONS:
        raise TokenizerError(f"version: MNN {version!r} is not a version the mnn semantics knows "
                             f"(HEAD, {', '.join(VERSIONS)})")
    return VERSIONS[version]


def post_program_ops(pp) -> list[int | None]:
    """The post-processor program as MNN's loader reads it: ``None`` = sequence A, an int = an id.

    MNN takes the section as the older ids-only layout whenever the bytes after its count number
    exactly ``count * 4`` -- which a current program can too (whisper's does): then the ops' bytes
    are read as u32 ids after sequence A.
    """
    if pp is None:
        return []
    if isinstance(pp, t.LegacyPostProcessor):
        return [None, *map(i32, pp.ids)]
    if not isinstance(pp, t.PostProcessorProgram):
        raise TokenizerError(f"unknown post-processor node {type(pp).__name__}")
    body = _program_body(pp)
    n = len(pp.ops)
    if len(body) == 4 * n:
        return [None, *(i32(int.from_bytes(body[k:k + 4], "little")) for k in range(0, len(body), 4))]
    return [None if isinstance(op, t.SequenceOp) else i32(op.token_id) for op in pp.ops]


def written_ops(pp) -> list[int | None]:
    """The post-processor program as the file writes it (``None`` = sequence A), for comparison
    with :func:`post_program_ops`: they differ exactly when MNN misreads the section."""
    if isinstance(pp, t.PostProcessorProgram):
        return [None if isinstance(op, t.SequenceOp) else i32(op.token_id) for op in pp.ops]
    return post_program_ops(pp)


def _program_body(pp: t.PostProcessorProgram) -> bytes:
    """The bytes of the program's ops as the codec writes them: the section minus its count."""
    return build_node(pp)[_COUNT_BYTES:]


def engine_fix(word: bytes) -> bytes:
    """``Llm::tokenizer_decode``: a decoded piece spelled ``<0xHH>`` (6 bytes) becomes that byte
    (``std::stoi`` of the two characters in base 16)."""
    if len(word) == 6 and word[0] == 60 and word[5] == 62 and word[1] == 48 and word[2] == 120:
        digits = word[3:5]
        text = digits.lstrip(b" \t\n\v\f\r")
        sign = 1
        if text[:1] in (b"+", b"-"):
            sign = -1 if text[:1] == b"-" else 1
            text = text[1:]
        k = 0
        while k < len(text) and text[k] in _HEX:
            k += 1
        if k == 0:
            raise UndefinedInMnn(f"the engine's std::stoi throws on {word!r} (no hex digit): MNN stops")
        return bytes([(sign * int(text[:k], 16)) & 0xFF])
    return word


def strncmp_equal(text: bytes, at: int, token: bytes) -> bool:
    """``strncmp(text + at, token, len(token)) == 0``: equal up to the length, or up to a NUL byte
    both share."""
    n = len(token)
    if at + n <= len(text):
        k = token.find(b"\0")
        if k == -1:
            return text[at:at + n] == token
        return text[at:at + k + 1] == token[:k + 1]
    for k in range(n):
        a = text[at + k] if at + k < len(text) else 0
        b = token[k]
        if a != b:
            return False
        if a == 0:
            return True
    return True


class MnnTokenizer:
    """A tokenizer file run the way MNN's C++ runtime runs it (``semantics="mnn"``).

    Subclasses supply the model step (``_encode_piece``) and the per-id decode (``_decode_one``),
    as MNN's subclasses do: :class:`~mtokspec.runtime.mnn.pipeline.PipelineTokenizer` for
    ``.mtok`` and the four legacy types in :mod:`mtokspec.runtime.mnn.legacy`.
    """

    semantics = "mnn"

    def __init__(self, tree: t.TokenizerFile, *, max_expansion: int = MAX_EXPANSION,
                 version: MnnVersion | str = HEAD):
        self.max_expansion = checked_max_expansion(max_expansion)
        self.version = checked_version(version)
        if self.version is not HEAD:  # a release's name (a subclass keeps its own, mnn-next's)
            self.semantics = self.version.semantics
        self.tree = tree
        # MNN reads the ids as int32
        self.special_ids, self.stop_ids, self.prefix_ids = ([i32(i) for i in ids] for ids in t.header_roles(tree.header))
        self._special_set = frozenset(self.special_ids)
        self._stop_set = frozenset(self.stop_ids)
        self._post: list[int | None] = []
        self.chat_template: str | None = None
        self.bos_token: str | None = None
        self.eos_token: str | None = None
        self._special_cache: list[tuple[bytes, int]] | None = None
        self._special_first_search: Any = None  # finds a first byte of the cached texts
        self._special_firsts = b""  # 256 bytes, non-zero at a first byte of the cached texts
        sp = stages()  # the compiled split (mnn_stages.c), or None: the loop of split_specials
        self._split_compiled = None if sp is None else sp.mnn_split_specials
        self._vocab: dict[str, int] | None = None

    def __reduce__(self):
        options: dict[str, Any] = {"max_expansion": self.max_expansion}
        if self.version is not HEAD:
            options["version"] = self.version.name
        return reduce_tokenizer(self, options)

    # --- construction ----------------------------------------------------------------------------
    tree_type: ClassVar[type | None] = None
    """The tree class a subclass runs (``MtokFile`` or one legacy type); it registers under it."""
    _by_tree: ClassVar[dict[type, type["MnnTokenizer"]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.tree_type is not None:
            MnnTokenizer._by_tree[cls.tree_type] = cls

    @classmethod
    def from_tree(cls, tree: t.TokenizerFile, **options: Any) -> "MnnTokenizer":
        """The tokenizer MNN builds for this tree (its class is chosen by the file type, as MNN's
        loader chooses it)."""
        takes = keyword_options(MnnTokenizer.__init__)
        bad = set(options) - set(takes)
        if bad:
            raise TokenizerError(f"semantics='mnn' takes no options but {', '.join(takes)}, got {sorted(bad)}")
        kind = MnnTokenizer._by_tree.get(type(tree))
        if kind is None:
            raise ArgumentTypeError(f"tree: expected a tokenizer file tree, got {type(tree).__name__}")
        return kind(tree, **options)

    @classmethod
    def from_bytes(cls, data: bytes, **options: Any) -> "MnnTokenizer":
        return cls.from_tree(parse(data), **options)

    @classmethod
    def from_file(cls, path: str | os.PathLike, **options: Any) -> "MnnTokenizer":
        return cls.from_tree(tree_of(path_arg("path", path)), **options)

    # --- what subclasses supply -----------------------------------------------------------------
    def _encode_piece(self, text: bytes, ids: list[int]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _decode_one(self, i: int) -> bytes:  # pragma: no cover - abstract
        raise NotImplementedError

    def _decode_seq(self, ids: list[int]) -> bytes:
        return b"".join(self._decode_one(i) for i in ids)

    # --- encoding -------------------------------------------------------------------------------
    def _specials(self) -> list[tuple[bytes, int]]:
        if self._special_cache is None:
            cache = []
            for i in self.special_ids:
                s = self._decode_one(i)
                if s:
                    cache.append((s, i))
            # the first bytes before the cache: a thread that sees the cache sees its first bytes
            firsts = sorted({text[0] for text, _ in cache})
            self._special_first_search = re.compile(b"[" + b"".join(re.escape(bytes([c])) for c in firsts) + b"]"
                                                    if firsts else b"(?!)").search
            self._special_firsts = bytes(c in firsts for c in range(256))
            self._special_cache = cache
        return self._special_cache

    def split_specials(self, b: bytes) -> list[tuple[bytes, int | None]]:
        """``b`` cut at the special ids' decoded texts: ``(piece, None)`` and ``(text, id)``."""
        specials = self._specials()
        if self._split_compiled is not None:
            return self._split_compiled(b, specials, self._special_firsts)
        if not specials:  # the whole text goes to the model, even when empty (type 0 encodes "▁")
            return [(b, None)]
        out: list[tuple[bytes, int | None]] = []
        start = 0
        i, n = 0, len(b)
        find_first = self._special_first_search
        while i < n:
            m = find_first(b, i)  # the next byte that starts a special text (others are stepped over)
            if m is None:
                break
            i = m.start()
            for s, sid in specials:
                if i + len(s) <= n and strncmp_equal(b, i, s):
                    if i > start:
                        out.append((b[start:i], None))
                    out.append((s, sid))
                    start = i + len(s)
                    i = start - 1
                    break
            i += 1
        if start < n:
            out.append((b[start:], None))
        return out

    def encode(self, text: str | bytes, add_special_tokens: bool = True) -> list[int]:
        """MNN's ``encode(text)``; ``add_special_tokens=False``: ``encode(text, false)`` without
        the prefix ids."""
        data = to_bytes(text)
        token = enter_budget(len(data), self.max_expansion)  # with budget(...), spelled out: once per call
        try:
            ids: list[int] = list(self.prefix_ids) if add_special_tokens else []
            for piece, sid in self.split_specials(data):
                if sid is None:
                    self._encode_piece(piece, ids)
                else:
                    ids.append(sid)
            if add_special_tokens:
                ids = self.add_special(ids)
            return ids
        finally:
            exit_budget(token)

    def add_special(self, ids: list[int]) -> list[int]:
        """MNN's ``apply_post_processor``: the program's ops in turn (negative ids skipped)."""
        ops = self._post
        if not ops:
            return list(ids)
        budget_size("post-processor", len(ids) * ops.count(None) + len(ops), len(ids))
        out: list[int] = []
        for op in ops:
            if op is None:
                out.extend(ids)
            elif op >= 0:
                out.append(op)
        return out

    def encode_batch(self, batch, add_special_tokens: bool = True) -> list[list[int]]:
        return [self.encode(text, add_special_tokens) for text in texts("texts", batch)]

    # --- decoding -------------------------------------------------------------------------------
    def decode_bytes(self, ids, skip_special_tokens: bool = True, stream: bool = False) -> bytes:
        """The exact bytes MNN gives: ``Tokenizer::decode(ids)``, or with ``stream=True`` the
        engine's per-id decode (``<0xHH>`` fix included), joined.  ``skip_special_tokens`` is
        accepted for the common signature only: MNN has no such switch (see :meth:`decode`)."""
        ids = token_ids("ids", ids)
        if stream:
            return b"".join(engine_fix(self._decode_one(i)) for i in ids)
        return self._decode_seq(ids)

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        """MNN's ``Tokenizer::decode(ids)`` as text (bytes that are not UTF-8 become U+FFFD).

        MNN has no switch for special tokens: a ``.mtok`` always skips the header's special ids, a
        legacy file never does; ``skip_special_tokens`` is accepted for the HF signature only."""
        return self.decode_bytes(ids).decode("utf-8", "replace")

    def decode_batch(self, batch, skip_special_tokens: bool = True) -> list[str]:
        return [self.decode(ids) for ids in texts("batch", batch)]

    def decode_stream(self, skip_special_tokens: bool = False) -> "MnnDecodeStream":
        """What the LLM engine prints as ids arrive, in whole characters: ``step(id)`` returns the
        new complete characters, or None while a character is incomplete."""
        return MnnDecodeStream(self)

    def stream(self, skip_special_tokens: bool = True) -> "PrefixStream":
        """What ``decode`` (MNN's ``Tokenizer::decode(ids)``) of the ids so far adds, as ids arrive:
        ``step(id)`` returns the new text ("" while a later id can still change it), ``flush()``
        the rest (:mod:`mtokspec.runtime.mnn.stream`; ``skip_special_tokens`` as in :meth:`decode`)."""
        from mtokspec.runtime.mnn.stream import stream

        return stream(self)

    def tail_hold(self) -> int | None:
        """How many trailing bytes of the decode a later id can still change (None: all of them);
        the legacy types join their per-id decodes: none."""
        return 0

    # --- vocabulary and header --------------------------------------------------------------------
    def is_special(self, i: int) -> bool:
        return token_id("i", i) in self._special_set

    def is_stop(self, i: int) -> bool:
        return token_id("i", i) in self._stop_set

    def id_to_token(self, i: int) -> str | None:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def vocab_size(self) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def get_vocab(self) -> dict[str, int]:
        """Token text -> id over the model's table (the first id of a repeated token), as text
        (bytes that are not UTF-8 as U+FFFD)."""
        vocab: dict[str, int] = {}
        for i in range(self.vocab_size):
            token = self.id_to_token(i)
            if token is not None:
                vocab.setdefault(token, i)
        return vocab

    def token_to_id(self, token: str) -> int | None:
        token_text("token", token)
        if self._vocab is None:
            self._vocab = self.get_vocab()
        return self._vocab.get(token)

    # --- chat template ----------------------------------------------------------------------------
    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True, tools=None,
                            template: str | None = None, *, context: dict | None = None, **kwargs) -> str:
        """The prompt MNN's ``Tokenizer::apply_chat_template`` renders, with MNN's own Jinja engine
        (:func:`mtokspec.chat.mnn.render_file_mnn`: the file's template and BOS/EOS strings unless
        given; ``tools`` and other variables reach the template as MNN's ``jinja.context``)."""
        from mtokspec.chat.mnn import render_file_mnn

        return render_file_mnn(self, messages, template=template, add_generation_prompt=add_generation_prompt,
                               tools=tools, context=context, missing_filters=self.version.missing_filters, **kwargs)


class MnnDecodeStream:
    """Complete characters of the engine's per-id decode, as ids arrive."""

    __slots__ = ("tokenizer", "_decoder")

    def __init__(self, tokenizer: MnnTokenizer):
        self.tokenizer = tokenizer
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def step(self, token_id: int) -> str | None:
        piece = self.tokenizer.decode_bytes(token_ids("token_id", [token_id]), stream=True)
        text = self._decoder.decode(piece)
        return text or None

    def flush(self) -> str:
        """What is left (an incomplete character at the end becomes U+FFFD)."""
        return self._decoder.decode(b"", final=True)
