"""The runtime wing: a parsed tree run as a tokenizer, in two sibling semantics.

:mod:`mtokspec.runtime.hf` tokenizes as Hugging Face ``tokenizers`` does;
:mod:`mtokspec.runtime.mnn` as MNN's C++ runtime does on a device.  Both follow one layout (one
module per pipeline stage, one class per variant, a registry per stage keyed by tree class) and
share :mod:`mtokspec.runtime.shared`.  The public entry is :class:`mtokspec.Tokenizer`.
"""

from __future__ import annotations

from mtokspec.errors import TokenizerError, UndefinedInMnn

__all__ = ["TokenizerError", "UndefinedInMnn"]
