"""Models: a pre-tokenized piece to ids.  One class per variant, built through :data:`REGISTRY`.

Every model has ``tokenize(piece)`` -> a sequence of ids (cached per piece, bounded; BPE caches tuples,
which the cycle collector stops tracking), ``token_to_id``,
``id_to_token`` (its id -> token table is built on first use) and ``vocab`` (token -> id).
"""

from __future__ import annotations

from mtokspec.runtime.shared.registry import build_from_registry, stage_registry
from mtokspec.runtime.hf.models.bpe import BPE
from mtokspec.runtime.hf.models.unigram import Unigram
from mtokspec.runtime.hf.models.wordpiece import WordPiece

__all__ = ["BPE", "WordPiece", "Unigram", "REGISTRY", "from_tree"]

REGISTRY: dict[type, type] = stage_registry("Model", BPE, WordPiece, Unigram)


def from_tree(node):
    """The runtime model for a tree node."""
    return build_from_registry(REGISTRY, node, "model")
