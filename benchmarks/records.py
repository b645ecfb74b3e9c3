"""The recorded runs the README's tables are generated from (``benchmarks/records/*.json``).

A benchmark run with ``--record`` merges its numbers into ``speed.json`` under its own keys, with
the date, the commit, the path it measured and the machine; ``python -m tools.readme_tables``
writes the README's tables from the records.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from datetime import date
from pathlib import Path

RECORDS = Path(__file__).resolve().parent / "records"
SPEED = RECORDS / "speed.json"


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=RECORDS.parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def record(section: str, values: dict, path: Path = SPEED) -> None:
    """Merge ``values`` (tokenizer -> column -> number) into the record under ``section``."""
    from mtokspec import speedups

    doc = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    doc.setdefault("sections", {})[section] = {
        "date": date.today().isoformat(), "commit": _commit(),
        "path": "compiled" if speedups.enabled() else "pure",
        "machine": f"{os.cpu_count()} cores, Python {platform.python_version()}",
        "values": values,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
