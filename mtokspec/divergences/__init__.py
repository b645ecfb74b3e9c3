"""The divergences wing: every way MNN's C++ runtime differs from Hugging Face, in one registry.

Each difference is one :class:`Rule` with a stable code, the component it concerns, a one-line
summary, a minimal example, and the behaviour that goes with it: its prediction from the file alone
(:mod:`~mtokspec.divergences.lint`, ``mtokspec lint --target mnn``) and the construct that lets it
explain a difference between the two semantics (:mod:`~mtokspec.divergences.explain`, used by
``mtokspec compare --runtime mnn``).  The rules live in :mod:`mtokspec.divergences.rules`, one
module per part of the file; the README's divergence section is generated from :data:`RULES`.
"""

from __future__ import annotations

from mtokspec.divergences.rule import LintContext, Rule
from mtokspec.divergences.rules import chat_template, decoders, header, legacy, loader, models, normalizers, pre_tokenizers

__all__ = ["Rule", "LintContext", "RULES", "rule", "markdown_table", "EXPORTER_LOSS"]

EXPORTER_LOSS = "file-differs-from-tokenizer.json"
"""Not a rule of MNN's runtime: what ``compare --against tokenizer.json`` says of a case where the
file's own HF semantics already differs from ``tokenizer.json`` (the exporter dropped something,
which ``mtokspec convert`` reports)."""


def _gather(*groups: tuple[Rule, ...]) -> dict[str, Rule]:
    out: dict[str, Rule] = {}
    for group in groups:
        for r in group:
            if r.code in out:
                raise RuntimeError(f"divergence rule {r.code!r} is declared twice")
            out[r.code] = r
    return out


RULES: dict[str, Rule] = _gather(header.RULES, normalizers.RULES, pre_tokenizers.RULES, models.RULES,
                                 decoders.RULES, legacy.RULES, models.LINT_ONLY, loader.RULES,
                                 chat_template.RULES)


def rule(code: str) -> Rule:
    """The rule with this code (``KeyError`` names the unknown code)."""
    return RULES[code]


def markdown_table(component_prefix: str | None = None) -> str:
    """The rules as a Markdown table (the README's divergence section is this text)."""
    rows = ["| code | where | what MNN does | example |", "|---|---|---|---|"]
    for r in RULES.values():
        if component_prefix is not None and not r.component.startswith(component_prefix):
            continue
        cells = [f"`{r.code}`", r.component, r.summary, r.example]
        rows.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(rows) + "\n"
