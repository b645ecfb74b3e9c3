"""The check every comparison of the two semantics makes: where they differ, a rule explains it."""

from __future__ import annotations

from mtokspec.divergences import RULES
from mtokspec.divergences.explain import explain_decode, explain_encode

__all__ = ["assert_differences_explained"]


def assert_differences_explained(hf, mnn, text: str, context: object = "") -> None:
    """Encode ``text`` (with and without special tokens) and decode HF's ids (sequence and
    stream) with both semantics; each output that differs must be explained by rules of
    :data:`~mtokspec.divergences.RULES` (``context`` names the case in a failure)."""
    for special in (False, True):
        if hf.encode(text, special) != mnn.encode(text, special):
            rules = explain_encode(hf, mnn, text, special)
            assert rules and set(rules) <= set(RULES), (context, text, special, rules)
    ids = hf.encode(text)
    for stream in (False, True):
        if hf.decode_bytes(ids) != mnn.decode_bytes(ids, stream=stream):
            rules = explain_decode(hf, mnn, ids, stream)
            assert rules and set(rules) <= set(RULES), (context, ids, stream, rules)
