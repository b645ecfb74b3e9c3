"""Issue 31, items 6 and 9: `set --add-token` ids MNN's loader can hold, and the command line's
and library's messages (paths for validate/lint, a folder given to load, chat without a template,
diff's "and N more", chat --tokens with --runtime mnn)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace

import pytest
from tests._support import ROOT, corpus_folder_param

import mtokspec
from mtokspec.cli import main
from mtokspec.format import edit
from mtokspec.format import tree as t

EXAMPLE = ROOT / "examples" / "tiny.mtok"


def run(*argv: object) -> int:
    return main([str(a) for a in argv])


# --- item 6: an added token's id inside the vocabulary MNN's loader builds ----------------------

def _codes(findings) -> set[str]:
    return {f.code for f in findings if f.severity != "info"}


@corpus_folder_param
def test_set_add_token_output_validates_loads_and_encodes_the_new_id(folder, tmp_path, capsys):
    src = folder / "mnn.mtok"
    before = mtokspec.parse(src.read_bytes())
    out = tmp_path / "out.mtok"
    assert run("set", src, "--add-token", "<tool>", "--add-special-token", "<|x|>", "-o", out) == 0
    err = capsys.readouterr().err
    tree = mtokspec.parse(out.read_bytes())
    findings = mtokspec.validate(tree)
    assert not [f for f in findings if f.severity == "error"], findings
    assert _codes(findings) <= _codes(mtokspec.validate(before))  # nothing new to warn about
    ids = {a.content: a.id for a in tree.added_tokens}
    vocab_ids = {row[1] for row in before.model.vocab}
    holders = vocab_ids | {a.id for a in before.added_tokens}
    n = len(before.model.vocab)
    if n in holders:  # whisper, phi-3: added tokens past the vocabulary hold every id inside it
        assert ids["<tool>"] == max(holders) + 1 and ids["<|x|>"] == max(holders) + 2
        assert len(tree.model.vocab) == n
        assert "past the vocabulary" in err and "mnn-unk-decode" in err
    else:  # the vocabulary's next row, its id the old size
        assert (ids["<tool>"], ids["<|x|>"]) == (n, n + 1)
        assert len(tree.model.vocab) == n + 2 and {row[1] for row in tree.model.vocab} == set(range(n + 2))
        assert f"'<tool>' is id {n}\n" in err
    keys = [row[0] for row in tree.model.vocab]
    assert keys == sorted(keys)
    assert ids["<|x|>"] in tree.header.special
    for semantics in ("hf", "mnn"):
        tok = mtokspec.Tokenizer.from_tree(tree, semantics=semantics)
        raw = tok.encode("a<tool>b", add_special_tokens=False)
        assert ids["<tool>"] in raw and ids["<|x|>"] in tok.encode("<|x|> hi", add_special_tokens=False)
    mnn = mtokspec.Tokenizer.from_tree(tree, semantics="mnn")
    in_vocab = edit.in_vocabulary(tree, ids["<tool>"])
    assert in_vocab == (n not in holders)
    assert mnn.decode([ids["<tool>"]]) == ("<tool>" if in_vocab else mnn.decode([]))


def _bpe(vocab: list[tuple[bytes, int]], **kw) -> t.MtokFile:
    return t.MtokFile(header=t.make_header(**kw), pre_tokenizer=t.ByteLevelPreTokenizer(use_regex=True),
                      model=t.BPEModel(vocab=vocab, merges=[]))


def test_add_token_takes_the_lowest_id_no_token_nor_header_role_holds():
    tree = _bpe([(b"a", 0), (b"b", 1)])
    out, new = edit.add_token(tree, "c")
    assert new == 2 and out.model.vocab == [(b"a", 0), (b"b", 1), (b"c", 2)]
    # a header role naming id 2 (no token yet) keeps its meaning: no id inside the vocabulary is free
    held = _bpe([(b"a", 0), (b"b", 1)], stop=[2])
    out, new = edit.add_token(held, "c")
    assert new == 3 and not edit.in_vocabulary(out, 3) and out.model.vocab == held.model.vocab
    assert [f for f in mtokspec.validate(out) if f.severity == "error"] == []
    # a hole (a broken file's duplicate id) is filled before the end
    holed = _bpe([(b"a", 0), (b"b", 0), (b"d", 3), (b"e", 2)])
    assert edit.add_token(holed, "c")[1] == 1
    # a text the vocabulary holds keeps its id
    assert edit.add_token(tree, "b")[1] == 1


def test_add_token_past_the_vocabulary_when_added_tokens_hold_it():
    tree = replace(_bpe([(b"a", 0), (b"b", 1)]), added_tokens=[t.AddedToken(id=2, special=True, content="<s>"),
                                                                  t.AddedToken(id=7, special=True, content="</s>")])
    out, new = edit.add_token(tree, "<tool>")
    assert new == 8 and out.model.vocab == tree.model.vocab and out.added_tokens[-1].id == 8
    assert [f for f in mtokspec.validate(out) if f.severity == "error"] == []
    for semantics in ("hf", "mnn"):
        assert mtokspec.Tokenizer.from_tree(out, semantics=semantics).encode("a<tool>", add_special_tokens=False) \
            == [0, 8]


MNN_TOK = os.environ.get("MNN_TOK_BIN", "/work/mnnbuild/tok/mnn_tok")


@corpus_folder_param
def test_mnn_itself_encodes_the_added_token_to_its_id(folder, tmp_path):
    if not os.access(MNN_TOK, os.X_OK):
        pytest.skip(f"MNN's driver not found at {MNN_TOK} (MNN_TOK_BIN; ../shared/tools/mnn-reference)")
    out = tmp_path / "out.mtok"
    assert run("set", folder / "mnn.mtok", "--add-token", "<tool>", "-o", out) == 0
    tree = mtokspec.parse(out.read_bytes())
    new = next(a.id for a in tree.added_tokens if a.content == "<tool>")
    lines = "\n".join(json.dumps({"text": x}) for x in ("a<tool>b", "<tool>")) + "\n"
    got = subprocess.run([MNN_TOK, "encode-raw", str(out)], input=lines, capture_output=True, text=True,
                         timeout=60, check=True).stdout.splitlines()
    mine = mtokspec.Tokenizer.from_tree(tree, semantics="mnn")
    assert [json.loads(x)["ids"] for x in got] == [mine.encode("a<tool>b", add_special_tokens=False), [new]]
    decoded = subprocess.run([MNN_TOK, "decode-seq", str(out)], input=json.dumps({"ids": [new]}) + "\n",
                             capture_output=True, text=True, timeout=60, check=True).stdout
    assert json.loads(decoded)["text"] == mine.decode([new])
