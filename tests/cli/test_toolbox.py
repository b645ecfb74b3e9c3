"""The format author's toolbox: the header by role, `set`, `diff`, and files checked before written."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest
from tests._support import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.cli import main
from mtokspec.cli.cases import CasesError, parse_cases
from mtokspec.format import tree as t
from mtokspec.format.diff import diff
from mtokspec.format.token_names import tokens_by_id
from mtokspec.testing import strategies as mst

EXAMPLE = ROOT / "examples" / "tiny.mtok"
TINY = mtokspec.parse(EXAMPLE.read_bytes())  # special [0, 2, 1], stop [2]; 0 <|endoftext|>, 1 <|im_start|>, 2 <|im_end|>


def run(*argv: object) -> int:
    return main([str(a) for a in argv])


# --- the header by role ------------------------------------------------------------------------

def test_header_holds_roles_and_the_dump_says_them():
    assert (TINY.header.special, TINY.header.stop, TINY.header.prefix) == ([0, 2, 1], [2], [])
    assert mtokspec.to_dict(TINY)["header"] == {"special": [0, 2, 1], "stop": [2], "prefix": [],
                                                "trailing_space": False}


def test_old_flat_dumps_still_build():
    doc = mtokspec.to_dict(TINY)
    doc["header"] = {"special_count": 3, "stop_count": 1, "prefix_count": 0, "ids": [0, 2, 1, 2],
                     "trailing_space": False}
    assert mtokspec.build(mtokspec.from_dict(doc)) == EXAMPLE.read_bytes()


@pytest.mark.parametrize(("header", "message", "path"), [
    ({"special_count": 2, "ids": [0]}, "do not count its 1 ids", "header.ids"),
    ({"special_count": 1, "ids": [0], "special": [0]}, "not both", "header"),
    ({"special_count": -1, "ids": []}, "must not be negative", "header.special_count"),
    ({"stop_count": "1", "ids": [0]}, "expected an integer", "header.stop_count"),
    ({"special_count": 1, "ids": ["x"]}, "expected an integer", "header.ids[0]"),
])
def test_bad_flat_headers_are_refused_naming_the_field(header, message, path):
    with pytest.raises(mtokspec.MtokFormatError, match=message) as err:
        mtokspec.from_dict({"header": header})
    assert err.value.path == path


def test_a_count_line_that_does_not_count_the_ids_is_refused():
    data = EXAMPLE.read_bytes().replace(b"430 4\n3 1 0\n", b"430 4\n3 1 1\n", 1)
    with pytest.raises(mtokspec.MtokFormatError, match="line 2 counts 5 ids") as err:
        mtokspec.parse(data)
    assert err.value.path == "header.ids" and err.value.offset == len(b"430 4\n3 1 1\n")


def test_inspect_lists_each_role_with_its_tokens(capsys):
    assert run("inspect", EXAMPLE) == 0
    out = capsys.readouterr().out
    assert "special ids                3  0 '<|endoftext|>', 2 '<|im_end|>', 1 '<|im_start|>'" in out
    assert "stop ids                   1  2 '<|im_end|>'" in out
    assert "prefix ids" not in out  # an empty role is not listed
    assert run("inspect", EXAMPLE, "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["header"]["stop"] == [{"id": 2, "token": "<|im_end|>"}]
    assert doc["header"]["prefix"] == []


def test_inspect_of_a_corpus_legacy_file_caps_long_roles(corpus, capsys):
    path = corpus / "tok" / "whisper.tiny" / "mnn.txt"
    assert run("inspect", path) == 0
    out = capsys.readouterr().out
    assert "special ids          1715  50257 '<|endoftext|>', 50258 '<|startoftranscript|>'" in out
    assert ", ... 1703 more" in out
    assert run("inspect", path, "--all-ids") == 0
    assert "more" not in capsys.readouterr().out.split("special ids")[1]


def test_validate_reports_no_stop_id_and_an_eos_that_is_no_token():
    tree = replace(TINY, header=t.make_header([0, 2, 1]), eos_token="<nope>")
    found = {(f.code, f.path) for f in mtokspec.validate(tree)}
    assert {("header-no-stop", "header.stop"), ("eos-not-token", "eos_token")} <= found
    assert not {f.code for f in mtokspec.validate(TINY)} & {"header-no-stop", "eos-not-token"}


# --- set ----------------------------------------------------------------------------------------

def test_set_a_stop_id_by_text_then_diff_shows_exactly_that(tmp_path, capsys):
    out = tmp_path / "out.mtok"
    assert run("set", EXAMPLE, "--stop", "+<|endoftext|>", "-o", out) == 0
    err = capsys.readouterr().err
    assert err.strip() == f"{out}: 5,770 bytes; changed: header; validate ok"
    after = mtokspec.parse(out.read_bytes())
    assert after == replace(TINY, header=replace(TINY.header, stop=[2, 0]))
    assert run("diff", EXAMPLE, out) == 1
    assert capsys.readouterr().out == f"--- {EXAMPLE}\n+++ {out}\nheader:\n  stop + 0 '<|endoftext|>'\n"
    assert run("diff", EXAMPLE, out, "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["same"] is False and list(doc["sections"]) == ["header"]
    assert doc["sections"]["header"]["stop"]["added"] == [{"id": 0, "token": "<|endoftext|>"}]


def test_set_of_a_stop_id_never_changes_the_prefix(tmp_path):
    src = tmp_path / "src.mtok"
    src.write_bytes(mtokspec.build(replace(TINY, header=t.make_header([0, 2, 1], [2], [1]))))
    out = tmp_path / "out.mtok"
    assert run("set", src, "--stop", "1", "--stop=-2", "-o", out) == 0
    h = mtokspec.parse(out.read_bytes()).header
    assert (h.special, h.stop, h.prefix) == ([0, 2, 1], [1], [1])


@pytest.mark.parametrize(("argv", "message"), [
    (["--stop", "+<|nope|>"], "no token is '<|nope|>'"),
    (["--stop", "999"], "id 999 is not a token"),
    (["--prefix=-1"], "prefix does not hold id 1"),
    (["--eos", "<|nope|>"], "eos_token '<|nope|>' is not a token"),
    (["--flag", "clean_up_tokenization_spaces=yes"], "expected NAME=on or NAME=off"),
    (["--flag", "no_such_flag=on"], "unknown flag 'no_such_flag'"),
    (["--add-token", "<|im_end|>"], "already an added token"),
])
def test_set_refuses_what_it_cannot_do_and_writes_nothing(tmp_path, capsys, argv, message):
    out = tmp_path / "out.mtok"
    assert run("set", EXAMPLE, *argv, "-o", out) == 2
    assert message in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


def test_set_refuses_an_error_level_result_unless_forced(tmp_path, capsys):
    src = tmp_path / "src.mtok"
    vocab = list(TINY.model.vocab)
    vocab[0], vocab[1] = vocab[1], vocab[0]
    src.write_bytes(mtokspec.build(replace(TINY, model=replace(TINY.model, vocab=vocab))))
    out = tmp_path / "out.mtok"
    assert run("set", src, "--stop", "0", "-o", out) == 2
    assert "not written: 1 error-level finding(s) (vocab-order); --force" in capsys.readouterr().err
    assert not out.exists()
    assert run("set", src, "--stop", "0", "-o", out, "--force") == 0 and out.exists()


def test_set_dry_run_shows_the_diff_and_writes_nothing(tmp_path, capsys):
    copy = tmp_path / "tiny.mtok"
    copy.write_bytes(EXAMPLE.read_bytes())
    assert run("set", copy, "--eos", "<|endoftext|>", "--flag", "clean_up_tokenization_spaces=on", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "eos_token:\n  '<|im_end|>' -> '<|endoftext|>'\n" in out
    assert "flags:\n  0x00 (none set) -> 0x01 (clean_up_tokenization_spaces)\n" in out
    assert os.listdir(tmp_path) == ["tiny.mtok"] and copy.read_bytes() == EXAMPLE.read_bytes()


def test_set_in_place_keeps_a_backup(tmp_path, capsys):
    copy = tmp_path / "tiny.mtok"
    copy.write_bytes(EXAMPLE.read_bytes())
    assert run("set", copy, "--prefix", "1", "--in-place") == 0
    assert (tmp_path / "tiny.mtok.bak").read_bytes() == EXAMPLE.read_bytes()
    assert mtokspec.parse(copy.read_bytes()).header.prefix == [1]
    assert "(backup " in capsys.readouterr().err


def test_set_adds_a_token_in_the_sorted_vocabulary_and_it_encodes_whole(tmp_path):
    out = tmp_path / "out.mtok"
    assert run("set", EXAMPLE, "--add-special-token", "<tool>", "--add-token", "zz top", "-o", out) == 0
    tree = mtokspec.parse(out.read_bytes())
    tokens = [row[0] for row in tree.model.vocab]
    assert tokens == sorted(tokens) and len(tokens) == len(TINY.model.vocab) + 2
    ids = {a.content: a.id for a in tree.added_tokens}
    assert ids["zz top"] == 420 and ids["<tool>"] == 421  # the next free ids, plain tokens first
    assert b"zz\xc4\xa0top" in tokens  # the byte-level spelling of the space
    assert tree.header.special == [0, 2, 1, 421]
    assert [f for f in mtokspec.validate(tree) if f.severity != "info"] == []
    for semantics in ("hf", "mnn"):
        tok = mtokspec.Tokenizer.from_tree(tree, semantics=semantics)
        assert 421 in tok.encode("a<tool>b", add_special_tokens=False)


def test_set_chat_template_from_a_file_and_from_a_config(tmp_path, capsys):
    template = tmp_path / "t.jinja"
    template.write_text("{{ messages[0]['content'] }}", encoding="utf-8")
    out = tmp_path / "out.mtok"
    assert run("set", EXAMPLE, "--chat-template", template, "-o", out) == 0
    assert mtokspec.parse(out.read_bytes()).chat_template == "{{ messages[0]['content'] }}"
    config = ROOT / "examples" / "tiny-bpe" / "tokenizer_config.json"
    assert run("set", out, "--chat-template-from", config, "--in-place") == 0
    assert mtokspec.parse(out.read_bytes()).chat_template == json.loads(config.read_text())["chat_template"]
    capsys.readouterr()
    assert run("diff", out.with_suffix(".mtok.bak"), out) == 1
    assert capsys.readouterr().out.splitlines()[3].startswith("  --- a")  # a unified diff of the template


def test_set_the_header_of_a_corpus_file(corpus, tmp_path, capsys):
    src = corpus / "tok" / "phi-3-mini" / "mnn.mtok"
    out = tmp_path / "out.mtok"
    assert run("set", src, "--stop", "+<|end|>", "-o", out) == 0
    before, after = mtokspec.parse(src.read_bytes()), mtokspec.parse(out.read_bytes())
    [section] = diff(before, after)
    assert section.section == "header" and section.changes == ["stop + 32007 '<|end|>'"]
    assert after.header.stop == [32000, 32007] and after.header.prefix == before.header.prefix


@st.composite
def _trees_and_edits(draw):
    tree = draw(mst.mtok_files())
    ids = sorted({row[1] for row in tree.model.vocab} | {a.id for a in tree.added_tokens})
    edits = []
    if ids:
        edits = draw(st.lists(st.tuples(st.sampled_from(t.HEADER_ROLES), st.sampled_from(ids)), max_size=5))
    return tree, edits


@settings(max_examples=40)
@given(_trees_and_edits())
def test_property_set_then_parse_gives_the_edited_tree(tmp_path_factory, case):
    tree, edits = case
    src = tmp_path_factory.mktemp("set") / "src.mtok"
    src.write_bytes(mtokspec.build(tree))
    expected = {role: list(getattr(tree.header, role)) for role in t.HEADER_ROLES}
    argv: list[object] = []
    for role, i in edits:
        if i in expected[role]:
            expected[role] = [x for x in expected[role] if x != i]
            argv.append(f"--{role}=-{i}")
        else:
            expected[role].append(i)
            argv.append(f"--{role}=+{i}")
    out = src.with_name("out.mtok")
    assert run("set", src, *argv, "-o", out, "--force") == 0
    trailing = tree.header.trailing_space and any(expected.values())
    assert mtokspec.parse(out.read_bytes()) == replace(tree, header=replace(tree.header, **expected,
                                                                            trailing_space=trailing))


# --- diff ---------------------------------------------------------------------------------------

def test_diff_of_a_file_with_itself(capsys):
    assert run("diff", EXAMPLE, EXAMPLE) == 0
    assert capsys.readouterr().out == f"{EXAMPLE} and {EXAMPLE}: the same tokenizer\n"
    assert run("diff", EXAMPLE, EXAMPLE, "--json") == 0
    assert json.loads(capsys.readouterr().out) == {"same": True, "sections": {}}


def test_diff_of_an_unreadable_file(tmp_path, capsys):
    bad = tmp_path / "bad.mtok"
    bad.write_bytes(b"not a tokenizer")
    assert run("diff", EXAMPLE, bad) == 2
    assert "not an MNN tokenizer file" in capsys.readouterr().err


def test_diff_sections_by_meaning():
    vocab = list(TINY.model.vocab)
    renumbered = [(tok, {3: 4, 4: 3}.get(i, i)) for tok, i in vocab]
    other = replace(TINY, model=replace(TINY.model, vocab=renumbered, merges=TINY.model.merges[1:]),
                    decoder=t.FuseDecoder(), bos_token=None, post_processor=None)
    sections = {d.section: d for d in diff(TINY, other)}
    assert list(sections) == ["vocab", "merges", "decoder", "bos_token", "post_processor"]
    assert sections["vocab"].changes[0] == "420 -> 420 tokens: 0 added, 0 removed, 2 renumbered"
    assert sections["decoder"].changes == ["ByteLevel -> Fuse"]
    assert sections["bos_token"].changes == ["'' -> absent"]
    # the renumbering also changes what the merges name, by token pair
    assert sections["merges"].data["removed_count"] >= 1


def test_diff_of_corpus_files_and_a_behavioural_diff(corpus, tmp_path, capsys):
    src = corpus / "tok" / "roberta-base" / "mnn.mtok"
    out = tmp_path / "out.mtok"
    assert run("set", src, "--add-token", "hello world", "-o", out) == 0
    cases = tmp_path / "cases.txt"
    cases.write_text("say hello world\nnothing here\n", encoding="utf-8")
    capsys.readouterr()
    assert run("diff", src, out, "--text", cases, "--text", corpus / "text" / "en.json") == 1
    text = capsys.readouterr().out
    assert "added_tokens:\n  + 50265 'hello world' (plain)\n" in text
    assert "behaviour (hf semantics): 1 of 302 cases differ\n  case 0: 'say hello world'\n" in text
    assert text.endswith(f"mnn.mtok: 28357:'say' [20760:'Ġhello'] 232:'Ġworld'\n"
                         f"    {out}: 28357:'say' [1437:'Ġ'] 50265:'hello world'\n")
    assert run("diff", src, out, "--text", cases, "--runtime", "mnn", "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["behaviour"]["differing"] == 1 and doc["behaviour"]["differences"][0]["position"] == 1
    assert doc["behaviour"]["differences"][0]["ids_b"] == [28357, 1437, 50265]


@pytest.mark.parametrize(("data", "cases"), [
    (b'["a", "b\\nc"]', ["a", "b\nc"]),
    (b'"a"\n{"text": "b\\nc"}\n', ["a", "b\nc"]),
    (b"first line\r\n\nthird\n", ["first line", "", "third"]),
    (b'"quoted" and more\n', ['"quoted" and more']),
])
def test_cases_files_in_three_formats(data, cases):
    assert parse_cases(data) == cases


@pytest.mark.parametrize("data", [b"[1, 2]", b"[broken", b"\xff"])
def test_bad_cases_files_are_refused(data):
    with pytest.raises(CasesError):
        parse_cases(data)


# --- files checked before they are written ----------------------------------------------------

def test_the_whisper_like_upgrade_is_refused_with_the_finding_or_forced(corpus, tmp_path, capsys):
    src = corpus / "tok" / "whisper.tiny" / "mnn.txt"
    out = tmp_path / "w.mtok"
    assert run("upgrade", src, "-o", out) == 2
    err = capsys.readouterr().err
    assert "error: model.vocab[1514].id: id 51864 >= vocab size 51864" in err and "[vocab-id-range]" in err
    assert "not written: 1 error-level finding(s) (vocab-id-range); --force writes it anyway" in err
    assert os.listdir(tmp_path) == []
    assert run("upgrade", src, "-o", out, "--force") == 0
    assert err_line(capsys) == f"{out}: 4 loss(es); 1 error(s) written with --force (vocab-id-range)"
    assert out.exists()


def err_line(capsys) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize(("doc", "message"), [
    ({}, "not a tokenizer.json: no 'model' object; got an empty object"),
    ({"tokenizer_class": "X", "chat_template": ""}, "got an object with 'tokenizer_class', 'chat_template' "
                                                    "(a tokenizer_config.json?)"),
    ([], "not a tokenizer.json: a list, not an object"),
])
def test_convert_refuses_what_is_not_a_tokenizer_json(tmp_path, capsys, doc, message):
    (tmp_path / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    assert run("convert", tmp_path, "-o", tmp_path / "out.mtok") == 2
    assert message in capsys.readouterr().err
    assert os.listdir(tmp_path) == ["tokenizer.json"]


def test_convert_ends_with_a_verdict(tmp_path, capsys):
    out = tmp_path / "out.mtok"
    assert run("convert", ROOT / "examples" / "tiny-bpe", "-o", out) == 0
    assert err_line(capsys) == f"{out}: 1 loss(es); validate ok"


# --- the strategies -----------------------------------------------------------------------------

@settings(max_examples=60)
@given(mst.mtok_files())
def test_valid_trees_load_in_both_runtimes(tree):
    assert [f for f in mtokspec.validate(tree) if f.severity == "error"] == []
    for semantics in ("hf", "mnn"):
        mtokspec.Tokenizer.from_tree(tree, semantics=semantics)


@settings(max_examples=40)
@given(mst.runnable())
def test_runnable_trees_encode_their_text_in_both_runtimes(case):
    tree, text = case
    known = set(tokens_by_id(tree))
    for semantics in ("hf", "mnn"):
        tok = mtokspec.Tokenizer.from_tree(tree, semantics=semantics)
        ids = tok.encode(text, add_special_tokens=False)
        assert set(ids) <= known and isinstance(tok.decode(ids), str)


# --- refusals are mtokspec.Error ----------------------------------------------------------------

def test_refusals_of_the_api_are_mtokspec_errors(capsys):
    with pytest.raises(mtokspec.Error, match="unknown lint target 'other'"):
        mtokspec.lint(TINY, target="other")
    # a wrong Python type: a TypeError naming the parameter, and an mtokspec.Error
    with pytest.raises(mtokspec.ArgumentTypeError, match="text: encode expects str, got bytes"):
        mtokspec.Tokenizer.from_tree(TINY).encode(b"bytes")
    assert issubclass(mtokspec.ArgumentTypeError, TypeError)
    for name in ("TokenizerError", "UndefinedInMnn", "ConversionError", "ChatTemplateError", "EditError",
                 "CasesError", "ArgumentTypeError"):
        assert issubclass(getattr(mtokspec, name), mtokspec.Error)
    assert mtokspec.convert.from_hf and mtokspec.strategies.mtok_files and mtokspec.lint


@pytest.mark.parametrize("runtime", ["hf", "mnn"])
def test_cli_decode_refuses_ids_that_are_not_tokens(capsys, runtime):
    assert run("decode", EXAMPLE, "42", "99999", "--runtime", runtime) == 2
    assert "not a token of this file: id 99999" in capsys.readouterr().err
    assert run("decode", EXAMPLE, "42", "99999", "--runtime", runtime, "--allow-unknown") == 0
    assert capsys.readouterr().out == "H\n"


# --- reports that scale -----------------------------------------------------------------------

@pytest.fixture
def misread(tmp_path):
    """examples/tiny.mtok with the post-processor program MNN misreads: every case differs."""
    tree = replace(TINY, post_processor=t.PostProcessorProgram(
        [t.SpecialTokenOp(0), t.SpecialTokenOp(0), t.SequenceOp(), t.SpecialTokenOp(0)]))
    path = tmp_path / "misread.mtok"
    path.write_bytes(mtokspec.build(tree))
    return path


def test_compare_reports_every_mismatch_with_tables_per_set_and_rule(tmp_path, capsys, misread):
    lines = tmp_path / "lines.txt"
    lines.write_text("".join(f"case {i}\n" for i in range(30)), encoding="utf-8")
    jsonl = tmp_path / "more.jsonl"
    jsonl.write_text('"Hi"\n{"text": "there"}\n', encoding="utf-8")
    assert run("compare", misread, "--runtime", "mnn", "--text", lines, "--text", jsonl, "--show", "25") == 1
    out = capsys.readouterr().out
    assert out.startswith("0/32 texts encode identically (0.00%) with special tokens; 32 differences explained, "
                          "0 unexplained\n  text set      cases     same  rate\n"
                          "  lines.txt        30        0  0.00%\n  more.jsonl        2        0  0.00%\n"
                          "  rule                cases\n  mnn-post-misread       32\n")
    assert out.count("\n- text ") == 25 and "... and 7 more (--show N, --all, --json, --jsonl)\n" in out
    # then every output a device produces, tallied with its causes
    assert out.endswith("): encode 0/32, raw 32/32, seq 32/32, stream 32/32, chat 4/4\n  encode: mnn-post-misread (32)\n")
    assert "per output (MNN against the file's own HF semantics" in out
    assert "- text 31 (more.jsonl) 'there': first difference at token 0\n" not in out
    assert run("compare", misread, "--runtime", "mnn", "--text", lines, "--text", jsonl, "--all") == 1
    out = capsys.readouterr().out
    assert out.count("\n- text ") == 32 and "- text 31 (more.jsonl) 'there': first difference at token 0\n" in out
    assert "more (--show" not in out
    assert run("compare", misread, "--runtime", "mnn", "--text", lines, "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["mismatches"]) == doc["differing"] == 30 and doc["rules"] == {"mnn-post-misread": 30}
    assert doc["sets"] == {"lines.txt": {"cases": 30, "same": 0}}
    assert run("compare", misread, "--runtime", "mnn", "--text", jsonl, "--jsonl") == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[0]["summary"]["differing"] == 2 and [r["text"] for r in rows[1:]] == ["Hi", "there"]
    # special tokens by their text in the window, not None
    assert rows[1]["window"][1].startswith("[0:'<|endoftext|>'] 0:'<|endoftext|>'")


def test_validate_and_lint_of_several_files_end_with_one_table(corpus, capsys, misread):
    files = [EXAMPLE, misread, corpus / "tok" / "roberta-base" / "mnn.mtok"]
    assert run("validate", *files) == 1
    out = capsys.readouterr().out
    w = max(len(str(f)) for f in files)
    assert out.endswith(f"\n{'file':<{w}}  errors  warnings  codes\n"
                        f"{str(EXAMPLE):<{w}}       0         0  ok\n"
                        f"{str(misread):<{w}}       0         1  post-misread-by-mnn\n"
                        f"{str(files[2]):<{w}}       0         2  eos-not-token, header-no-stop\n")
    assert run("lint", *files[:2]) == 1
    table = capsys.readouterr().out.split("\n\n")[-1]
    # the misread program is the error; ByteLevel's GPT-2 split on MNN's folded classes a warning
    assert table.splitlines()[2].split()[1:] == ["1", "1", "mnn-post-misread,", "mnn-regex-engine"]
    assert run("validate", *files, "--json") == 1
    assert "codes" not in capsys.readouterr().out  # JSON: one object per file, no table


def test_dump_follows_the_output_suffix_and_build_reads_it_back(tmp_path, capsys):
    out = tmp_path / "tree.json"
    assert run("dump", EXAMPLE, "-o", out) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))  # JSON, as the suffix says
    assert doc["header"]["stop"] == [2]
    assert run("build", out, "-o", tmp_path / "back.mtok") == 0
    assert (tmp_path / "back.mtok").read_bytes() == EXAMPLE.read_bytes()
    assert capsys.readouterr().err.strip() == f"{tmp_path / 'back.mtok'}: 5,768 bytes; validate ok"


def test_progress_shows_only_on_a_terminal():
    import io

    from mtokspec.cli.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream, quiet, shown in ((Terminal(), False, True), (Terminal(), True, False), (io.StringIO(), False, False)):
        with Progress("work", 10, quiet=quiet, stream=stream) as p:
            p.stage("reading")
            p.update(3)
        text = stream.getvalue()
        assert ("work: reading..." in text and "work: 3/10" in text and text.endswith("\r\x1b[K")) == shown
        assert bool(text) == shown


# --- start-up: what the commands import ---------------------------------------------------------

@pytest.mark.parametrize(("argv", "absent"), [
    (["--help"], ["mtokspec._generated.codec", "mtokspec._generated.tree", "yaml", "regex", "jinja2",
                  "mtokspec.convert", "mtokspec.runtime.hf"]),
    (["inspect", str(EXAMPLE)], ["yaml", "regex", "jinja2", "mtokspec.convert", "mtokspec.runtime.hf",
                                 "mtokspec.runtime.mnn", "mtokspec.divergences"]),
])
def test_the_cli_imports_only_what_a_command_needs(argv, absent):
    import subprocess
    import sys

    code = ("import sys\nfrom mtokspec.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('mtokspec', 'yaml', 'regex', "
            "'jinja2'))))")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split("\n")[-2].split())
    assert not loaded & set(absent), sorted(loaded & set(absent))


def test_compare_of_a_corpus_file(corpus, capsys):
    path = corpus / "tok" / "whisper.tiny" / "mnn.mtok"
    assert run("compare", path, "--runtime", "mnn", "--text", corpus / "text" / "edge.json", "--show", "1") == 1
    assert capsys.readouterr().out == (
        "0/46 texts encode identically (0.00%) with special tokens; 46 differences explained, 0 unexplained\n"
        "  rule                cases\n  mnn-post-misread       46\n"
        "- text 0 'ied 4 ½ months': first difference at token 0\n    because: mnn-post-misread\n"
        "    MNN:            [1091:'ied'] 1017:'Ġ4' 32653:'ĠÂ½' ...\n"
        "    HF (this file): [50258:'<|startoftranscript|>'] 50363:'<|notimestamps|>' 1091:'ied' ...\n"
        "... and 45 more (--show N, --all, --json, --jsonl)\n"
        "per output (MNN against the file's own HF semantics (mtokspec; no tokenizer.json to check against)): "
        "encode 0/46, raw 46/46, seq 46/46, stream 46/46\n  encode: mnn-post-misread (46)\n")
