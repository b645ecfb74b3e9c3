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


MNN_TOK = os.environ.get("MNN_TOK_BIN", str(ROOT.parent / "mnnbuild" / "tok" / "mnn_tok"))  # as ../shared/corpus


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


# --- item 9: paths for validate and lint, a folder for load, chat's --template, diff's caps ------

def test_validate_and_lint_take_a_path_as_load_does(tmp_path):
    for path in (str(EXAMPLE), EXAMPLE):
        assert mtokspec.validate(path) == mtokspec.validate(EXAMPLE.read_bytes())
        assert mtokspec.lint(path) == mtokspec.lint(EXAMPLE.read_bytes()) == mtokspec.lint(mtokspec.load(path).tree)
    with pytest.raises(FileNotFoundError):
        mtokspec.validate(tmp_path / "absent.mtok")
    with pytest.raises(FileNotFoundError):
        mtokspec.lint(str(tmp_path / "absent.mtok"))
    bad = tmp_path / "bad.mtok"
    bad.write_bytes(b"not a tokenizer")
    with pytest.raises(mtokspec.MtokFormatError):
        mtokspec.validate(bad)
    for wrong in (None, 3, [EXAMPLE]):
        with pytest.raises(mtokspec.ArgumentTypeError, match="^tree_or_bytes: .*a path"):
            mtokspec.validate(wrong)
        with pytest.raises(mtokspec.ArgumentTypeError, match="^tree_or_bytes: .*a path"):
            mtokspec.lint(wrong)


def _hf_folder(tmp_path):
    folder = tmp_path / "model"
    (folder / "sub").mkdir(parents=True)
    (folder / "tokenizer.json").write_bytes((ROOT / "examples" / "tiny-bpe" / "tokenizer.json").read_bytes())
    return folder


@pytest.mark.parametrize("entry", ["load", "from_file", "validate", "lint"])
def test_a_folder_is_refused_with_what_to_run(entry, tmp_path):
    folder = _hf_folder(tmp_path)
    call = {"load": mtokspec.load, "from_file": mtokspec.Tokenizer.from_file, "validate": mtokspec.validate,
            "lint": mtokspec.lint}[entry]
    with pytest.raises(mtokspec.PathRefused) as info:
        call(folder)
    message = str(info.value)
    assert isinstance(info.value, mtokspec.Error) and isinstance(info.value, OSError)
    assert f"mtokspec convert {folder} -o tokenizer.mtok" in message
    assert f"mtokspec.convert.from_hf({str(folder)!r})" in message
    # the conversion it names works on that folder
    assert mtokspec.convert.from_hf(folder).tree.model.vocab


def test_a_folder_holding_a_tokenizer_file_names_it(tmp_path, capsys):
    folder = _hf_folder(tmp_path)
    (folder / "tokenizer.mtok").write_bytes(EXAMPLE.read_bytes())
    with pytest.raises(mtokspec.PathRefused, match="give the file inside it .*tokenizer.mtok.*Hugging Face files"):
        mtokspec.load(folder)
    for argv in (["encode", folder, "hi"], ["validate", folder], ["lint", folder], ["inspect", folder],
                 ["chat", folder, "--messages", "-"], ["diff", folder, EXAMPLE], ["set", folder, "--dry-run"]):
        assert run(*argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "a folder, not a tokenizer file" in err and "Traceback" not in err, argv
        assert str(folder / "tokenizer.mtok") in err


def _messages(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps([{"role": "user", "content": "Hi"}]), encoding="utf-8")
    return path


def test_chat_without_a_template_names_the_template_option(tmp_path, capsys):
    bare = tmp_path / "bare.mtok"
    bare.write_bytes(mtokspec.build(replace(mtokspec.parse(EXAMPLE.read_bytes()), chat_template="")))
    messages = _messages(tmp_path)
    for runtime in ("hf", "mnn"):
        assert run("chat", bare, "--messages", messages, "--runtime", runtime) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "no chat template" in err and "--template FILE" in err
        assert "--template" in {a for action in _chat_parser()._actions for a in action.option_strings}
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}[{{ m.content }}]{% endfor %}", encoding="utf-8")
    assert run("chat", bare, "--messages", messages, "--template", template) == 0
    assert capsys.readouterr().out == "[Hi]"


