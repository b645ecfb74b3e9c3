"""Conversions between Hugging Face ``tokenizer.json`` folders and ``.mtok`` trees.

    from mtokspec.convert import from_hf, to_hf
    result = from_hf("path/to/model")          # .tree, .losses, .unicode_version
    data = mtokspec.build(result.tree)         # what MNN's exporter writes from that folder
    doc = to_hf(mtokspec.parse(data))          # a tokenizer.json document for HF `tokenizers`
    result = upgrade(mtokspec.parse(txt_bytes))  # legacy tokenizer.txt tree -> MtokFile tree + losses

No runtime dependency beyond the standard library and mtokspec (no transformers, torch, tokenizers).
"""

from mtokspec.convert.inputs import WHITESPACE_SPLIT, HFInputs, load_hf
from mtokspec.convert.loss import ConversionError, Loss, render_json, render_text
from mtokspec.convert.result import ConversionResult
from mtokspec.convert.targets import from_hf, from_hf_inputs, from_hf_tree
from mtokspec.convert.to_hf import to_hf, to_hf_with_notes
from mtokspec.convert.unicode_tables import UNIDATA_VERSION
from mtokspec.convert.upgrade import upgrade

__all__ = ["from_hf", "from_hf_tree", "from_hf_inputs", "load_hf", "HFInputs", "ConversionResult",
           "ConversionError", "Loss", "render_text", "render_json", "to_hf", "to_hf_with_notes",
           "WHITESPACE_SPLIT", "UNIDATA_VERSION", "upgrade"]
