"""Issue 4: HF tokenizer folder -> .mtok without transformers (byte identity, header rules, losses, CLI)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

import mtokspec
from mtokspec.format import tree as t
from mtokspec.convert import (WHITESPACE_SPLIT, ConversionError, Loss, from_hf, from_hf_tree,
                              render_text, unicode_tables)
from tests._support import CORPUS
from tests._support import corpus_folder_param as folder_param



def corpus_folder(name: str) -> Path:
    p = CORPUS / "tok" / name
    if not (p / "tokenizer.json").is_file():
        pytest.skip(f"reference corpus folder {p} not found (it lives in ../shared/corpus)")
    return p


# --------------------------------------------------------------------------------------------
# byte identity with the reference exporter


@folder_param
def test_byte_identical_to_reference_exporter(folder):
    result = from_hf(folder)
    assert result.unicode_version == unicodedata.unidata_version
    assert mtokspec.build(result.tree) == (folder / "mnn.mtok").read_bytes()


@folder_param
def test_header_sets_and_body_exact(folder):
    """Localises a failure of the test above: set-ordered id lists compared as sets, all else exactly."""
    got = from_hf(folder).tree
    ref = mtokspec.parse((folder / "mnn.mtok").read_bytes())
    gh, rh = got.header, ref.header
    assert (len(gh.special), len(gh.stop), len(gh.prefix)) == (len(rh.special), len(rh.stop), len(rh.prefix))
    assert set(gh.special) == set(rh.special)
    assert set(gh.stop) == set(rh.stop)
    assert gh.prefix == rh.prefix  # prefix ids: a list, not a set
    for name in ("normalizer", "pre_tokenizer", "model", "decoder", "added_tokens", "chat_template",
                 "eos_token", "flags", "bos_token", "post_processor"):
        assert getattr(got, name) == getattr(ref, name), name


def test_output_stable_across_runs_and_hash_seeds():
    folder = corpus_folder("phi-3-mini")  # the folder whose special ids come out of a set unsorted
    a = mtokspec.build(from_hf(folder).tree)
    assert a == mtokspec.build(from_hf(folder).tree)
    code = ("import sys, mtokspec; from mtokspec.convert import from_hf; "
            "sys.stdout.buffer.write(mtokspec.build(from_hf(sys.argv[1]).tree))")
    for seed in ("0", "12345"):
        out = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        assert out == a


def test_special_ids_follow_python_set_order():
    tree = from_hf_tree(corpus_folder("phi-3-mini"))
    # all_special_ids = bos <s>=1, eos <|endoftext|>=32000, unk <unk>=0 (pad repeats eos)
    expected = list(set([1, 32000, 0]))
    assert tree.header.special[:3] == expected == [32000, 1, 0]
    assert tree.header.special[3:13] == list(range(32001, 32011))  # added specials, file order


def test_tokenizer_json_path_accepted():
    folder = corpus_folder("bert-base-cased-derived")
    assert mtokspec.build(from_hf_tree(folder / "tokenizer.json")) == (folder / "mnn.mtok").read_bytes()


# --------------------------------------------------------------------------------------------
# Unicode tables


def test_unicode_tables_follow_the_reference_rule():
    for form in ("NFC", "NFKC"):
        brute = []
        for cp in range(0x110000):
            ch = chr(cp)
            n = unicodedata.normalize(form, ch)
            if n != ch:
                brute.append((cp, n.encode("utf-8")))
        table = unicode_tables.normalization_table(form)
        assert table == brute
        assert unicode_tables.identify_table(table) == form
    assert unicode_tables.UNIDATA_VERSION == unicodedata.unidata_version
    nfkc = unicode_tables.nfkc_table()
    nfkc.pop()  # callers get copies; a changed table is no longer identical but still NFKC-like
    assert unicode_tables.identify_table(nfkc) is None
    assert unicode_tables.closest_form(nfkc) == ("NFKC", False)
    assert unicode_tables.identify_table(unicode_tables.nfkc_table()) == "NFKC"


# --------------------------------------------------------------------------------------------
# loss reports


def test_loss_report_tokenizer_wiki():
    result = from_hf(corpus_folder("tokenizer-wiki"))
    by_path = {loss.path: loss for loss in result.losses}
    assert set(by_path) == {"pre_tokenizer", "decoder"}
    assert "Whitespace" in by_path["pre_tokenizer"].what and by_path["pre_tokenizer"].may_change_tokenization
    assert "no decoder" in by_path["decoder"].what and "ByteLevel" in by_path["decoder"].replacement
    assert not by_path["decoder"].may_change_tokenization
    text = render_text(result.losses)
    assert "Whitespace" in text and "1 may change tokenization" in text
    with pytest.raises(ConversionError) as err:
        from_hf(corpus_folder("tokenizer-wiki"), strict=True)
    assert err.value.losses == result.losses and "Whitespace" in str(err.value)


def test_lossless_folder_passes_strict():
    result = from_hf(corpus_folder("bert-base-cased-derived"), strict=True)
    assert result.losses == []


def _write_folder(tmp_path: Path, tj: dict, **files) -> Path:
    (tmp_path / "tokenizer.json").write_text(json.dumps(tj), encoding="utf-8")
    for name, doc in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(doc), encoding="utf-8")
    return tmp_path


def _tiny(**over) -> dict:
    vocab = {c: i for i, c in enumerate(["<s>", "</s>", "a", "b", "ab", "A", "▁", "▁A", "ĠA", "Ġ"])}
    tj = {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
          "post_processor": None, "decoder": {"type": "Fuse"},
          "model": {"type": "BPE", "vocab": vocab, "merges": ["a b"]}}
    tj.update(over)
    return tj


LOSS_CASES = {
    "NFKD": ({"normalizer": {"type": "NFKD"}}, "normalizer", True),
    "Precompiled": ({"normalizer": {"type": "Precompiled", "precompiled_charsmap": ""}}, "normalizer", True),
    "Replace-Regex": ({"normalizer": {"type": "Replace", "pattern": {"Regex": " +"}, "content": "▁"}},
                      "normalizer.pattern", True),
    "unknown-normalizer": ({"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFD"}]}},
                           "normalizer.normalizers[0]", True),
    "ByteLevel-prefix": ({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True}},
                         "pre_tokenizer.add_prefix_space", True),
    "ByteLevel-trim": ({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}},
                       "pre_tokenizer.trim_offsets", False),
    "Metaspace-scheme": ({"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first"}},
                         "pre_tokenizer.prepend_scheme", True),
    "Metaspace-split": ({"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                                           "split": False}}, "pre_tokenizer.split", True),
    "Split-String": ({"pre_tokenizer": {"type": "Split", "pattern": {"String": "a.b"}, "behavior": "Isolated",
                                        "invert": False}}, "pre_tokenizer.pattern", True),
    "Split-MergedWithNext": ({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a"},
                                                "behavior": "MergedWithNext", "invert": False}},
                             "pre_tokenizer.behavior", True),
    "Split-Contiguous": ({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a"},
                                            "behavior": "Contiguous", "invert": False}},
                         "pre_tokenizer.behavior", True),
    "Whitespace": ({"pre_tokenizer": {"type": "Whitespace"}}, "pre_tokenizer", True),
    "Punctuation": ({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Punctuation"}]}},
                    "pre_tokenizer.pretokenizers[0]", True),
    "no-decoder": ({"decoder": None}, "decoder", False),
    "unknown-decoder": ({"decoder": {"type": "BPEDecoder", "suffix": "</w>"}}, "decoder", False),
    "Replace-decoder-Regex": ({"decoder": {"type": "Replace", "pattern": {"Regex": "x+"}, "content": ""}},
                              "decoder.pattern", False),
    "added-single_word": ({"added_tokens": [{"id": 10, "content": "<x>", "single_word": True, "lstrip": False,
                                             "rstrip": False, "normalized": False, "special": False}]},
                          "added_tokens[].single_word", True),
    "added-normalized": ({"normalizer": {"type": "Lowercase"},
                          "added_tokens": [{"id": 10, "content": "<X>", "single_word": False, "lstrip": False,
                                            "rstrip": False, "normalized": True, "special": False}]},
                         "added_tokens[].normalized", True),
    "Roberta-post": ({"post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 1], "cls": ["<s>", 0]}},
                     "post_processor", True),
}
BPE_FIELD_CASES = {"unk_token": "<s>", "dropout": 0.1, "continuing_subword_prefix": "##",
                   "end_of_word_suffix": "</w>", "ignore_merges": True}


@pytest.mark.parametrize("case", sorted(LOSS_CASES))
def test_each_lossy_mapping_is_reported(tmp_path, case):
    over, path, may_change = LOSS_CASES[case]
    folder = _write_folder(tmp_path, _tiny(**over))
    result = from_hf(folder)
    hits = [loss for loss in result.losses if loss.path == path]
    assert len(hits) == 1, result.losses
    assert hits[0].may_change_tokenization is may_change
    assert all(isinstance(loss, Loss) and str(loss) for loss in result.losses)
    with pytest.raises(ConversionError) as err:
        from_hf(folder, strict=True)
    assert hits[0] in err.value.losses
    mtokspec.build(result.tree)  # the lossy tree is still a valid file


@pytest.mark.parametrize("field", sorted(BPE_FIELD_CASES))
def test_dropped_bpe_fields_are_reported(tmp_path, field):
    tj = _tiny()
    tj["model"][field] = BPE_FIELD_CASES[field]
    losses = from_hf(_write_folder(tmp_path, tj)).losses
    assert [loss.path for loss in losses] == [f"model.{field}"]
    assert losses[0].may_change_tokenization


def test_lossy_mappings_write_what_the_exporter_writes(tmp_path):
    tj = _tiny(normalizer={"type": "Sequence", "normalizers": [
        {"type": "NFKD"}, {"type": "Replace", "pattern": {"Regex": " +"}, "content": "_"}, {"type": "NFD"}]},
        pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"String": "a.b"}, "behavior": "Contiguous", "invert": True},
            {"type": "WhitespaceSplit"}, {"type": "Whitespace"}]},
        decoder={"type": "CTC"})
    tree = from_hf_tree(_write_folder(tmp_path, tj))
    n = tree.normalizer.normalizers
    assert n[0] == t.TableNormalizer(unicode_tables.nfkc_table())
    assert n[1] == t.ReplaceNormalizer("", "_") and n[2] == t.NoNormalizer()
    assert tree.pre_tokenizer.pretokenizers == [t.SplitPreTokenizer("a.b", True, 1),
                                                t.SplitPreTokenizer("\\s+", False, 1), t.NoPreTokenizer()]
    assert tree.decoder == t.ByteLevelDecoder()


def test_merge_naming_missing_token_is_an_error(tmp_path):
    tj = _tiny()
    tj["model"]["merges"] = ["a zz"]
    with pytest.raises(ConversionError, match="not in the vocab"):
        from_hf(_write_folder(tmp_path, tj))


def test_unknown_model_is_an_error(tmp_path):
    with pytest.raises(ConversionError, match="no such model"):
        from_hf(_write_folder(tmp_path, _tiny(model={"type": "WordLevel", "vocab": {}})))


def test_missing_tokenizer_json_is_an_error(tmp_path):
    with pytest.raises(ConversionError, match="no tokenizer.json"):
        from_hf(tmp_path)


# --------------------------------------------------------------------------------------------
# header rules on hand-built folders


def _added(i, content, special=True):
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special}


def test_stop_ids_rules(tmp_path):
    tj = _tiny(added_tokens=[_added(20, "<|eot_id|>"), _added(21, "<turn|>"), _added(22, "<|user|>")])
    folder = _write_folder(tmp_path, tj, tokenizer_config={"eos_token": "</s>"},
                           generation_config={"eos_token_id": [1, 33, 20]})
    h = from_hf_tree(folder).header
    stop = h.stop
    assert stop == list(set([1, 20, 1, 33, 20, 21]))
    h2 = from_hf_tree(folder, model_type="glm_ocr").header
    assert set(h2.stop) == {1, 20, 21, 22, 33}


@pytest.mark.parametrize("byte_tokens, changes", [(range(256), False), ([0x0A], True)])
def test_dropped_unk_token_changes_ids_unless_byte_fallback_covers_every_byte(tmp_path, byte_tokens, changes):
    # onnxruntime-extensions' added-tokens folder has only <0x0A>: HF encodes "hello" as [unk],
    # the .mtok (no unknown token) as []
    vocab = {"<unk>": 0, **{f"<0x{b:02X}>": 1 + i for i, b in enumerate(byte_tokens)}}
    tj = _tiny(model={"type": "BPE", "vocab": vocab, "merges": [], "unk_token": "<unk>", "byte_fallback": True})
    losses = {loss.path: loss for loss in from_hf(_write_folder(tmp_path, tj)).losses}
    assert losses["model.unk_token"].may_change_tokenization is changes


def test_prefix_from_template_and_special_tokens_map(tmp_path):
    tj = _tiny(added_tokens=[_added(0, "<s>"), _added(1, "</s>")],
               pre_tokenizer={"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"},
               decoder={"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"},
               post_processor={"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}}],
                               "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]}}})
    folder = _write_folder(tmp_path, tj, tokenizer_config={"bos_token": "</s>", "eos_token": "<s>"},
                           special_tokens_map={"eos_token": {"content": "</s>"}})
    tree = from_hf_tree(folder)
    h = tree.header
    # as MNN's exporter writes it under transformers 5.24: eos from special_tokens_map wins (the
    # config has no added_tokens_decoder); "<turn|>" encodes to "▁" alone (no unknown token), a
    # stop id; encode("A") = <s> ▁ A, so the prefix is <s> ▁
    assert (len(h.special), h.stop, h.prefix) == (2, [1, 6], [0, 6])
    assert tree.eos_token == "<s>"  # the trailing EOS string comes from tokenizer_config only
    assert tree.post_processor == t.PostProcessorProgram([t.SpecialTokenOp(0), t.SequenceOp()])


# --------------------------------------------------------------------------------------------
# exact Whitespace


def test_exact_whitespace_option(tmp_path):
    tree = from_hf_tree(corpus_folder("tokenizer-wiki"), exact_whitespace=True)
    assert tree.pre_tokenizer == WHITESPACE_SPLIT
    assert [loss.path for loss in from_hf(corpus_folder("tokenizer-wiki"), exact_whitespace=True).losses] == ["decoder"]


def test_whitespace_split_equals_hf_whitespace():
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import Regex
    from tokenizers import pre_tokenizers as P

    ws = P.Whitespace()
    behavior = {0: "isolated", 1: "removed", 2: "merged_with_previous"}[WHITESPACE_SPLIT.behavior]
    split = P.Split(Regex(WHITESPACE_SPLIT.pattern), behavior=behavior, invert=WHITESPACE_SPLIT.invert)
    plain = P.Split(Regex(r"\w+|[^\w\s]+"), behavior="removed", invert=True)
    assert tokenizers.__version__
    # every code point below U+3400 and a stride above, between word, space and punctuation neighbours
    cps = [*range(0, 0x3400), *range(0x3400, 0x110000, 61), 0x200C, 0x200D, 0x2028, 0x2029, 0xFE33, 0x1F600]
    mismatches_plain = 0
    for cp in cps:
        if 0xD800 <= cp < 0xE000:
            continue
        ch = chr(cp)
        for s in (f"a{ch}a", f" {ch} ", f".{ch}.", f"{ch}{ch} x"):
            ref = ws.pre_tokenize_str(s)
            assert split.pre_tokenize_str(s) == ref, (hex(cp), s)
            mismatches_plain += plain.pre_tokenize_str(s) != ref
    assert mismatches_plain > 0  # the naive pattern is not equivalent (Oniguruma's \w is wider)


# --------------------------------------------------------------------------------------------
# CLI


def _cli():
    from mtokspec.cli import convert as cmd
    parser = argparse.ArgumentParser(prog="mtokspec")
    cmd.register(parser.add_subparsers(dest="command", required=True))
    return parser


def test_cli_convert_and_export(tmp_path, capsys):
    folder = corpus_folder("tokenizer-wiki")
    out = tmp_path / "tok.mtok"
    args = _cli().parse_args(["convert", str(folder), "-o", str(out), "--report", "json"])
    assert args.func(args) == 0
    assert out.read_bytes() == (folder / "mnn.mtok").read_bytes()
    report = json.loads(capsys.readouterr().err)
    assert {loss["path"] for loss in report["losses"]} == {"pre_tokenizer", "decoder"}
    assert report["unicode_version"] == unicodedata.unidata_version

    args = _cli().parse_args(["convert", str(folder), "-o", str(tmp_path / "strict.mtok"), "--strict"])
    assert args.func(args) == 1
    assert "Whitespace" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok.mtok"]  # nothing left behind

    js = tmp_path / "tokenizer.json"
    args = _cli().parse_args(["export-hf", str(out), "-o", str(js)])
    assert args.func(args) == 0
    doc = json.loads(js.read_text(encoding="utf-8"))
    assert doc["model"]["type"] == "BPE" and doc["pre_tokenizer"] is None

    args = _cli().parse_args(["convert", str(tmp_path / "missing"), "-o", str(tmp_path / "x.mtok")])
    assert args.func(args) == 2
    assert "No such file or directory" in capsys.readouterr().err  # as open says it
    assert not (tmp_path / "x.mtok").exists()
