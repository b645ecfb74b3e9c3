"""The decision ``--target mnn`` takes for every HF pipeline variant and option value.

One :class:`Variant` row per HF component type (and per option value that changes the outcome),
in one module per pipeline stage; each row says how the released ``.mtok`` carries it
(:class:`Verdict`), the divergence rule that names what MNN still does differently, and an
``example`` (the component's ``tokenizer.json`` node) that the test suite builds a real folder
around with HF ``tokenizers`` and runs through the ``mnn`` semantics against HF.  The rows that
write something (``lower``) are what :mod:`..choices` applies; :func:`variant_of` finds the row
of a ``tokenizer.json`` node and :func:`table_markdown` is the table in the README and docs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = ["Verdict", "Variant", "Context", "STAGES", "VARIANTS", "variant_of", "rows_of", "by_cause", "lower",
           "table_markdown", "rows"]


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
    ``why`` (IMPOSSIBLE rows: what the format lacks), ``tag`` (a short name of ``option`` for
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
    why: str = ""
    example: Mapping[str, Any] | None = None
    model: str = "bpe"
    tag: str = ""
    lossy: bool = False
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


def _load() -> tuple[Variant, ...]:
    from mtokspec.convert.mnn_target.variants import (added_tokens, decoders, models, normalizers,
                                                      post_processors, pre_tokenizers)

    return (*normalizers.ROWS, *pre_tokenizers.ROWS, *models.ROWS, *decoders.ROWS, *post_processors.ROWS,
            *added_tokens.ROWS)


_ROWS: tuple[Variant, ...] | None = None


def rows() -> tuple[Variant, ...]:
    """Every row, stage by stage (loaded once)."""
    global _ROWS
    if _ROWS is None:
        _ROWS = _load()
    return _ROWS


class _Rows:
    def __iter__(self) -> Iterator[Variant]:
        return iter(rows())

    def __len__(self) -> int:
        return len(rows())


VARIANTS = _Rows()
"""Every :class:`Variant` (iterable)."""


def variant_of(stage: str, node: Any) -> Variant | None:
    """The row of a ``tokenizer.json`` node of ``stage`` (None: not a JSON object, or a type no
    row knows -- the exporter's fallback, a loss)."""
    if not isinstance(node, dict):
        return None
    for v in rows():
        if v.stage == stage and v.matches(node):
            return v
    return None


_CHILDREN = {"normalizer": "normalizers", "pre_tokenizer": "pretokenizers", "decoder": "decoders",
             "post_processor": "processors"}


def _walk(stage: str, node: Any) -> Iterator[Any]:
    if not isinstance(node, dict):
        return
    kids = node.get(_CHILDREN.get(stage, ""))
    if node.get("type") == "Sequence" and isinstance(kids, list):
        for k in kids:
            yield from _walk(stage, k)
    yield node


def rows_of(tokenizer_json: Mapping[str, Any]) -> list[Variant]:
    """The rows a ``tokenizer.json`` uses, stage by stage (a Sequence's children too; added
    tokens by their options; no decoder is the ``(none)`` row)."""
    out: list[Variant] = []
    for stage in ("normalizer", "pre_tokenizer", "model", "decoder", "post_processor"):
        node = tokenizer_json.get(stage)
        if stage == "decoder" and node is None:
            out += [v for v in rows() if v.stage == "decoder" and v.type == "(none)"]
        for n in _walk(stage, node):
            v = variant_of(stage, n)
            if v is not None:
                out.append(v)
    added = tokenizer_json.get("added_tokens")
    by_type = {v.type: v for v in rows() if v.stage == "added_tokens"}
    for a in added if isinstance(added, list) else ():
        if not isinstance(a, dict):
            continue
        out.append(by_type["special"])
        if a.get("lstrip") or a.get("rstrip"):
            out.append(by_type["lstrip/rstrip"])
        if a.get("single_word"):
            out.append(by_type["single_word"])
        if a.get("normalized") and not a.get("special"):
            out.append(by_type["normalized"])
    return list(dict.fromkeys(out))


def by_cause(code: str) -> Variant | None:
    """The row a ``format:`` cause code names."""
    for v in rows():
        if v.cause == code:
            return v
    return None


def lower(stage: str, node: Any, exporter_node: Any, ctx: Context) -> Any:
    """What ``--target mnn`` writes for ``node`` (the exporter's node when the row writes nothing)."""
    v = variant_of(stage, node)
    if v is None or v.lower is None:
        return exporter_node
    got = v.lower(node, exporter_node, ctx)
    return exporter_node if got is None else got


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def table_markdown() -> str:
    """The decision table (Markdown): one line per row."""
    lines = ["| stage | HF variant | option | on released MNN | written as | bound / why | rule |",
             "|---|---|---|---|---|---|---|"]
    for v in rows():
        note = v.bound if v.verdict is Verdict.BOUNDED else v.why
        lines.append(f"| {v.stage} | `{v.type}` | {_cell(v.option) or 'any'} | {v.verdict.value} | "
                     f"{_cell(v.written_as)} | {_cell(note)} | {f'`{v.rule}`' if v.rule else ''} |")
    return "\n".join(lines) + "\n"
