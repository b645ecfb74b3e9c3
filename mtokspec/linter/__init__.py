"""``lint(tree_or_bytes, target="mnn")``: what a device running the file will do differently from HF.

Without any text, the lint reads the file and predicts which divergence rules
(:mod:`mtokspec.divergences`) will bite on MNN's C++ runtime: each finding carries the rule's code,
a path into the file and a severity -- ``error`` when (nearly) every input differs, MNN fails, or its
behaviour is undefined; ``warning`` when some inputs differ; ``info`` when it is worth knowing.
The chat template is linted by :mod:`mtokspec.chat.lint` (paths ``chat_template...``).
"""

from __future__ import annotations

from mtokspec.format import tree as t
from mtokspec.errors import MtokFormatError, UsageError
from mtokspec.format import parse
from mtokspec.format.validate import ERROR, INFO, WARNING, Finding

__all__ = ["lint", "TARGETS"]

TARGETS = ("mnn",)
_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


def lint(tree_or_bytes: t.TokenizerFile | bytes | bytearray | memoryview, target: str = "mnn") -> list[Finding]:
    """The findings for ``target`` (only ``"mnn"`` so far), errors first.

    Bytes that cannot be parsed raise :class:`MtokFormatError`, as :func:`mtokspec.validate` does.
    """
    if target not in TARGETS:
        raise UsageError(f"unknown lint target {target!r} (known: {', '.join(TARGETS)})")
    if isinstance(tree_or_bytes, (bytes, bytearray, memoryview)):
        tree = parse(tree_or_bytes)
    else:
        tree = tree_or_bytes
    from mtokspec.linter import mnn

    if isinstance(tree, t.MtokFile):
        findings = mnn.lint_mtok(tree)
    elif isinstance(tree, t.LEGACY_ROOTS):
        findings = mnn.lint_txt(tree)
    else:
        raise MtokFormatError(f"expected a tokenizer file tree or bytes, got {type(tree_or_bytes).__name__}")
    return sorted(findings, key=lambda f: _ORDER[f.severity])
