"""One row of the ``--target mnn`` decision table (:class:`Variant`), its :class:`Verdict` and the
:class:`Context` a lowering reads; the stage modules declare their rows with these."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = ["Verdict", "Variant", "Context", "Lowering", "STAGES"]


class Verdict(str, Enum):
    """How the released format carries a variant on MNN's runtime."""

    EXACT = "exact"
    """MNN gives HF's answer on every text."""
    BOUNDED = "exact within a bound"
    """MNN gives HF's answer on every text within the stated bound (``Variant.bound``)."""
    APPROXIMATED = "approximated"
    """Written with the named rule; MNN differs on the texts the divergence rule describes."""
    IMPOSSIBLE = "impossible"
    """The released format cannot say it (``Variant.why``); the format-next extension may."""


STAGES = ("normalizer", "pre_tokenizer", "model", "decoder", "post_processor", "added_tokens")
"""The pipeline stages of ``tokenizer.json``, in order (``added_tokens`` rows are options of an entry)."""

Lowering = Callable[[Mapping[str, Any], Any, "Context"], Any]


@dataclass(frozen=True)
class Context:
    """What a lowering may read besides its node: the whole ``tokenizer.json`` and the tree."""

    tokenizer_json: Mapping[str, Any]
    tree: Any


@dataclass(frozen=True, eq=False)
class Variant:
    """One row: ``stage``, HF ``type`` tag, the ``option`` values it covers ("" for all),
    ``verdict``, ``written_as`` (what the file holds), ``rule`` (the divergence rule naming the
    loss, for APPROXIMATED / IMPOSSIBLE / BOUNDED past the bound), ``bound`` (BOUNDED rows),
    ``past_bound`` (BOUNDED rows whose bound is a property of the text: whether a text is past it),
    ``why`` (IMPOSSIBLE rows: what the format lacks), ``also_in`` (the later stages the written form
    may land in, e.g. a Strip moved to the pre-tokenizer), ``tag`` (a short name of ``option`` for
    :attr:`key`), ``lossy`` (the written node is not HF's even on HF's semantics: see
    :attr:`format_loss`), ``example`` (the ``tokenizer.json`` node the
    live test builds a folder around; None: covered by the named other row), ``applies`` (whether
    a node is this row; default: its ``type`` is ``type``) and ``lower`` (the node ``--target mnn``
    writes for it given the exporter's node; None: the exporter's node stays)."""

    stage: str
    type: str
    option: str
    verdict: Verdict
    written_as: str
    rule: str | None = None
    bound: str = ""
    past_bound: Callable[[str], bool] | None = field(default=None, compare=False)
    why: str = ""
    example: Mapping[str, Any] | None = None
    model: str = "bpe"
    tag: str = ""
    lossy: bool = False
    also_in: tuple[str, ...] = ()
    applies: Callable[[Mapping[str, Any]], bool] | None = field(default=None, compare=False)
    lower: Lowering | None = field(default=None, compare=False)

    def matches(self, node: Mapping[str, Any]) -> bool:
        if node.get("type") != self.type:
            return False
        return self.applies is None or bool(self.applies(node))

    @property
    def key(self) -> str:
        label = self.tag or self.option
        return f"{self.stage}.{self.type}" + (f"[{label}]" if label else "")

    @property
    def format_loss(self) -> bool:
        """Whether the written file's own HF semantics differs from HF for this row (what the
        format cannot say), as opposed to MNN's runtime running a faithful file differently."""
        return self.verdict is Verdict.IMPOSSIBLE or (self.rule or "").startswith("format:") or self.lossy

    @property
    def cause(self) -> str:
        """The code a report names where the written file's own HF semantics differs from HF
        because of this row (what the format could not say): ``format:`` and the row."""
        return self.rule if self.rule and self.rule.startswith("format:") else f"format:{self.key}"

    def describe(self) -> str:
        """One line: the variant, what the file holds for it and why."""
        why = self.bound if self.verdict is Verdict.BOUNDED else self.why
        return f"{self.key} is {self.verdict.value}: written as {self.written_as}" + (f" ({why})" if why else "")


