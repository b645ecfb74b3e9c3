"""The one registry of ways MNN's C++ runtime differs from Hugging Face `tokenizers`/`transformers`.

Each difference is one :class:`Rule` with a stable code, the component it concerns, a one-line
summary and a minimal example.  The ``mnn`` semantics of the runtime names the rules that explain a
difference (``mtokspec compare --runtime mnn``), the lint (``mtokspec lint --target mnn``) predicts
from a file which rules will bite, and the README's divergence section is generated from here.

Rules live in one module per part of the pipeline (``runtime`` for tokenization and decoding,
``chat_template`` for MNN's Jinja engine); ``RULES`` gathers them, keyed by code.
"""

from __future__ import annotations

from mtokspec.divergences._rule import Rule
from mtokspec.divergences.chat_template import CHAT_TEMPLATE_RULES
from mtokspec.divergences.runtime import RUNTIME_RULES

__all__ = ["Rule", "RULES", "rule"]


def _gather(*groups: tuple[Rule, ...]) -> dict[str, Rule]:
    out: dict[str, Rule] = {}
    for group in groups:
        for r in group:
            if r.code in out:
                raise RuntimeError(f"divergence rule {r.code!r} is declared twice")
            out[r.code] = r
    return out


RULES: dict[str, Rule] = _gather(RUNTIME_RULES, CHAT_TEMPLATE_RULES)


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
