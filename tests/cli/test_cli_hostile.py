"""Hostile input at the command line (issue 33): ``chat`` (both runtimes), ``lint`` and ``set`` end
within the bounds of ``tests/_support/hostile.py`` with exit 0, 1 or 2, one line on stderr for a
refusal, never a traceback; odd arguments (``set - --in-place``, an id of 5,000 digits) are refused
in one line; messages name the right file and are never empty."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
from hypothesis import HealthCheck, assume, given, settings

import mtokspec
from mtokspec.chat.mnn import render_mnn
from mtokspec.chat.render import render_chat_template
from mtokspec.cli import main
from mtokspec.cli._io import OUT_OF_MEMORY, one_line
from mtokspec.errors import ChatTemplateError
from tests._support import ROOT
from tests._support.bounded_run import run_bounded
from tests._support.hostile import (CASE_MEMORY, CASE_SECONDS, MESSAGES, RENDER_SECONDS, bounded,
                                    hostile_templates, issue_templates, outcome)

EXAMPLE = ROOT / "examples" / "tiny.mtok"
ISSUE = issue_templates()
BIG = ISSUE["integer_of_5000_digits"]


def _with_template(template: str) -> bytes:
    tree = mtokspec.parse(EXAMPLE.read_bytes())
    return mtokspec.build(dataclasses.replace(tree, chat_template=template))


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "msgs.json").write_text(json.dumps(MESSAGES))
    (tmp_path / "big.mtok").write_bytes(_with_template(BIG))
    (tmp_path / "big.jinja").write_text(BIG)
    return tmp_path


def _cli(argv: list[str], label: str):
    """``mtokspec argv`` in a child under the hostile bounds: (exit code, stdout, stderr lines)."""
    result = run_bounded(["-m", "mtokspec", *argv], memory=CASE_MEMORY, timeout=CASE_SECONDS * 3, label=label)
    assert "Traceback" not in result.err, result.err
    return result.returncode, result.stdout.decode("utf-8", "replace"), result.err.strip().splitlines()


# --- the issue's cases, each in its own process -----------------------------------------------------------

def test_chat_on_mnn_renders_a_5000_digit_integer_as_mnn_does(files):
    code, out, err = _cli(["chat", str(files / "big.mtok"), "--messages", str(files / "msgs.json"),
                           "--runtime", "mnn"], "chat --runtime mnn, 5000 digits")
    assert (code, out, err) == (0, "-1", [])


def test_chat_on_transformers_refuses_a_5000_digit_integer_in_one_line(files):
    code, _, err = _cli(["chat", str(files / "big.mtok"), "--messages", str(files / "msgs.json")],
                        "chat, 5000 digits")
    assert code == 1 and len(err) == 1 and "number literal Python cannot read" in err[0]


@pytest.mark.parametrize("target", [[], ["--target", "mnn"]])
def test_lint_reports_a_5000_digit_integer_as_a_finding(files, target):
    code, out, err = _cli(["lint", *target, str(files / "big.mtok")], "lint, 5000 digits")
    assert code == 1 and err == []
    assert "transformers cannot parse the template" in out and "[mnn-jinja-lenient-parser]" in out


def test_set_says_transformers_cannot_parse_the_template_it_writes(files):
    code, _, err = _cli(["set", str(EXAMPLE), "--chat-template", str(files / "big.jinja"), "-o",
                         str(files / "out.mtok")], "set --chat-template, 5000 digits")
    assert code == 0 and len(err) == 1
    assert "validate ok; warning: transformers cannot parse the chat template (line 1:" in err[0]
    assert mtokspec.parse((files / "out.mtok").read_bytes()).chat_template == BIG


@pytest.mark.parametrize("role", ["stop", "special", "prefix"])
def test_set_refuses_an_id_of_5000_digits_in_one_line(role):
    code, _, err = _cli(["set", str(EXAMPLE), f"--{role}", "+" + "7" * 5000, "--dry-run"], f"set --{role} +7...")
    assert code == 2 and len(err) == 1 and "an id of 5000 digits is past every token id" in err[0]
    assert len(err[0]) < 300


@pytest.mark.parametrize("name", sorted(set(ISSUE) - {"integer_of_5000_digits"}))
def test_chat_on_mnn_refuses_the_issue_templates_in_one_line(files, name):
    (files / "t.jinja").write_text(ISSUE[name])
    code, _, err = _cli(["chat", str(EXAMPLE), "--messages", str(files / "msgs.json"), "--runtime", "mnn",
                         "--template", str(files / "t.jinja")], f"chat --runtime mnn {name}")
    assert code == 1 and len(err) == 1 and "too large to render" in err[0]


# --- arguments and messages --------------------------------------------------------------------------------

def test_set_refuses_in_place_on_standard_input(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(EXAMPLE.read_bytes())))
    assert main(["set", "-", "--stop", "+0", "--in-place"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--in-place cannot replace standard input" in err[0]
    assert list(tmp_path.iterdir()) == []  # no ./-.bak, no ./-


def test_an_out_of_memory_message_is_never_empty(monkeypatch, capsys):
    assert one_line(MemoryError()) == OUT_OF_MEMORY
    assert one_line(ValueError()) == "ValueError"

    def no_memory(*args, **kwargs):
        raise MemoryError

    # caught by the command (compare catches everything) ...
    monkeypatch.setattr("mtokspec.compare.compare_runtimes", no_memory)
    assert main(["compare", str(EXAMPLE), "--runtime", "mnn", "-q"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"mtokspec: {EXAMPLE}: {OUT_OF_MEMORY}"]
    # ... or by the command line's last guard
    monkeypatch.setattr("mtokspec.divergences.lint.lint", no_memory)
    assert main(["lint", str(EXAMPLE)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"mtokspec lint: {OUT_OF_MEMORY}"]


def test_diff_names_the_file_whose_tokenizer_does_not_load(tmp_path, capsys):
    tree = mtokspec.parse(EXAMPLE.read_bytes())
    vocab = list(tree.model.vocab)
    vocab[0] = (vocab[0][0], 99999)  # MNN's loader refuses it; HF's loads it
    bad = tmp_path / "bad.mtok"
    bad.write_bytes(mtokspec.build(dataclasses.replace(tree, model=dataclasses.replace(tree.model, vocab=vocab))))
    cases = tmp_path / "cases.txt"
    cases.write_text("Hi there\n")
    for a, b in ((EXAMPLE, bad), (bad, EXAMPLE)):
        assert main(["diff", str(a), str(b), "--text", str(cases), "--runtime", "mnn", "-q"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"mtokspec diff: {bad}: model.vocab[0]: id 99999"), err
    missing = tmp_path / "missing.txt"
    assert main(["diff", str(EXAMPLE), str(bad), "--text", str(missing), "--runtime", "mnn", "-q"]) == 2
    assert capsys.readouterr().err.startswith(f"mtokspec diff: {missing}: ")


# --- property: hostile templates embedded in a file ---------------------------------------------------------

def _timed_out(result) -> bool:
    return isinstance(result, ChatTemplateError) and "time limit" in str(result)


# jinja2 compiles the drawn templates to Python; a literal such as ``1[0]`` makes CPython warn at
# compile time (SyntaxWarning), which is what these templates are for
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(hostile_templates())
def test_chat_and_lint_of_a_hostile_template_answer_in_bounds_without_a_traceback(template):
    """Templates whose renders end before the time limit (one that runs out of it takes the
    default 5 s per command: ``test_chat_ends_at_the_time_limit`` has one)."""
    for render in (render_mnn, render_chat_template):
        assume(not _timed_out(outcome("probe", render, template, MESSAGES, timeout_seconds=RENDER_SECONDS)))
    _commands_in_bounds(template)


def _commands_in_bounds(template: str) -> None:
    import tempfile
    from contextlib import redirect_stderr, redirect_stdout
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="mtokspec-hostile-") as tmp:
        f, m = Path(tmp) / "t.mtok", Path(tmp) / "m.json"
        f.write_bytes(_with_template(template))
        m.write_text(json.dumps(MESSAGES))
        for argv in (["chat", str(f), "--messages", str(m)], ["chat", str(f), "--messages", str(m), "--runtime", "mnn"],
                     ["lint", str(f)], ["lint", "--target", "mnn", "--json", str(f)]):
            out, err = io.StringIO(), io.StringIO()
            with bounded(" ".join(argv[:1] + argv[4:])), redirect_stdout(out), redirect_stderr(err):
                code = main(argv)
            message = err.getvalue()
            assert code in (0, 1, 2) and "Traceback" not in message, (code, message)
            if argv[0] == "chat" and code:
                assert message.count("\n") == 1, message


def test_chat_ends_at_the_time_limit():
    _commands_in_bounds("{% for a in range(999999) %}{% for b in range(999999) %}{% endfor %}{% endfor %}")
