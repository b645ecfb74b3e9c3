"""The runtime tokenizer: added tokens -> normalizer -> pre-tokenizer -> model -> post-processor.

Design record: ``docs/design/runtime-hf.md``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, cast

from mtokspec.format import tree as t
from mtokspec.errors import ArgumentTypeError, TokenizerError
from mtokspec.format import parse
from mtokspec.format.files import tree_of
from mtokspec.runtime.hf import decoders, models, normalizers, pre_tokenizers
from mtokspec.runtime.hf.added_tokens import AddedVocabulary
from mtokspec.runtime.hf.models._compiled import extend_pieces
from mtokspec.runtime.hf.models.bpe import BPE
from mtokspec.runtime.shared.gc import paused_gc
from mtokspec.args import texts as _texts, token_id, token_ids, token_text
from mtokspec.args import path as path_arg, token_id as _token_id
from mtokspec.runtime.shared.bounds import MAX_EXPANSION, budget, budget_size, checked_max_expansion
from mtokspec.runtime.shared.pickling import reduce_tokenizer

if TYPE_CHECKING:
    from mtokspec.runtime.hf.stream import HoldTable, TableStream
    from mtokspec.runtime.shared.stream import PrefixStream

__all__ = ["HfTokenizer", "HfDecodeStream"]


class HfTokenizer:
    """A tokenizer built from an :class:`mtokspec.format.tree.MtokFile`, with HF semantics.

    ``max_expansion`` bounds how far any stage of a call may grow its text (see
    :mod:`mtokspec.runtime.shared.bounds`)."""

    semantics = "hf"

    _plan: str  # "bytelevel", "text", "bpe" (BPE after another pre-tokenizer) or "pieces"
    _vocab_size: int | None

    def __init__(self, mtok: t.MtokFile, *, serde_scores: bool = True, max_expansion: int = MAX_EXPANSION):
        if not isinstance(mtok, t.MtokFile):
            raise ArgumentTypeError(f"mtok: expected an MtokFile tree, got {type(mtok).__name__}")
        self.max_expansion = checked_max_expansion(max_expansion)
        self._serde_scores = serde_scores
        with paused_gc():
            self._build(mtok, serde_scores)

    def _build(self, mtok: t.MtokFile, serde_scores: bool) -> None:
        self.tree = mtok
        self.normalizer = normalizers.from_tree(mtok.normalizer)
        self.pre_tokenizer = pre_tokenizers.from_tree(mtok.pre_tokenizer)
        if isinstance(mtok.model, t.UnigramModel):
            self.model = models.Unigram.from_tree(mtok.model, serde_scores=serde_scores)
        else:
            self.model = models.from_tree(mtok.model)
        self.decoder = decoders.from_tree(mtok.decoder)
        self.added = AddedVocabulary(mtok.added_tokens)

        self.special_ids, self.stop_ids, self.prefix_ids = t.header_roles(mtok.header)
        self._special_set = frozenset(self.special_ids) | frozenset(self.added.special_ids)
        self._stop_set = frozenset(self.stop_ids)
        self.clean_up_tokenization_spaces = bool((mtok.flags or 0) & t.MtokFlags.clean_up_tokenization_spaces)
        self.bos_token = mtok.bos_token
        self.eos_token = mtok.eos_token
        self.chat_template = mtok.chat_template
        self._post = self._post_program(mtok.post_processor)
        # HF applies a TemplateProcessing even without special tokens, skipping only the ids: the
        # sequence appears once per sequence op (0 or 2+ only in hand-made programs)
        self._seq_repeat = self._post.count(None) if self._post else 1
        self._vocab_size = None
        self._hold: "HoldTable | TokenizerError | None" = None

        # encode plan
        pt = self.pre_tokenizer
        self._normalize = None if self.normalizer.is_identity else self.normalizer.normalize
        model = self.model
        if isinstance(model, BPE):
            has_bl = pre_tokenizers.contains(pt, pre_tokenizers.ByteLevel)
            if has_bl:
                model.map_bytes = False
            if type(pt) is pre_tokenizers.ByteLevel:
                # fused fast path: GPT-2 split, BPE caches by the raw piece and maps on a miss
                model.map_bytes = True
                self._plan = "bytelevel"
            elif type(pt) is pre_tokenizers.NoPreTokenizer:
                self._plan = "text"
            else:
                self._plan = "bpe"
        else:
            self._plan = "pieces"

    def __reduce__(self):
        return reduce_tokenizer(self, {"serde_scores": self._serde_scores, "max_expansion": self.max_expansion})

    # --- construction ---------------------------------------------------------------------------
    @classmethod
    def from_tree(cls, tree: t.TokenizerFile, **options: Any) -> "HfTokenizer":
        """A tokenizer for a ``.mtok`` tree (options: ``serde_scores``).  A legacy ``tokenizer.txt``
        tree runs with HF semantics once upgraded: :func:`mtokspec.load` does that."""
        if not isinstance(tree, t.MtokFile):
            raise TokenizerError(f"expected an MtokFile tree, got {type(tree).__name__} "
                                 "(mtokspec.load upgrades legacy tokenizer.txt trees)")
        return cls(tree, **options)

    @classmethod
    def from_bytes(cls, data: bytes, **options: Any) -> "HfTokenizer":
        """A tokenizer for the bytes of a ``.mtok`` file."""
        with paused_gc():
            return cls.from_tree(parse(data), **options)

    @classmethod
    def from_file(cls, path: str | os.PathLike, **options: Any) -> "HfTokenizer":
        """A tokenizer for a ``.mtok`` file."""
        return cls.from_tree(tree_of(path_arg("path", path)), **options)

    # --- chat template ----------------------------------------------------------------------------
    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True, tools=None,
                            template: str | None = None, **kwargs) -> str:
        """The prompt for ``messages``, rendered as ``transformers`` renders chat templates.

        Uses the file's chat template unless ``template`` is given; ``bos_token``/``eos_token`` come
        from the file (an empty string counts as absent, as the exporter writes absent ones) unless
        passed; other keyword arguments become template variables.  Rendering is sandboxed and
        bounded: see :func:`mtokspec.chat.render.render_chat_template`.
        """
        from mtokspec.chat.render import render_file_template

        return render_file_template(self, messages, template=template, add_generation_prompt=add_generation_prompt,
                                    tools=tools, **kwargs)

    @staticmethod
    def _post_program(pp):
        """The post-processor as a list of ops (None = the sequence, int = an id); None when the
        section is absent (then the prefix ids apply)."""
        if pp is None:
            return None
        if isinstance(pp, t.PostProcessorProgram):
            # an id that is negative as MNN's int32 inserts nothing there (a padding op that keeps
            # MNN from misreading the layout): nothing here either
            return [None if isinstance(op, t.SequenceOp) else op.token_id for op in pp.ops
                    if isinstance(op, t.SequenceOp) or op.token_id < 2**31]
        if isinstance(pp, t.LegacyPostProcessor):
            return [None] + list(pp.ids)
        raise TokenizerError(f"unknown post-processor node {type(pp).__name__}")

    # --- encoding -------------------------------------------------------------------------------
    def _encode_segment(self, seg: str, out: list[int]) -> None:
        plan = self._plan
        model = self.model
        if plan == "bytelevel":
            # the "bytelevel" plan is chosen only for BPE under a ByteLevel pre-tokenizer
            cast(BPE, model).tokenize_pieces(cast(pre_tokenizers.ByteLevel, self.pre_tokenizer).split_raw(seg), out)
        elif plan == "text":
            cast(BPE, model).tokenize_text(seg, out)  # the "text" plan is chosen only for BPE
        elif plan == "bpe":
            cast(BPE, model).tokenize_pieces(self.pre_tokenizer.split(seg), out)
        else:  # every model caches by piece; tokenize() fills the cache
            extend_pieces(self.pre_tokenizer.split(seg), model._cache, model.tokenize, out)

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        """The ids of ``text`` (HF ``Tokenizer.encode(text, add_special_tokens=...).ids``)."""
        if not isinstance(text, str):
            raise ArgumentTypeError(f"text: encode expects str, got {type(text).__name__}"
                                    + (" (decode the bytes first, or use semantics='mnn', which runs on bytes)"
                                       if isinstance(text, (bytes, bytearray)) else ""))
        with budget(len(text), self.max_expansion):
            return self._encode(text, add_special_tokens)

    def _encode(self, text: str, add_special_tokens: bool) -> list[int]:
        ids: list[int] = []
        normalize = self._normalize
        if self.added:
            for seg, tid in self.added.split(text):
                if tid is not None:
                    ids.append(tid)
                    continue
                if normalize is not None:
                    seg = normalize(seg)
                if seg:
                    self._encode_segment(seg, ids)
        elif text:
            if normalize is not None:
                text = normalize(text)
            if text:
                self._encode_segment(text, ids)
        if add_special_tokens:
            ids = self.add_special(ids)
        elif self._seq_repeat != 1:
            budget_size("post-processor", len(ids) * self._seq_repeat, len(text))
            ids = ids * self._seq_repeat
        return ids

    def add_special(self, ids: list[int]) -> list[int]:
        """``ids`` with the post-processor program (or, without one, the prefix ids) applied."""
        ops = self._post
        if ops is not None:
            if not ops:  # an empty program: HF has no post-processor
                return list(ids)
            budget_size("post-processor", len(ids) * self._seq_repeat + len(ops), len(ids))
            out: list[int] = []
            for op in ops:
                if op is None:
                    out.extend(ids)
                else:
                    out.append(op)
            return out
        if self.prefix_ids:
            return self.prefix_ids + ids
        return list(ids)

    def encode_batch(self, texts, add_special_tokens: bool = False) -> list[list[int]]:
        return [self.encode(t, add_special_tokens) for t in _texts("texts", texts)]

    # --- decoding -------------------------------------------------------------------------------
    def _tokens(self, ids, skip_special_tokens: bool) -> list[str]:
        by_id = self.added.by_id
        id_to_token = self.model.id_to_token
        special_contents = self.added.special_contents
        special_ids = self._special_set
        out = []
        for i in token_ids("ids", ids):
            t = by_id.get(i)
            if t is None:
                t = id_to_token(i)
                if t is None:
                    continue
            if skip_special_tokens and (t in special_contents or i in special_ids):
                continue
            out.append(t)
        return out

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        """The text of ``ids`` (HF ``Tokenizer.decode``)."""
        tokens = self._tokens(ids, skip_special_tokens)
        with budget(sum(map(len, tokens)), self.max_expansion):
            return self.decoder.decode(tokens)

    def decode_bytes(self, ids, skip_special_tokens: bool = False, stream: bool = False) -> bytes:
        """``decode(ids).encode()``: the UTF-8 of the decoded text (``stream`` gives the same: HF's
        streaming decode joins to the sequence decode)."""
        return self.decode(ids, skip_special_tokens).encode("utf-8", "surrogatepass")

    def decode_batch(self, batch, skip_special_tokens: bool = False) -> list[str]:
        return [self.decode(ids, skip_special_tokens) for ids in _texts("batch", batch)]

    def decode_stream(self, skip_special_tokens: bool = False) -> "HfDecodeStream":
        """Incremental decoding: ``step(id)`` returns new text, or None while a character is
        incomplete (HF ``DecodeStream``)."""
        return HfDecodeStream(self, skip_special_tokens)

    def stream(self, skip_special_tokens: bool = False) -> "TableStream | PrefixStream":
        """What ``decode`` of the ids so far adds, as ids arrive: ``step(id)`` returns the new text
        ("" while a later id can still change it), ``flush()`` the rest; joined, ``decode(ids)``
        (:mod:`mtokspec.runtime.hf.stream`)."""
        from mtokspec.runtime.hf.stream import stream

        return stream(self, skip_special_tokens)

    def hold_table(self) -> "HoldTable":
        """The per-id table the streaming loop runs on (:func:`~mtokspec.runtime.hf.stream.compile_hold_table`;
        TokenizerError when the decoder acts across tokens).  Built once."""
        held = self._hold
        if held is None:
            from mtokspec.runtime.hf.stream import compile_hold_table

            try:
                held = compile_hold_table(self)
            except TokenizerError as e:
                held = e
            self._hold = held
        if isinstance(held, TokenizerError):
            raise TokenizerError(str(held))
        return held

    # --- vocabulary -----------------------------------------------------------------------------
    def token_to_id(self, token: str) -> int | None:
        i = self.added.by_content.get(token_text("token", token))
        return i if i is not None else self.model.token_to_id(token)

    def id_to_token(self, i: int) -> str | None:
        t = self.added.by_id.get(token_id("i", i))
        return t if t is not None else self.model.id_to_token(i)

    @property
    def vocab_size(self) -> int:
        """Distinct tokens of the model vocabulary and the added tokens (HF
        ``get_vocab_size(with_added_tokens=True)``)."""
        if self._vocab_size is None:
            v = self.model.vocab
            self._vocab_size = len(v) + sum(1 for c in self.added.by_content if c not in v)
        return self._vocab_size

    def get_vocab(self) -> dict[str, int]:
        v = dict(self.model.vocab)
        v.update(self.added.by_content)
        return v

    def is_special(self, i: int) -> bool:
        return token_id("i", i) in self._special_set

    def is_stop(self, i: int) -> bool:
        return token_id("i", i) in self._stop_set


class HfDecodeStream:
    """HF ``DecodeStream``: text as ids arrive, never ending inside a UTF-8 character.

    Keeps the ids since the last emitted prefix, decodes them with the new id and returns what was
    added after the prefix, unless the decoded text ends with U+FFFD (an incomplete character).
    """

    __slots__ = ("tokenizer", "skip_special_tokens", "ids", "prefix", "prefix_index")

    def __init__(self, tokenizer: HfTokenizer, skip_special_tokens: bool = False):
        self.tokenizer = tokenizer
        self.skip_special_tokens = skip_special_tokens
        self.ids: list[int] = []
        self.prefix = ""
        self.prefix_index = 0

    def step(self, token_id: int) -> str | None:
        token_id = _token_id("token_id", token_id)
        decode = self.tokenizer.decode
        skip = self.skip_special_tokens
        if not self.prefix and self.ids:
            new_prefix = decode(self.ids, skip)
            if not new_prefix.endswith("\ufffd"):
                self.prefix = new_prefix
                self.prefix_index = len(self.ids)
        self.ids.append(token_id)
        string = decode(self.ids, skip)
        if len(string.encode("utf-8", "surrogatepass")) > len(
                self.prefix.encode("utf-8", "surrogatepass")) and not string.endswith("\ufffd"):
            if not string.startswith(self.prefix):
                raise TokenizerError(
                    f"decode stream: id {token_id} changed the text already returned "
                    f"({self.prefix!r} -> {string!r})")
            new_text = string[len(self.prefix):]
            new_prefix_index = len(self.ids) - self.prefix_index
            self.ids = self.ids[self.prefix_index:]
            self.prefix = decode(self.ids, skip)
            self.prefix_index = new_prefix_index
            return new_text
        return None
