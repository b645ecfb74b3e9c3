"""A card, or several, as the JSON document CI reads: :meth:`~.data.Card.to_dict`, nothing else."""

from __future__ import annotations

import json

from mtokspec.report_card.data import _check_card, _check_cards
from mtokspec.report_card.data import SCHEMA, Card

__all__ = ["render_json", "render_json_index"]


def render_json(card: Card) -> str:
    """The card's JSON (the numbers the pages print, and the examples)."""
    _check_card(card)
    return json.dumps(card.to_dict(), ensure_ascii=False, indent=1) + "\n"


def render_json_index(cards: list[tuple[Card, str]]) -> str:
    """``{"schema", "cards": [{"link", ...card}]}`` for ``(card, link)`` pairs."""
    _check_cards(cards)
    doc = {"schema": SCHEMA, "cards": [{"link": link} | card.to_dict() for card, link in cards]}
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
