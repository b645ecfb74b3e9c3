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

from collections.abc import Iterator, Mapping
from typing import Any

from mtokspec.convert.mnn_target.variants.row import STAGES, Context, Variant, Verdict

__all__ = ["Verdict", "Variant", "Context", "STAGES", "VARIANTS", "variant_of", "rows_of", "by_cause", "lower",
           "table_markdown", "rows"]


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
