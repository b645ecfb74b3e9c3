"""Where MNN's Jinja engine renders a chat template differently from transformers."""

from __future__ import annotations

from mtokspec.divergences._rule import Rule

CHAT_TEMPLATE_RULES: tuple[Rule, ...] = ()
