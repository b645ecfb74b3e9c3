"""Run mypy (strict) on the public modules, as installed: ``python -m tools.typecheck``.

The package maps ``spec/`` and ``generated/`` into ``mtokspec`` (``mtokspec._spec``,
``mtokspec._generated``) only when installed, and mypy cannot follow an editable install's import
hook, so this builds the installed layout in a temporary folder (links to the sources) and checks
it there with the configuration in ``pyproject.toml`` (``[tool.mypy]``).  Exit status: mypy's.
"""

from __future__ import annotations

import os
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
    try:
        from mypy import api
    except ImportError:
        print("mypy is not installed: pip install -e '.[test]'", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mtokspec-typecheck-") as tmp:
        layout(Path(tmp))
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), *(argv or [])])
        finally:
            os.chdir(cwd)
    sys.stdout.write(out.replace(tmp + os.sep, ""))
    sys.stderr.write(err)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
