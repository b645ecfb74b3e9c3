"""The ``mnn`` semantics: a tokenizer file run the way MNN's C++ runtime runs it on a device.

    tok = mtokspec.Tokenizer.from_file("tokenizer.mtok", semantics="mnn")
    tok.encode("Hello")                   # MNN's encode(text): prefix ids, special split, post-processor
    tok.decode_bytes(ids, stream=True)    # what the LLM engine prints

This is a model of MNN's code (``transformers/llm/engine/src/tokenizer/`` in alibaba/MNN at
:data:`MNN_COMMIT`), checked against the outputs MNN's own C++ tokenizer recorded for the corpus.
Everything works on bytes, as MNN does.  Where MNN's behaviour is undefined (it reads or writes out
of bounds, or never returns), :class:`UndefinedInMnn` says so instead of guessing.
"""

from __future__ import annotations

from mtokspec.runtime.mnn._undefined import UndefinedInMnn
from mtokspec.runtime.mnn.tokenizer import MNN_COMMIT, MnnDecodeStream, MnnTokenizer

__all__ = ["MnnTokenizer", "MnnDecodeStream", "UndefinedInMnn", "MNN_COMMIT"]
