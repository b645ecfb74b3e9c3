"""Building a stage's runtime object from its tree node through a registry keyed by tree class."""

from __future__ import annotations

from typing import Any

from mtokspec.errors import TokenizerError


def build_from_registry(registry: dict, node: Any, stage: str) -> Any:
    """The runtime object for a tree node, through a stage's registry (tree class -> runtime class,
    whose ``from_tree`` builds it; ``None`` for a stage the runtime skips, which gives ``None``)."""
    if type(node) not in registry:
        raise TokenizerError(f"unknown {stage} node {type(node).__name__}")
    cls = registry[type(node)]
    return None if cls is None else cls.from_tree(node)
