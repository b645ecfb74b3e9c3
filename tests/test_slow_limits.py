"""The slow and memory-hungry cases of issue 26, each in a child process under a memory limit and a
generous timeout (a hang fails), on the compiled and the pure path: each ends quickly with the
library's refusal (or its answer), in one line, without a traceback."""

from __future__ import annotations

import dataclasses

import pytest

import mtokspec
from tests._support.bounded_run import run_bounded
from tests._support import ROOT

EXAMPLE = ROOT / "examples" / "tiny.mtok"
PURE = pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])


def cli(*args: str, pure: bool, label: str, **kw):
    result = run_bounded(["-m", "mtokspec", *args], pure=pure, label=label, **kw)
    assert "Traceback" not in result.err, result.err[-2000:]
    return result


def alias_bomb() -> str:
    """829 bytes of YAML naming 9**9 nodes."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


def with_template(tmp_path, template: str):
    tree = mtokspec.parse(EXAMPLE.read_bytes())
    path = tmp_path / "t.mtok"
    path.write_bytes(mtokspec.build(dataclasses.replace(tree, chat_template=template)))
    return path


@PURE
def test_build_refuses_yaml_aliases(tmp_path, pure):
    tree = tmp_path / "bomb.yaml"
    tree.write_text(alias_bomb())
    result = cli("build", str(tree), "-o", str(tmp_path / "out.mtok"), pure=pure, label="build: YAML alias bomb")
    assert result.returncode == 2 and "alias" in result.err
    assert not (tmp_path / "out.mtok").exists()


@PURE
@pytest.mark.parametrize(("name", "text"), [
    ("5000-digit int", '{"format": "txt-tiktoken", "header": {"special_count": %s}}' % ("9" * 5000)),
    ("401-digit float", '{"model": {"type": "UnigramModel", "vocab": [["a", 0, %s]]}}' % ("9" * 401)),
    ("5000-digit int, YAML", "format: txt-tiktoken\nheader: {special_count: %s}\n" % ("9" * 5000)),
])
def test_build_refuses_oversize_numbers(tmp_path, pure, name, text):
    tree = tmp_path / ("t.yaml" if "YAML" in name else "t.json")
    tree.write_text(text)
    result = cli("build", str(tree), "-o", str(tmp_path / "out"), pure=pure, label=f"build: {name}")
    assert result.returncode == 2 and len(result.err.strip().splitlines()) == 1


@PURE
def test_every_command_reads_a_long_decimal_as_a_format_error(tmp_path, pure):
    path = tmp_path / "t.txt"
    path.write_bytes(b"430 1\n" + b"9" * 5000 + b" 0 0\n\n0\n")
    for command in (["inspect"], ["validate"], ["lint"], ["dump"], ["encode", "--runtime", "mnn"], ["upgrade"]):
        args = [*command, str(path)]
        if command == ["encode", "--runtime", "mnn"]:
            args.append("x")
        if command == ["upgrade"]:
            args += ["-o", str(tmp_path / "u.mtok")]
        result = cli(*args, pure=pure, label=f"{command[0]}: a 5000-digit header count")
        assert result.returncode == 2 and "header.counts" in result.err


@PURE
def test_chat_messages_with_an_oversize_integer(tmp_path, pure):
    messages = tmp_path / "m.json"
    messages.write_text('[{"role": "user", "content": "Hi", "n": %s}]' % ("9" * 5000))
    result = cli("chat", str(EXAMPLE), "--messages", str(messages), pure=pure, label="chat: a 5000-digit integer")
    assert result.returncode == 2 and "[0].n" in result.err


@PURE
@pytest.mark.parametrize(("name", "template"), [
    ("strftime_now 200M", "{{ strftime_now('%1200Y' * 166666) }}"),
    ("strftime_now then split", "{{ strftime_now('%1200Y' * 166666).split('0') | length }}"),
    ("strftime_now then encode().hex()", "{{ strftime_now('%1200Y' * 166666).encode('utf-8').hex() }}"),
    ("split of 1M characters", "{{ (' ' * 999999).split(' ') | length }}"),
])
def test_chat_values_bounded_as_made(tmp_path, pure, name, template):
    messages = tmp_path / "m.json"
    messages.write_text('[{"role": "user", "content": "Hi"}]')
    tpl = tmp_path / "t.jinja"
    tpl.write_text(template)
    result = cli("chat", str(EXAMPLE), "--messages", str(messages), "--template", str(tpl), pure=pure,
                 label=f"chat: {name}")
    assert result.returncode == 1 and "limit" in result.err


@PURE
def test_lint_is_linear_in_the_template(tmp_path, pure):
    """250 KB of template (a 280 KB one took 18 s when the lint was quadratic) within the timeout,
    and the renderer's cap (256 KiB) past it."""
    unit = "{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] | trim }}{% endif %}\n"
    path = with_template(tmp_path, unit * (250_000 // len(unit)))
    result = cli("lint", str(path), pure=pure, label="lint: 250 KB template", timeout=60)
    assert result.returncode in (0, 1)
    big = with_template(tmp_path, "a" * (256 * 1024 + 1))
    result = cli("lint", str(big), pure=pure, label="lint: 256 KiB + 1 characters")
    assert result.returncode == 2 and "too long" in result.err


@PURE
@pytest.mark.parametrize(("name", "template"), [
    ("300 nested parentheses", "{{ " + "(" * 300 + "x" + ")" * 300 + " }}"),
    ("+ chain of 5000", "{{ " + " + ".join(["x"] * 5000) + " }}"),
    ("and chain of 5000", "{% if " + " and ".join(["x"] * 5000) + " %}a{% endif %}"),
    ("not chain of 5000", "{% if " + "not " * 5000 + "x %}a{% endif %}"),
    ("filter chain of 5000", "{{ x" + "|trim" * 5000 + " }}"),
])
def test_lint_refuses_deep_templates(tmp_path, pure, name, template):
    path = with_template(tmp_path, template)
    result = cli("lint", str(path), pure=pure, label=f"lint: {name}")
    assert result.returncode == 2 and "deep" in result.err and len(result.err.strip().splitlines()) == 1
