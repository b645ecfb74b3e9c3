"""What a conversion gives: the tree and what it could not keep."""

from __future__ import annotations

from dataclasses import dataclass

from mtokspec.convert.loss import Loss
from mtokspec.format import tree as t


@dataclass
class ConversionResult:
    """``tree``: the ``.mtok`` tree; ``losses``: what it could not keep; ``unicode_version``: the
    Unicode version of the embedded tables."""

    tree: t.MtokFile
    losses: list[Loss]
    unicode_version: str
