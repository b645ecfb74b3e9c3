"""The README's Python example runs as written."""

from __future__ import annotations

import os
import re

from tests._support import ROOT


def test_readme_python_blocks_run(monkeypatch):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    monkeypatch.chdir(ROOT)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
    assert os.getcwd() == str(ROOT)
