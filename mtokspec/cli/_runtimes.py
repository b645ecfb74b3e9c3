"""What ``--runtime`` takes (the commands that run a file import it from here)."""

from __future__ import annotations

from mtokspec.runtime.mnn_versions import MNN_SEMANTICS

#: hf, mnn, and mnn@VERSION for each released MNN version that differs from HEAD
RUNTIMES: tuple[str, ...] = ("hf", *MNN_SEMANTICS)