def _chat_parser():
    import argparse

    from mtokspec.cli import chat as chat_cli

    sub = argparse.ArgumentParser().add_subparsers()
    chat_cli.register(sub)
    return sub.choices["chat"]


def test_chat_tokens_with_runtime_mnn_are_the_ids_a_device_feeds_the_model(tmp_path, capsys):
    # a file with a prefix id: MNN's encode(prompt), as Llm::response runs it, puts it first
    prefixed = tmp_path / "prefixed.mtok"
    assert run("set", EXAMPLE, "--prefix", "0", "-o", prefixed) == 0
    messages = _messages(tmp_path)
    capsys.readouterr()
    outs = {}
    for runtime in ("hf", "mnn"):
        assert run("chat", prefixed, "--messages", messages, "--tokens", "--runtime", runtime) == 0
        out = capsys.readouterr().out
        assert out.endswith("\n")
        prompt, _, ids = out[:-1].rpartition("\n")
        outs[runtime] = [int(x) for x in ids.split()]
        tok = mtokspec.Tokenizer.from_file(prefixed, semantics=runtime)
        assert prompt == tok.apply_chat_template(json.loads(messages.read_text()))
    mnn = mtokspec.Tokenizer.from_file(prefixed, semantics="mnn")
    assert outs["mnn"][0] == 0 and outs["mnn"] == mnn.encode(mnn.apply_chat_template(json.loads(messages.read_text())))
    assert outs["hf"][0] != 0  # transformers' apply_chat_template(tokenize=True) adds no special tokens
    helptext = " ".join(_chat_parser().format_help().split())
    assert "without special tokens" in helptext and "the ids a device feeds the model" in helptext
    assert "prefix ids and post-processor included" in helptext


def test_diff_says_how_many_more_where_it_cuts_a_list(corpus, capsys):
    a, b = corpus / "tok" / "roberta-base" / "mnn.mtok", corpus / "tok" / "whisper.tiny" / "mnn.mtok"
    assert run("diff", a, b) == 1
    out = capsys.readouterr().out
    ta, tb = mtokspec.parse(a.read_bytes()), mtokspec.parse(b.read_bytes())
    from mtokspec.format.diff import EXAMPLES, diff

    sections = {d.section: d for d in diff(ta, tb)}
    vocab = sections["vocab"].data
    added = vocab["added_count"]
    assert added > EXAMPLES and f"\n  ... and {added - EXAMPLES:,} more\n" in out
    extra = len(tb.added_tokens) - len([x for x in tb.added_tokens if x.content in {y.content for y in ta.added_tokens}])
    assert extra > EXAMPLES and "added_tokens:\n" in out
    block = out.split("added_tokens:\n")[1].split("\n", EXAMPLES + 1)
    assert all(line.startswith("  + ") for line in block[:EXAMPLES])
    assert block[EXAMPLES].startswith(f"  ... and {extra - EXAMPLES:,} more")
    special = next(line for line in out.splitlines() if line.startswith("  special + "))
    n_special = len(sections["header"].data["special"]["added"])
    assert special.count(", ") == EXAMPLES and special.endswith(f", ... and {n_special - EXAMPLES:,} more")
    # every cut list says it: no list of one kind runs past EXAMPLES without the line
    for d in sections.values():
        kinds: dict[str, int] = {}
        for line in d.changes:
            kinds[line[:1]] = kinds.get(line[:1], 0) + 1
        assert all(n <= EXAMPLES for k, n in kinds.items() if k in "+-~"), d.section


@pytest.mark.parametrize("name", ["\0", "a\0b", "\ud800"])
def test_a_path_no_file_can_have_is_a_refusal_for_every_path_entry(name):
    for call in (mtokspec.load, mtokspec.Tokenizer.from_file, mtokspec.validate, mtokspec.lint):
        with pytest.raises(mtokspec.PathRefused, match="not a file name the system takes"):
            call(name)
