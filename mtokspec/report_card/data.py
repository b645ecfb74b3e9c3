"""The report card's data: what one tokenizer's card says, as plain frozen records.

A :class:`Card` holds, per output of MNN's runtime (:data:`OUTPUTS`), how many cases MNN answers
as HF does and the divergence rules behind each difference, with examples; the chat prompts side
by side; the reference the answers came from; the MNN commit the ``mnn`` semantics models; and the
device result when one was given.  The renderers (:mod:`.html`, :mod:`.md`) and the JSON
(:meth:`Card.to_dict`) read nothing else, so every number on a page is a number of the JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["OUTPUTS", "OUTPUT_LABELS", "Side", "Example", "RuleCount", "OutputResult", "ChatCase",
           "DeviceResult", "Reference", "Card", "SCHEMA"]

SCHEMA = "mtokspec-report-card/1"
"""The JSON document's ``schema``: bumped when a field changes meaning."""

OUTPUTS: tuple[str, ...] = ("encode", "raw", "stream", "seq", "chat")
"""The outputs a card compares, in order: ``encode`` (MNN's ``encode(text)`` against HF with
special tokens), ``raw`` (``encode(text, false)`` against HF without), ``stream`` (the engine's
per-id decode of HF's ids, joined, against HF's decode), ``seq`` (``Tokenizer::decode(ids)``
against HF's decode) and ``chat`` (the device's chat prompt against transformers')."""

OUTPUT_LABELS: dict[str, str] = {
    "encode": "encode",
    "raw": "encode without specials",
    "stream": "stream decode",
    "seq": "sequence decode",
    "chat": "chat render",
}
"""A short name per output, as the pages print it."""


@dataclass(frozen=True)
class Side:
    """One side's answer on a case: token ids with their texts (``None``: no such token) for an
    encode, or the ``text`` for a decode or a chat prompt (``None`` with ``error`` when it failed)."""

    ids: tuple[int, ...] = ()
    tokens: tuple[str | None, ...] = ()
    text: str | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"ids": list(self.ids), "tokens": list(self.tokens), "text": self.text, "error": self.error}


@dataclass(frozen=True)
class Example:
    """A differing case: its index among the texts, the input text, the ids both decodes read
    (decode outputs; empty for an encode), where the answers first differ (token or character)
    and HF's and MNN's answers."""

    index: int
    text: str
    position: int
    hf: Side
    mnn: Side
    ids: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "text": self.text, "position": self.position, "ids": list(self.ids),
                "hf": self.hf.to_dict(), "mnn": self.mnn.to_dict()}


@dataclass(frozen=True)
class RuleCount:
    """One divergence rule on one output: its code (a rule of :mod:`mtokspec.divergences`,
    :data:`~mtokspec.divergences.EXPORTER_LOSS` or ``UNEXPLAINED``), what it says, the differing
    cases it explains and a few of them."""

    code: str
    summary: str
    cases: int
    examples: tuple[Example, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "summary": self.summary, "cases": self.cases,
                "examples": [e.to_dict() for e in self.examples]}


@dataclass(frozen=True)
class OutputResult:
    """One output: ``same`` of ``cases`` answered as HF does; ``unexplained`` differing cases no
    rule explains; the rules, most cases first.  ``note`` says why an output has no cases."""

    output: str
    cases: int
    same: int
    unexplained: int = 0
    rules: tuple[RuleCount, ...] = ()
    note: str = ""

    @property
    def differing(self) -> int:
        return self.cases - self.same

    @property
    def rate(self) -> float | None:
        """``same / cases``; ``None`` for an output without cases."""
        return self.same / self.cases if self.cases else None

    def to_dict(self) -> dict[str, Any]:
        return {"output": self.output, "label": OUTPUT_LABELS[self.output], "cases": self.cases, "same": self.same,
                "differing": self.differing, "rate": self.rate, "unexplained": self.unexplained,
                "rules": [r.to_dict() for r in self.rules], "note": self.note}


