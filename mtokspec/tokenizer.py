"""The one public tokenizer type, and the switch between the two semantics.

    tok = mtokspec.Tokenizer.from_file("tokenizer.mtok")                   # as HF `tokenizers`
    dev = mtokspec.Tokenizer.from_file("tokenizer.mtok", semantics="mnn")  # as MNN on a device
    isinstance(dev, mtokspec.Tokenizer)                                    # True for both

:class:`Tokenizer` is the contract both runtimes implement (a runtime-checkable Protocol, so
``isinstance`` and type checkers agree); :func:`load` is the only place that knows both semantics
and that a legacy ``tokenizer.txt`` runs with HF semantics once upgraded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Protocol, TypeVar, cast, runtime_checkable

from mtokspec.args import keyword_options
from mtokspec.errors import ArgumentTypeError, TokenizerError
from mtokspec.format.files import tree_and_bytes
from mtokspec.format import tree as t
from mtokspec.names import DEVICES, SEMANTICS, Semantics
from mtokspec.runtime.shared.gc import paused_gc

__all__ = ["Tokenizer", "DecodeStream", "TextStream", "Semantics", "SEMANTICS", "DEVICES", "load", "hold_table"]

_T = TypeVar("_T", bound="Tokenizer")


@runtime_checkable
class DecodeStream(Protocol):
    """Text as ids arrive: ``step(id)`` returns the new text, or None while a character is incomplete."""

    def step(self, token_id: int) -> str | None: ...


@runtime_checkable
class TextStream(Protocol):
    """What the semantics' sequence decode of the ids so far adds, as ids arrive: ``step(id)``
    returns the new text ("" while a later id can still change it), ``flush()`` the rest; joined,
    they are ``decode(ids)``."""

    def step(self, token_id: int) -> str: ...

    def flush(self) -> str: ...


@runtime_checkable
class Tokenizer(Protocol):
    """A tokenizer file run in one semantics: ``"hf"`` (Hugging Face ``tokenizers``) or ``"mnn"``
    (MNN's C++ runtime).  Build one with :meth:`from_file`, :meth:`from_bytes`, :meth:`from_tree`
    or :func:`load`: on ``Tokenizer`` they choose the runtime by ``semantics``; each runtime's
    class has its own, which build that runtime."""

    # The constructors are part of the contract: each runtime's class builds its own runtime, and
    # on ``Tokenizer`` itself they choose it by the ``semantics`` option (``"hf"`` unless given).
    @classmethod
    def from_tree(cls: type[_T], tree: t.TokenizerFile, **options: Any) -> _T:
        """The tokenizer for a parsed tree (``semantics=`` and the options: see :func:`load`)."""
        return cast(_T, load(tree, **options))

    @classmethod
    def from_bytes(cls: type[_T], data: bytes, **options: Any) -> _T:
        """The tokenizer for the bytes of a ``.mtok`` or legacy ``tokenizer.txt`` file."""
        return cast(_T, load(data, **options))

    @classmethod
    def from_file(cls: type[_T], path: str | os.PathLike[str], **options: Any) -> _T:
        """The tokenizer for a ``.mtok`` or legacy ``tokenizer.txt`` file."""
        return cast(_T, load(Path(path), **options))

    semantics: str
    special_ids: list[int]
    stop_ids: list[int]
    prefix_ids: list[int]
    chat_template: str | None
    bos_token: str | None
    eos_token: str | None

    @property
    def tree(self) -> t.TokenizerFile:
        """The parsed file this tokenizer runs (read-only: a runtime may hold a narrower type)."""
        ...

    def encode(self, text: str, add_special_tokens: bool = ...) -> list[int]:
        """The ids of ``text`` (HF: ``add_special_tokens`` defaults to False; MNN: to True, as
        MNN's ``encode(text)``)."""
        ...

    def encode_batch(self, texts: Iterable[str], add_special_tokens: bool = ...) -> list[list[int]]: ...

    def add_special(self, ids: list[int]) -> list[int]:
        """``ids`` with the file's post-processor (or prefix ids) applied."""
        ...

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = ...) -> str: ...

    def decode_bytes(self, ids: Iterable[int], skip_special_tokens: bool = ..., stream: bool = ...) -> bytes:
        """The decoded bytes; ``stream=True``: what a streaming decode prints, joined."""
        ...

    def decode_batch(self, batch: Iterable[Iterable[int]], skip_special_tokens: bool = ...) -> list[str]: ...

    def decode_stream(self, skip_special_tokens: bool = ...) -> DecodeStream: ...

    def stream(self, skip_special_tokens: bool = ...) -> TextStream:
        """The streaming decoder: prints what ``decode`` of the prefix adds, where it is final
        (``docs/design/streaming.md``)."""
        ...

    def token_to_id(self, token: str) -> int | None: ...

    def id_to_token(self, i: int) -> str | None: ...

    @property
    def vocab_size(self) -> int: ...

    def get_vocab(self) -> dict[str, int]: ...

    def is_special(self, i: int) -> bool: ...

    def is_stop(self, i: int) -> bool: ...

    def apply_chat_template(self, messages: list[dict[str, Any]], add_generation_prompt: bool = ..., tools: Any = ...,
                            template: str | None = ..., **kwargs: Any) -> str:
        """The prompt the chat template makes for ``messages``, rendered as this semantics renders it."""
        ...


def load(source: t.TokenizerFile | bytes | bytearray | memoryview | str | os.PathLike[str], *,
         semantics: Semantics = "hf", upgrade_options: dict[str, Any] | None = None, **options: Any) -> Tokenizer:
    """The tokenizer for a tree, the bytes of a file, or a file's path.

    ``semantics="hf"`` tokenizes as Hugging Face ``tokenizers`` (a legacy ``tokenizer.txt`` is first
    upgraded by :func:`mtokspec.convert.upgrade`, given ``upgrade_options``; other options go to
    :class:`~mtokspec.runtime.hf.HfTokenizer`).  ``semantics="mnn"`` runs the file as MNN's C++
    runtime does, legacy types by MNN's own legacy tokenizers; ``semantics="mnn-next"`` as MNN with
    ``patches/mnn/``, which also reads the file's ``extension`` section; ``semantics="mnn@3.6.1"`` (each
    of :data:`mtokspec.names.MnnRelease`) as that released MNN version; their one option is
    ``max_expansion`` (every semantics: :mod:`mtokspec.runtime.shared.bounds`).
    """
    if not isinstance(semantics, str):
        raise ArgumentTypeError(f"semantics: expected one of {', '.join(map(repr, SEMANTICS))}, got {type(semantics).__name__}")
    if semantics not in SEMANTICS:
        raise TokenizerError(f"semantics must be one of {', '.join(map(repr, SEMANTICS))}, got {semantics!r}")
    _check_options(semantics, upgrade_options, options)
    with paused_gc():
        return _load(source, semantics, upgrade_options, options)


def _options(semantics: Semantics) -> tuple[str, ...]:
    """The keywords the semantics' tokenizer takes (its constructor's)."""
    if semantics in DEVICES:  # MnnTokenizer and the mnn-next device take the same
        from mtokspec.runtime.mnn import MnnTokenizer

        # the semantics' name chooses the MNN version (mnn@VERSION), so ``version`` is no option of load
        return tuple(name for name in keyword_options(MnnTokenizer.__init__) if name != "version")
    from mtokspec.runtime.hf import HfTokenizer

    return keyword_options(HfTokenizer.__init__)


def _check_options(semantics: Semantics, upgrade_options: Any, options: dict[str, Any]) -> None:
    """An option the semantics does not take, or ``upgrade_options`` that are no dict of
    :func:`mtokspec.convert.upgrade`'s keywords: ``ArgumentTypeError`` naming it (as Python's own
    ``TypeError`` for an unknown keyword would)."""
    takes = _options(semantics)
    for name in options:
        if name not in takes:
            raise ArgumentTypeError(f"{name}: not an option of semantics={semantics!r} (it takes "
                                    f"{', '.join(takes)}{', upgrade_options' if semantics == 'hf' else ''})")
    if upgrade_options is None:
        return
    if not isinstance(upgrade_options, dict):
        raise ArgumentTypeError(f"upgrade_options: expected a dict or None, got {type(upgrade_options).__name__}")
    from mtokspec.convert.upgrade import upgrade

    known = keyword_options(upgrade)
    for name in upgrade_options:
        if name not in known:
            raise ArgumentTypeError(f"upgrade_options: {name!r} is not an option of mtokspec.convert.upgrade "
                                    f"(it takes {', '.join(known)})")


def _load(source: Any, semantics: Semantics, upgrade_options: dict[str, Any] | None,
          options: dict[str, Any]) -> Tokenizer:
    from mtokspec.runtime.shared.pickling import remember_source

    tree, data = tree_and_bytes(source)
    if not isinstance(tree, t.TokenizerFile):
        raise ArgumentTypeError(f"source must be a tree, bytes or a path, got {type(source).__name__}")
    tok = _build(tree, semantics, upgrade_options, options)
    # the bytes a pickle carries: the file's own, unless it was upgraded (then its new tree's)
    remember_source(tok, data if tok.tree is tree else None)
    return tok


def _build(tree: t.TokenizerFile, semantics: Semantics, upgrade_options: dict[str, Any] | None,
           options: dict[str, Any]) -> Tokenizer:
    if semantics in DEVICES:
        if upgrade_options:
            raise TokenizerError(f"upgrade_options: semantics={semantics!r} runs a legacy file as MNN does, not upgraded")
        from mtokspec.runtime.mnn.next import device_tokenizer

        device: Tokenizer = device_tokenizer(tree, semantics, **options)
        return device
    from mtokspec.runtime.hf import HfTokenizer

    if not isinstance(tree, t.MtokFile):
        from mtokspec.convert.upgrade import upgrade

        tree = upgrade(tree, **(upgrade_options or {})).tree
    elif upgrade_options:
        raise TokenizerError("upgrade_options apply to legacy tokenizer.txt files only")
    return HfTokenizer(tree, **options)


def hold_table(source: "Tokenizer | t.TokenizerFile | bytes | str | os.PathLike[str]", **options: Any) -> dict[str, Any]:
    """The hold table of a file's decoder, as JSON data: the per-id table and the loop (in its
    header) with which an app prints what HF's decode prints as ids arrive
    (:mod:`mtokspec.runtime.hf.stream`).  ``source``: an HF-semantics tokenizer, or what
    :func:`load` takes (``options`` go to it).  TokenizerError when the decoder acts across tokens."""
    from mtokspec.runtime.hf import HfTokenizer

    if isinstance(source, Tokenizer) and not isinstance(source, HfTokenizer):
        raise ArgumentTypeError(f"source: the hold table describes HF semantics, got a {source.semantics!r} tokenizer")
    tok = source if isinstance(source, HfTokenizer) else load(source, semantics="hf", **options)
    assert isinstance(tok, HfTokenizer)
    return tok.hold_table().to_json()
