"""Run mypy (strict) on the public modules, as installed: ``python -m tools.typecheck``.

The package maps ``spec/`` and ``generated/`` into ``mtokspec`` (``mtokspec._spec``,
``mtokspec._generated``) only when installed, and mypy cannot follow an editable install's import
hook, so this builds the installed layout in a temporary folder (links to the sources) and checks
it there with the configuration in ``pyproject.toml`` (``[tool.mypy]``).  Exit status: mypy's.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def layout(into: Path) -> Path:
    """The installed package tree under ``into`` (symbolic links to the sources)."""
    pkg = into / "mtokspec"
    pkg.mkdir()
    for entry in (ROOT / "mtokspec").iterdir():
        if entry.name != "__pycache__" and entry.suffix not in (".so", ".pyd"):
            (pkg / entry.name).symlink_to(entry)
    (pkg / "_generated").symlink_to(ROOT / "generated")
    (pkg / "_spec").symlink_to(ROOT / "spec")
    return pkg


def main(argv: list[str] | None = None) -> int:
    """Run mypy in a child process (it raises the recursion limit of the process it runs in)."""
    if importlib.util.find_spec("mypy") is None:
        print("mypy is not installed: pip install -e '.[test]'", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mtokspec-typecheck-") as tmp:
        layout(Path(tmp))
        done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                               *(argv or [])], cwd=tmp, capture_output=True, text=True)
    sys.stdout.write(done.stdout.replace(tmp + os.sep, ""))
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
