"""Every union member is handled everywhere a variant must be (the checklist atop spec/mtok.py).

Parametrized over ``tree.UNIONS``: a variant added to the spec fails here, naming the missing place,
until it has its class in both runtimes' registries (``mtokspec.runtime.hf`` and
``mtokspec.runtime.mnn``), its Hugging Face mapping both ways, its ``inspect`` line, its strategy,
an explanation for every way the two runtimes differ on it (``mtokspec.divergences.explain``, from
the rules' ``stage`` and ``applies``) and a lint that reads it (``mtokspec.divergences.lint``) --
the exhaustiveness that HF ``tokenizers`` gets from Rust's ``match``.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from mtokspec import Tokenizer
from mtokspec.convert import from_hf_tree
from mtokspec.convert.to_hf import to_hf
from mtokspec.divergences import RULES
from mtokspec.divergences.lint import lint
from mtokspec.format import inspect as summary
from mtokspec.format import tree as t
from mtokspec.runtime.hf import decoders, models, normalizers, pre_tokenizers
from mtokspec.runtime.mnn import decoders as mnn_decoders
from mtokspec.runtime.mnn import models as mnn_models
from mtokspec.runtime.mnn import normalizers as mnn_normalizers
from mtokspec.runtime.mnn import pre_tokenizers as mnn_pre_tokenizers
from mtokspec.runtime.mnn import MnnTokenizer
from mtokspec.testing import strategies
from tests._support.divergence import assert_differences_explained

# every test here runs on both paths of the codec and models: compiled and pure (conftest.runtime_path)
pytestmark = pytest.mark.usefixtures("runtime_path")

# format next's fields are no pipeline variant: tests/test_format_next.py covers them
MEMBERS = [(union, cls) for union, members in t.UNIONS.items() for cls in members if union != "ExtensionField"]
member_param = pytest.mark.parametrize(("union", "cls"), MEMBERS, ids=[cls for _, cls in MEMBERS])
SECTIONS = {"Normalizer": "normalizer", "PreTokenizer": "pre_tokenizer", "Model": "model", "Decoder": "decoder",
            "PostProcessor": "post_processor", "PostOp": "post_processor"}
REGISTRIES = {"Normalizer": normalizers.REGISTRY, "PreTokenizer": pre_tokenizers.REGISTRY,
              "Model": models.REGISTRY, "Decoder": decoders.REGISTRY}
MNN_REGISTRIES = {"Normalizer": mnn_normalizers.REGISTRY, "PreTokenizer": mnn_pre_tokenizers.REGISTRY,
                  "Model": mnn_models.REGISTRY, "Decoder": mnn_decoders.REGISTRY}
# the stage at which explain compares the two runtimes, as the rules' ``stage`` names it; the
# decoders have none: explain_decode compares the whole chain and names the decode rules itself
STAGES = {"Normalizer": "normalizer", "PreTokenizer": "pre-tokenizer", "Model": "model",
          "PostProcessor": "post-processor", "PostOp": "post-processor"}
EXPLAINED_STAGES = {"normalizer", "pre-tokenizer", "model", "post-processor", "legacy"}
# the staged unions whose sequence member holds children of the same union (a rule must find a member there)
SEQUENCES = {"Normalizer": t.SequenceNormalizer, "PreTokenizer": t.SequencePreTokenizer}
NESTED = [(union, cls) for union, cls in MEMBERS if union in SEQUENCES]

BPE = t.BPEModel(vocab=[(b"a", 0), (b"ab", 2), (b"b", 1)], merges=[(0, 1, 0)])
# members whose default values HF cannot load (one-character fields, a model without a vocabulary)
# or MNN never finishes with (an empty Replace decoder pattern)
SAMPLES = {
    "MetaspacePreTokenizer": t.MetaspacePreTokenizer("\u2581", True),
    "MetaspaceDecoder": t.MetaspaceDecoder("\u2581", True),
    "StripDecoder": t.StripDecoder(" ", 1, 0),
    "ReplaceNormalizer": t.ReplaceNormalizer("a", "b"),
    "ReplaceDecoder": t.ReplaceDecoder("\u2581", " "),
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
# text on which the runtimes' differences show: white space of every kind, accents, digits, CJK,
# the metaspace, characters whose case or category differs between Unicode tables
PROBES = ["", "a", "ab", "ba b", " aab  ", "a\u2028b\u3000a\x85", "\xe9", "A\u0300b", "12 345", "a.b, c!",
          "\u2581a \u2581", "\u0130", "a\u200bb", "\u65e5\u672c", "[UNK]a", "<unk>ab"]


def sample(cls: str):
    return SAMPLES.get(cls) or getattr(t, cls)()


def file_with(union: str, node) -> t.MtokFile:
    if union == "PostOp":  # an op in a program as the exporter writes one: with the sequence
        node = t.PostProcessorProgram(ops=[node] if isinstance(node, t.SequenceOp) else [node, t.SequenceOp()])
    return t.MtokFile(**{"model": BPE, SECTIONS[union]: node})


def at_path(tree, path: str):
    """The part of ``tree`` a finding's path names (``decoder.decoders[1]``, ``header.ids``)."""
    obj = tree
    for part in path.split("."):
        name, indexes = re.fullmatch(r"(\w+)((?:\[\d+\])*)", part).groups()
        obj = getattr(obj, name)
        for k in re.findall(r"\d+", indexes):
            obj = obj[int(k)]
    return obj


