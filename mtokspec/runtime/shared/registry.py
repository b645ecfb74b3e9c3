"""What every stage module (normalizers, pre-tokenizers, decoders, models) of both runtimes does
alike: name its runtime classes in a registry keyed by tree class (:func:`stage_registry`), build a
stage's runtime object from its tree node through it, and run a ``Sequence`` stage's children in
turn under the call's size bound."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from mtokspec.errors import TokenizerError
from mtokspec.runtime.shared.bounds import current


def stage_registry(kind: str, *classes: type, **others: type | None) -> dict[type, Any]:
    """A stage's registry (tree class -> runtime class): each of ``classes`` under the tree class
    named after it (``ByteLevel`` -> ``tree.ByteLevelDecoder`` for ``kind="Decoder"``), and
    ``others`` by tree class name (``None``: a stage the runtime skips)."""
    from mtokspec.format import tree as t

    out: dict[type, Any] = {getattr(t, cls.__name__ + kind): cls for cls in classes}
    out.update({getattr(t, name): cls for name, cls in others.items()})
    return out


def build_from_registry(registry: dict, node: Any, stage: str) -> Any:
    """The runtime object for a tree node, through a stage's registry (tree class -> runtime class,
    whose ``from_tree`` builds it; ``None`` for a stage the runtime skips, which gives ``None``)."""
    if type(node) not in registry:
        raise TokenizerError(f"unknown {stage} node {type(node).__name__}")
    cls = registry[type(node)]
    return None if cls is None else cls.from_tree(node)


def pieces_size(pieces: Iterable[Any]) -> int:
    """The size of a list of pieces (characters, or bytes under the ``mnn`` semantics)."""
    return sum(map(len, pieces))


def run_chain(children: Iterable[Any], value: Any, method: str, stage: str,
              measure: Callable[[Any], int] = len) -> Any:
    """``value`` through each child's ``method`` in turn (a ``Sequence`` stage); each result's size
    (``measure``) is checked against the call's size bound, which names ``stage``."""
    b = current(measure(value))
    for child in children:
        value = getattr(child, method)(value)
        b.size(stage, measure(value))
    return value
