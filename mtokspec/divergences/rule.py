"""The record every divergence rule is written as, with the behaviour it carries."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from mtokspec.errors import UndefinedInMnn

Prediction = tuple[str, str, str]
"""``(severity, path, message)``: one finding a rule predicts from the file alone."""


class LintContext:
    """What a rule's prediction may ask about a file: the tree, and the file as MNN runs it (built
    once, on first use; ``None`` when MNN's loader has no defined behaviour on the file)."""

    def __init__(self, tree: Any, target: str = "mnn"):
        self.tree = tree
        self.target = target
        self._mnn: Any = ...
        self.undefined: str | None = None
        self._chat: list[Any] | None = None

    @property
    def mnn(self) -> Any:
        if self._mnn is ...:
            from mtokspec.runtime.mnn.next import device_tokenizer

            try:
                self._mnn = device_tokenizer(self.tree, self.target)
            except UndefinedInMnn as e:
                self._mnn, self.undefined = None, str(e)
        return self._mnn

    def field(self, cls: type) -> Any:
        """Format next's field of type ``cls`` when the target reads it (``mnn-next``), else None."""
        from mtokspec.names import EXTENDED

        if self.target != EXTENDED or getattr(self.tree, "extension", None) is None:
            return None
        from mtokspec.format.extension import field_of

        return field_of(self.tree, cls)

    @property
    def chat_findings(self) -> list[Any]:
        """The chat template lint's findings for the file (once per file)."""
        if self._chat is None:
            template = getattr(self.tree, "chat_template", None)
            if template:
                from mtokspec.chat.lint import lint_chat_template

                self._chat = lint_chat_template(template, bos_token=self.tree.bos_token or "")
            else:
                self._chat = []
        return self._chat


@dataclass(frozen=True)
class Rule:
    """One way MNN's runtime differs from Hugging Face.

    ``code`` is stable (tests, lint findings and ``compare`` output name it); ``component`` is the
    pipeline stage or file part it concerns; ``summary`` one line; ``example`` a minimal case, HF's
    result against MNN's; ``mnn_ref`` the MNN source it follows (path:line at the reference commit).

    The behaviour it carries: ``predict(ctx)`` yields what the lint says of a file from the file
    alone; ``stage`` and ``applies(tree)`` let :mod:`mtokspec.divergences.explain` name the rule
    when that stage's outputs differ between the two semantics and the file has the construct;
    ``case(tree, text)``, when given, says whether a stage input (UTF-8 bytes) can show it.
    """

    code: str
    component: str
    summary: str
    example: str
    mnn_ref: str = ""
    stage: str | None = None
    applies: Callable[[Any], bool] | None = field(default=None, compare=False, repr=False)
    predict: Callable[[LintContext], Iterable[Prediction]] | None = field(default=None, compare=False, repr=False)
    case: Callable[[Any, bytes], bool] | None = field(default=None, compare=False, repr=False)

    def explains(self, tree: Any) -> bool:
        """Whether the rule can explain a difference at its stage for this file."""
        return self.applies is not None and self.applies(tree)

    def explains_case(self, tree: Any, text: bytes) -> bool:
        """Whether the rule can explain a difference at its stage for this file and stage input."""
        return self.explains(tree) and (self.case is None or self.case(tree, text))
