"""``tools.public_pipelines``: its deterministic BPE trainer, and folders it builds with transformers' code."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests._support.public_pipelines import public_pipelines  # noqa: F401
from tools.public_pipelines.training import train_bpe


def test_train_bpe_takes_the_most_frequent_pair_then_breaks_ties_by_the_pair():
    vocab, merges = train_bpe(Counter({"aab": 2, "ab": 3, "cd": 5}), ["a", "b", "c", "d"], vocab_size=7)
    # (a,b) 2+3=5 ties (c,d) 5: "a"<"c" first; then (a,ab) 2
    assert merges == [("a", "b"), ("c", "d"), ("a", "ab")]
    assert list(vocab) == ["a", "b", "c", "d", "ab", "cd", "aab"]


def test_train_bpe_affixes_follow_hf_conventions():
    vocab, merges = train_bpe(Counter({"ab": 4, "b": 1}), ["a", "b"], vocab_size=10, prefix="##")
    assert merges == [("a", "##b")] and "ab" in vocab and "##b" in vocab
    vocab, merges = train_bpe(Counter({"ab": 4}), ["a", "b"], vocab_size=10, suffix="</w>")
    assert merges == [("a", "b</w>")] and "ab</w>" in vocab


def test_train_bpe_leaves_out_words_outside_the_alphabet():
    vocab, merges = train_bpe(Counter({"xy": 9, "ab": 1}), ["a", "b"], vocab_size=10)
    assert merges == [("a", "b")] and "x" not in vocab


NAMES = ["t5", "gpt2", "bert-uncased", "v-split-isolated-invert"]
EXPECTED = {  # what each converter writes (transformers' code), read back from tokenizer.json
    "t5": ("Unigram", "Metaspace", "TemplateProcessing", "T5Tokenizer"),
    "gpt2": ("BPE", "ByteLevel", "ByteLevel", "GPT2Tokenizer"),
    "bert-uncased": ("WordPiece", "BertPreTokenizer", "TemplateProcessing", "BertTokenizer"),
    "v-split-isolated-invert": ("BPE", "Sequence", "ByteLevel", "RobertaTokenizer"),
}


def test_folders_load_in_hf_and_carry_their_family(public_pipelines):  # noqa: F811
    tokenizers = pytest.importorskip("tokenizers")
    folders = public_pipelines(NAMES)
    assert sorted(folders) == sorted(NAMES)
    for name, folder in folders.items():
        tj = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        smap = json.loads((folder / "special_tokens_map.json").read_text(encoding="utf-8"))
        model, pre, post, cls = EXPECTED[name]
        assert (tj["model"]["type"], tj["pre_tokenizer"]["type"], tj["post_processor"]["type"]) == (model, pre, post)
        assert config["tokenizer_class"] == cls
        assert all(config[k] == v for k, v in smap.items() if k != "additional_special_tokens")
        hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        ids = hf.encode("Hello world, 你好", add_special_tokens=False).ids
        assert 1 < len(ids) < 40 and hf.get_vocab_size() > 2000
    t5 = json.loads((folders["t5"] / "tokenizer.json").read_text(encoding="utf-8"))
    assert [a["content"] for a in t5["added_tokens"]][-1] == "<extra_id_0>"  # T5Converter appends 99..0
