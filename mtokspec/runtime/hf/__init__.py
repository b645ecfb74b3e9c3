"""The ``hf`` semantics: a ``.mtok`` tree tokenized as Hugging Face ``tokenizers`` does.

One module per stage (``normalizers``, ``pre_tokenizers``, ``models/{bpe,wordpiece,unigram}``,
``decoders``, ``added_tokens``), one class per variant, a registry per stage keyed by tree class;
``tokenizer`` composes them.  Every stage works on plain ``str``: no offsets are tracked.
"""

from __future__ import annotations

from mtokspec.runtime.hf.tokenizer import HfDecodeStream, HfTokenizer

__all__ = ["HfTokenizer", "HfDecodeStream"]
