"""The README's Python examples run as written, and its marked console examples print what they show."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

from tests._support import ROOT


def test_readme_python_blocks_run(monkeypatch):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    monkeypatch.chdir(ROOT)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
    assert os.getcwd() == str(ROOT)


def _console_blocks(text: str) -> list[list[tuple[str, str]]]:
    """The console blocks marked ``<!-- README test: run -->``: (command, expected output) pairs."""
    blocks = []
    for body in re.findall(r"<!-- README test: run -->\n```console\n(.*?)```", text, re.S):
        steps: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
        blocks.append([(cmd, "".join(out + "\n" for out in lines)) for cmd, lines in steps])
    return blocks


def test_readme_console_examples_print_what_they_show(tmp_path):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = _console_blocks(text)
    assert blocks
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    prelude = f'mtokspec() {{ {shlex.quote(sys.executable)} -m mtokspec "$@"; }}\n'
    for block in blocks:
        for command, expected in block:
            done = subprocess.run(["bash", "-c", prelude + command + " 2>&1"], cwd=tmp_path,
                                  capture_output=True, text=True, env={**os.environ, "LC_ALL": "C.UTF-8"})
            assert done.stdout == expected, command