@member_param
def test_every_union_member_is_handled_everywhere(union, cls, tmp_path):
    node = sample(cls)
    # both runtimes build it (unions without a registry are read by the tokenizers themselves)
    if union in REGISTRIES:
        assert type(node) in REGISTRIES[union], f"no runtime class for {cls} in mtokspec.runtime.hf's {union} REGISTRY"
        assert type(node) in MNN_REGISTRIES[union], f"no entry for {cls} in mtokspec.runtime.mnn's {union} REGISTRY"
        if MNN_REGISTRIES[union][type(node)] is None:  # a stage MNN skips: only "no such stage"
            assert cls.startswith("No"), f"mtokspec.runtime.mnn's {union} REGISTRY skips {cls}, which is a stage"
    Tokenizer.from_tree(file_with(union, node))
    assert isinstance(Tokenizer.from_tree(file_with(union, node), semantics="mnn"), MnnTokenizer)
    # Hugging Face both ways: to_hf names it, from_hf reads the result back into it
    hf_doc = to_hf(file_with(union, node))
    (tmp_path / "tokenizer.json").write_text(json.dumps(hf_doc), encoding="utf-8")
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


@member_param
def test_explain_names_a_rule_wherever_the_runtimes_differ(union, cls):
    """The two semantics on a file holding the member: every encode or decode that differs is
    explained by divergence rules (a difference no rule explains is a missing rule)."""
    tree = file_with(union, sample(cls))
    hf_tok, mnn_tok = Tokenizer.from_tree(tree), MnnTokenizer.from_tree(tree)
    for text in PROBES:
        assert_differences_explained(hf_tok, mnn_tok, text, cls)


@pytest.mark.parametrize(("union", "cls"), NESTED, ids=[cls for _, cls in NESTED])
def test_the_rules_find_the_member_inside_a_sequence(union, cls):
    """A rule that names the member at its stage names it inside a sequence too (explain and the
    lint find nodes with ``tree.walk_stage``)."""
    alone = file_with(union, sample(cls))
    nested = file_with(union, SEQUENCES[union]([sample(cls)]))
    for rule in RULES.values():
        if rule.stage == STAGES[union] and rule.explains(alone):
            assert rule.explains(nested), f"{rule.code} names {cls} alone but not inside {SEQUENCES[union].__name__}"


@member_param
def test_the_lint_reads_every_member(union, cls):
    """``lint`` runs on a file holding the member, each finding names a rule and a place that exists
    in the file, and each rule that explains a difference for the member can predict it."""
    tree = file_with(union, sample(cls))
    for finding in lint(tree):
        assert finding.code in RULES, (cls, finding)
        try:
            at_path(tree, finding.path)
        except (AttributeError, IndexError, TypeError):
            pytest.fail(f"the lint's finding {finding} names {finding.path!r}, which is not in the file ({cls})")
    for rule in RULES.values():
        if rule.stage == STAGES.get(union) and rule.explains(tree):
            assert rule.predict is not None, f"{rule.code} explains differences on {cls} but the lint cannot predict it"


def test_registries_hold_only_union_members():
    """A registry key that is no member of its union is a stale entry (the class was renamed or removed)."""
    for registries, where in ((REGISTRIES, "hf"), (MNN_REGISTRIES, "mnn")):
        for union, registry in registries.items():
            stale = {k.__name__ for k in registry} - set(t.UNIONS[union])
            assert not stale, f"mtokspec.runtime.{where}'s {union} REGISTRY holds non-members {sorted(stale)}"


def test_every_rule_with_a_construct_has_a_stage_explain_compares():
    """``applies`` (the construct that lets a rule explain a difference) goes with the ``stage``
    explain compares; a rule with only one of them is never named by explain."""
    for rule in RULES.values():
        assert (rule.stage is None) == (rule.applies is None), rule.code
        assert rule.stage is None or rule.stage in EXPLAINED_STAGES, (rule.code, rule.stage)