@dataclass(frozen=True)
class ChatCase:
    """One conversation: transformers' prompt (``reference``) and the device's, each ``None`` with
    its error where rendering failed, the first differing character, the rules behind it and the
    chat lint's other findings on the template (``present``: constructs MNN renders differently)."""

    name: str
    add_generation_prompt: bool
    reference: str | None
    mnn: str | None
    reference_error: str | None = None
    mnn_error: str | None = None
    first_difference: int | None = None
    rules: tuple[str, ...] = ()
    present: tuple[str, ...] = ()

    @property
    def same(self) -> bool:
        return self.reference_error is None and self.mnn_error is None and self.reference == self.mnn

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "add_generation_prompt": self.add_generation_prompt, "same": self.same,
                "reference": self.reference, "mnn": self.mnn, "reference_error": self.reference_error,
                "mnn_error": self.mnn_error, "first_difference": self.first_difference, "rules": list(self.rules),
                "present": list(self.present)}


@dataclass(frozen=True)
class DeviceResult:
    """MNN's device test for the model: ``passed`` of ``total`` cases (``failed``, ``skipped``),
    from ``source`` (a ``test_tokenizer`` log, or goldens run on the ``mnn`` semantics)."""

    source: str
    model: str
    passed: int
    total: int
    failed: int = 0
    skipped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "model": self.model, "passed": self.passed, "total": self.total,
                "failed": self.failed, "skipped": self.skipped}


@dataclass(frozen=True)
class Reference:
    """What HF's answers came from: ``kind`` ``"hf-tokenizers"`` (HF ``tokenizers`` ``version``
    loading ``path``) or ``"mtokspec-hf"`` (mtokspec's own HF semantics of the file, no HF code);
    ``chat``: what rendered the reference prompts."""

    kind: str
    description: str
    version: str | None = None
    path: str | None = None
    chat: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "description": self.description, "version": self.version, "path": self.path,
                "chat": self.chat}


@dataclass(frozen=True)
class Card:
    """One tokenizer's report card (see the module)."""

    name: str
    source: str
    file: str
    reference: Reference
    mnn_commit: str
    mtokspec_version: str
    texts: str
    outputs: tuple[OutputResult, ...]
    chat: tuple[ChatCase, ...] = ()
    device: DeviceResult | None = None
    notes: tuple[str, ...] = field(default=())

    def output(self, name: str) -> OutputResult:
        """The result of one output (``KeyError`` for a name not in :data:`OUTPUTS`)."""
        for o in self.outputs:
            if o.output == name:
                return o
        raise KeyError(name)

    @property
    def verdict(self) -> str:
        """One line: on how many outputs MNN gives HF's answer on every case."""
        scored = [o for o in self.outputs if o.cases]
        full = [o for o in scored if o.same == o.cases]
        if len(full) == len(scored):
            return f"MNN = HF on every case of all {len(scored)} outputs"
        return f"MNN = HF on every case of {len(full)} of {len(scored)} outputs"

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "name": self.name, "source": self.source, "file": self.file,
                "verdict": self.verdict, "reference": self.reference.to_dict(), "mnn_commit": self.mnn_commit,
                "mtokspec_version": self.mtokspec_version, "texts": self.texts,
                "outputs": [o.to_dict() for o in self.outputs], "chat": [c.to_dict() for c in self.chat],
                "device": None if self.device is None else self.device.to_dict(), "notes": list(self.notes)}


def _check_card(card: object) -> None:
    """A renderer's argument: a :class:`Card` (else :class:`~mtokspec.errors.ArgumentTypeError`)."""
    from mtokspec.errors import ArgumentTypeError

    if not isinstance(card, Card):
        raise ArgumentTypeError(f"card: expected a Card, got {type(card).__name__}")


def _check_cards(cards: object) -> None:
    """An index renderer's argument: a list of ``(Card, link)`` pairs."""
    from mtokspec.errors import ArgumentTypeError

    if not isinstance(cards, (list, tuple)) or not all(
            isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], Card) and isinstance(x[1], str) for x in cards):
        raise ArgumentTypeError("cards: expected a list of (Card, link) pairs")
