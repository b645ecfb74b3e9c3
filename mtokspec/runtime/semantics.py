"""The semantics a file can run in, declared once, and the device runtimes' constructor.

``hf`` is Hugging Face ``tokenizers``; the devices are released MNN (``mnn``) and MNN with the
format-next patch (``mnn-next``, ``patches/mnn/``, which reads the ``extension`` section).  Each
device is a ``convert --target``, a ``lint --target`` and a ``--runtime``.
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["Semantics", "SEMANTICS", "DEVICES", "device_tokenizer"]

Semantics = Literal["hf", "mnn", "mnn-next"]
SEMANTICS: tuple[Semantics, ...] = ("hf", "mnn", "mnn-next")
DEVICES: tuple[Semantics, ...] = SEMANTICS[1:]


def device_tokenizer(tree: Any, semantics: str, **options: Any) -> Any:
    """The tokenizer device runtime ``semantics`` (one of :data:`DEVICES`) builds for ``tree``."""
    from mtokspec.runtime.mnn import MnnTokenizer
    from mtokspec.runtime.mnn.next import next_tokenizer

    return next_tokenizer(tree, **options) if semantics == "mnn-next" else MnnTokenizer.from_tree(tree, **options)
