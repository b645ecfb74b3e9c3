"""The registry of divergences: well-formed, the only source of codes, and the README's table."""

from __future__ import annotations

import re


from mtokspec.divergences import RULES, markdown_table, rule
from tools import readme_divergences
from tests._support import ROOT


def test_rules_are_well_formed():
    for code, r in RULES.items():
        assert r.code == code and re.fullmatch(r"mnn-[a-z0-9-]+", code)
        assert r.component and r.summary and r.example
        assert r.mnn_ref.startswith("transformers/llm/engine/src/tokenizer/") and re.search(r":\d+$", r.mnn_ref)
    assert rule("mnn-bos-twice").component == "post-processor"


def test_every_code_the_lint_and_the_explanation_use_is_registered():
    used = set()
    for path in [*(ROOT / "mtokspec" / "chat" / "lint").rglob("*.py"), *(ROOT / "mtokspec" / "divergences").rglob("*.py")]:
        used |= set(re.findall(r'"(mnn-[a-z0-9-]+)"', path.read_text(encoding="utf-8")))
    assert used and used <= set(RULES), sorted(used - set(RULES))


def test_readme_table_is_generated_from_the_registry():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_divergences.render(text) == text, "run python -m tools.readme_divergences"
    for code in RULES:
        assert f"`{code}`" in text
    assert markdown_table().count("\n") == len(RULES) + 2


def test_metaspace_never_splits_on_mnn():
    # recorded from MNN's own runtime (mnn_tok encode-raw): "a b" -> [5], "b a b" -> [4, 5]
    from mtokspec import Tokenizer, lint
    from mtokspec.divergences.explain import explain_encode
    from mtokspec.format import tree as t
    from tools import hostile

    toks = ["▁", "a", "b", "▁a", "▁b", "▁a▁b"]
    model = t.BPEModel(False, False, sorted((s.encode(), i) for i, s in enumerate(toks)), [(0, 1, 0), (0, 2, 1), (3, 4, 2)])
    tree = hostile._file(pre=t.MetaspacePreTokenizer("▁", True), model=model)
    hf, mnn = Tokenizer.from_tree(tree), Tokenizer.from_tree(tree, semantics="mnn")
    assert (hf.encode("a b"), mnn.encode("a b"), mnn.encode("b a b")) == ([3, 4], [5], [4, 5])
    assert explain_encode(hf, mnn, "a b", False) == ["mnn-metaspace-no-split"]
    found = {(f.severity, f.code) for f in lint(tree)}
    assert ("warning", "mnn-metaspace-no-split") in found and not any(c == "mnn-metaspace-every-split" for _, c in found)
    tree.model = t.BPEModel(False, False, sorted((s.encode(), i) for i, s in enumerate(toks[:5])), [(0, 1, 0), (0, 2, 1)])
    assert ("info", "mnn-metaspace-no-split") in {(f.severity, f.code) for f in lint(tree)}


def test_an_uncut_metaspace_is_not_blamed_when_the_model_ties():
    # MNN's Metaspace keeps "---▁---" whole, HF cuts it in two: HF's Unigram gives the same ids on
    # both, so the difference is the model's (MNN breaks the tie of "-" + "--" the other way)
    from mtokspec import Tokenizer
    from mtokspec.divergences.explain import explain_encode
    from mtokspec.format import tree as t
    from tools import hostile

    pieces = [("<unk>", 0.0), ("\u2581", -1.0), ("-", -2.0), ("--", -2.5)]
    rows = sorted((s.encode(), i, score) for i, (s, score) in enumerate(pieces))
    tree = hostile._file(pre=t.MetaspacePreTokenizer("\u2581", False), model=t.UnigramModel(0, False, rows))
    hf, mnn = Tokenizer.from_tree(tree), Tokenizer.from_tree(tree, semantics="mnn")
    assert (hf.encode("--- ---"), mnn.encode("--- ---")) == ([2, 3, 1, 2, 3], [3, 2, 1, 3, 2])
    assert explain_encode(hf, mnn, "--- ---", False) == ["mnn-unigram-bytes"]

def test_post_processor_without_a_sequence_op():
    # recorded from MNN's own runtime (mnn_tok): encode "aab" -> [3], encode-raw -> [1, 2]
    from mtokspec import Tokenizer, lint
    from mtokspec.divergences.explain import explain_encode
    from mtokspec.format import tree as t
    from tools import hostile

    tree = hostile._file()
    tree.chat_template, tree.eos_token, tree.flags, tree.bos_token = "", "", 0, ""
    tree.post_processor = t.PostProcessorProgram([t.SpecialTokenOp(3)])
    hf, mnn = Tokenizer.from_tree(tree), Tokenizer.from_tree(tree, semantics="mnn")
    assert (hf.encode("aab", False), mnn.encode("aab", False)) == ([], [1, 2])
    assert hf.encode("aab", True) == mnn.encode("aab", True) == [3]
    assert explain_encode(hf, mnn, "aab", False) == ["mnn-post-no-sequence"]
    assert ("warning", "mnn-post-no-sequence") in {(f.severity, f.code) for f in lint(tree)}
    tree.post_processor = t.PostProcessorProgram([t.SpecialTokenOp(3), t.SequenceOp()])
    assert not any(f.code == "mnn-post-no-sequence" for f in lint(tree))
