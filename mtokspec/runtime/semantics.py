"""The semantics a file can run in, declared once (``runtime.mnn.next.device_tokenizer`` builds a device's).

``hf`` is Hugging Face ``tokenizers``; the devices are released MNN (``mnn``) and MNN with the
format-next patch (``mnn-next``, ``patches/mnn/``, which reads the ``extension`` section).  Each
device is a ``convert --target``, a ``lint --target`` and a ``--runtime``.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["Semantics", "SEMANTICS", "DEVICES", "EXTENDED"]

Semantics = Literal["hf", "mnn", "mnn-next"]
SEMANTICS: tuple[Semantics, ...] = ("hf", "mnn", "mnn-next")
DEVICES: tuple[Semantics, ...] = SEMANTICS[1:]
EXTENDED: Semantics = SEMANTICS[2]
"""The device that reads format next's ``extension`` section."""
