"""Every union member is handled everywhere a variant must be (the checklist atop spec/mtok.py).

One parametrized test over ``tree.UNIONS``: a variant added to the spec fails here until it has its
runtime class, its Hugging Face mapping both ways, its ``inspect`` line and its strategy -- the
exhaustiveness that HF ``tokenizers`` gets from Rust's ``match``.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from mtokspec.format import inspect as summary
from mtokspec.testing import strategies
from mtokspec.format import tree as t
from mtokspec.convert.hf import from_hf_tree
from mtokspec.convert.to_hf import to_hf
from mtokspec.runtime.hf import decoders, models, normalizers, pre_tokenizers

# every test here runs on both paths of the codec and models: compiled and pure (conftest.runtime_path)
pytestmark = pytest.mark.usefixtures("runtime_path")

MEMBERS = [(union, cls) for union, members in t.UNIONS.items() for cls in members]
SECTIONS = {"Normalizer": "normalizer", "PreTokenizer": "pre_tokenizer", "Model": "model", "Decoder": "decoder",
            "PostProcessor": "post_processor", "PostOp": "post_processor"}
REGISTRIES = {"Normalizer": normalizers.REGISTRY, "PreTokenizer": pre_tokenizers.REGISTRY,
              "Model": models.REGISTRY, "Decoder": decoders.REGISTRY}

BPE = t.BPEModel(vocab=[(b"a", 0), (b"ab", 2), (b"b", 1)], merges=[(0, 1, 0)])
# members whose default values HF cannot load (one-character fields, a model without a vocabulary)
SAMPLES = {
    "MetaspacePreTokenizer": t.MetaspacePreTokenizer("\u2581", True),
    "MetaspaceDecoder": t.MetaspaceDecoder("\u2581", True),
    "StripDecoder": t.StripDecoder(" ", 1, 0),
    "ReplaceNormalizer": t.ReplaceNormalizer("a", "b"),
    "BertNFDNormalizer": t.BertNFDNormalizer(strip_accents=True, nfd_table=[(0xC0, "A\u0300".encode())]),
    "BPEModel": BPE,
    "WordPieceModel": t.WordPieceModel(vocab=[(b"[UNK]", 0), (b"a", 1)], unk_token="[UNK]",
                                       continuing_subword_prefix="##", max_input_chars_per_word=100),
    "UnigramModel": t.UnigramModel(vocab=[(b"<unk>", 0, 0.0), (b"a", 1, -1.0)], unk_id=0),
    "PostProcessorProgram": t.PostProcessorProgram(ops=[t.SpecialTokenOp(0), t.SequenceOp()]),
    "LegacyPostProcessor": t.LegacyPostProcessor(ids=[2]),
}
# what the exporter writes for HF's counterpart of a member it never writes itself
FROM_HF_GIVES = {
    "LegacyNFKCNormalizer": "TableNormalizer",  # HF NFKC: the exporter embeds the table
    "LegacyPostProcessor": "PostProcessorProgram",  # the exporter writes the current layout only
}


def sample(cls: str):
    return SAMPLES.get(cls) or getattr(t, cls)()


def file_with(union: str, node) -> t.MtokFile:
    if union == "PostOp":
        node = t.PostProcessorProgram(ops=[node])
    return t.MtokFile(**{"model": BPE, SECTIONS[union]: node})


@pytest.mark.parametrize(("union", "cls"), MEMBERS, ids=[cls for _, cls in MEMBERS])
def test_every_union_member_is_handled_everywhere(union, cls, tmp_path):
    node = sample(cls)
    # the runtime builds it (unions without a registry are read by the Tokenizer itself)
    if union in REGISTRIES:
        assert type(node) in REGISTRIES[union], f"no runtime class for {cls} in {union}'s REGISTRY"
    # Hugging Face both ways: to_hf names it, from_hf reads the result back into it
    hf = to_hf(file_with(union, node))
    (tmp_path / "tokenizer.json").write_text(json.dumps(hf), encoding="utf-8")
    back = getattr(from_hf_tree(tmp_path), SECTIONS[union])
    if union == "PostOp":
        back = back.ops[0]
    assert type(back).__name__ == FROM_HF_GIVES.get(cls, cls)
    # inspect: its own line, which shows the fields when it has any
    line = summary.describe(file_with(union, node).post_processor if union == "PostOp" else node)
    assert line
    if dataclasses.fields(node) and union != "PostOp":
        assert any(ch in line for ch in "([:"), (cls, line)
    # a strategy of its own (variants() raises KeyError for a class it does not know)
    strategies.variants(type(node))
