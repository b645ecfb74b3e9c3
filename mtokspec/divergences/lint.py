"""``lint(tree_or_bytes, target="mnn")``: what a device running the file will do differently from HF.

Without any text, each rule of :data:`~mtokspec.divergences.RULES` predicts from the file whether it
will bite on MNN's C++ runtime; a finding carries the rule's code, a path into the file and a
severity: ``error`` when (nearly) every input differs, MNN fails, or its behaviour is undefined;
``warning`` when some inputs differ; ``info`` when it is worth knowing.
"""

from __future__ import annotations

import os

from mtokspec.divergences import RULES
from mtokspec.divergences.rule import LintContext
from mtokspec.errors import ArgumentTypeError, Error
from mtokspec.format.files import tree_of
from mtokspec.format import tree as t
from mtokspec.format.validate import ERROR, INFO, WARNING, Finding
from mtokspec.names import DEVICES as TARGETS  # the device runtimes, declared once

__all__ = ["lint", "TARGETS", "LintTargetError"]
_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


class LintTargetError(Error, ValueError):
    """A lint target mtokspec does not know."""


def lint(tree_or_bytes: t.TokenizerFile | bytes | bytearray | memoryview | str | os.PathLike[str],
         target: str = "mnn") -> list[Finding]:
    """The findings for ``target`` (one of :data:`TARGETS`; the extended one is MNN with ``patches/mnn/``, which
    reads format next's extension), errors first, for a tree, the bytes of
    a file or its path (as :func:`mtokspec.load` takes them).

    Bytes that cannot be parsed raise :class:`MtokFormatError`, and a path is read, as
    :func:`mtokspec.validate` does.
    """
    if not isinstance(target, str):
        raise ArgumentTypeError(f"target: expected a str, got {type(target).__name__}")
    if target not in TARGETS:
        raise LintTargetError(f"unknown lint target {target!r} (known: {', '.join(TARGETS)})")
    tree = tree_of(tree_or_bytes)
    if not isinstance(tree, t.TokenizerFile):
        raise ArgumentTypeError(f"tree_or_bytes: expected a tokenizer file tree, bytes or a path, "
                                f"got {type(tree_or_bytes).__name__}")
    ctx = LintContext(tree, target)
    findings = [Finding(severity, path, message, rule.code)
                for rule in RULES.values() if rule.predict is not None
                for severity, path, message in rule.predict(ctx)]
    return sorted(findings, key=lambda f: _ORDER[f.severity])
