"""Runtime tokenizer built from a parsed ``.mtok`` tree, with Hugging Face ``tokenizers`` semantics.

    from mtokspec.runtime import Tokenizer
    tok = Tokenizer.from_file("tokenizer.mtok")
    ids = tok.encode("Hello world", add_special_tokens=True)
    text = tok.decode(ids, skip_special_tokens=True)

Layout (like HF tokenizers): one module per stage (``normalizers``, ``pre_tokenizers``,
``models/{bpe,wordpiece,unigram}``, ``decoders``, ``added_tokens``), one class per variant, and a
registry per stage keyed by tree class that builds the runtime object from its tree node.  The
runtime only imports :mod:`mtokspec.tree`; it never reads bytes (``from_file``/``from_bytes`` hand the
bytes to :func:`mtokspec.parse` first).

Every stage works on plain ``str`` (no offsets are tracked), which keeps the hot paths to plain
loops, dict look-ups and compiled regular expressions.
"""

from __future__ import annotations

from mtokspec.errors import Error


class TokenizerError(Error, ValueError):
    """A tree the runtime cannot run (bad pattern, pattern timeout, missing unk token, ...)."""


def build_from_registry(registry: dict, node, stage: str):
    """The runtime object for a tree node, through a stage's registry (tree class -> runtime class)."""
    cls = registry.get(type(node))
    if cls is None:
        raise TokenizerError(f"unknown {stage} node {type(node).__name__}")
    return cls.from_tree(node)


from mtokspec.runtime.tokenizer import DecodeStream, Tokenizer  # noqa: E402

__all__ = ["Tokenizer", "DecodeStream", "TokenizerError"]
