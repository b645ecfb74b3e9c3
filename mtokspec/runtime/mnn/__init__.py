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

from mtokspec.errors import UndefinedInMnn
from mtokspec.runtime.mnn.legacy import Bert, HuggingFace, Sentencepiece, Tiktoken
from mtokspec.runtime.mnn.pipeline import PipelineTokenizer
from mtokspec.runtime.mnn.tokenizer import MNN_COMMIT, MnnDecodeStream, MnnTokenizer

# MnnTokenizer.from_tree picks the class registered for the tree's type: the pipeline for .mtok,
# one class per legacy type (importing them here registers them).
__all__ = ["MnnTokenizer", "MnnDecodeStream", "UndefinedInMnn", "MNN_COMMIT",
           "PipelineTokenizer", "Sentencepiece", "Tiktoken", "Bert", "HuggingFace"]
