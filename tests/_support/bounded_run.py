"""Run a hostile case in a child process under a memory limit and a generous timeout.

A hang or a blow-up then fails its test (the child is killed at the timeout, or stops with a
MemoryError at the limit) instead of stalling the suite.  ``MTOKSPEC_LIMITS_LOG=path`` appends each
run's wall time and peak memory there (for the closing note of issue 26; never asserted).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from tests._support import ROOT

MEMORY = 1 << 30  # address space of the child: 1 GiB
TIMEOUT = 120.0  # seconds: generous, a hang ends here


@dataclass
class Outcome:
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    peak_mb: float

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8", "replace")


def run_bounded(argv: list[str], *, pure: bool = False, stdin: bytes | None = None, env: dict | None = None,
                memory: int = MEMORY, timeout: float = TIMEOUT, label: str = "") -> Outcome:
    """``python argv...`` (``-m mtokspec ...`` or ``-c ...``) in ROOT, on the pure path when ``pure``;
    fails the calling test when the child outlives ``timeout``."""
    import pytest

    child_env = {**os.environ, "PYTHONHASHSEED": "0", **(env or {})}
    child_env.pop("MTOKSPEC_PURE", None)
    if pure:
        child_env["MTOKSPEC_PURE"] = "1"

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, *argv], cwd=ROOT, env=child_env, preexec_fn=limit,
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    chunks: dict[str, bytes] = {}

    def drain(name, stream):
        chunks[name] = stream.read()

    readers = [threading.Thread(target=drain, args=(n, s)) for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for t in readers:
        t.start()
    if stdin is not None:
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass
    while True:  # wait4, not wait: the child's own peak resident size comes with its status
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout:
            proc.kill()
            os.wait4(proc.pid, 0)
            proc.returncode = -9
            for t in readers:
                t.join()
            pytest.fail(f"{label or argv}: still running after {timeout:.0f} s (killed)")
        time.sleep(0.01)
    seconds = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    for t in readers:
        t.join()
    peak = usage.ru_maxrss / 1024
    log = os.environ.get("MTOKSPEC_LIMITS_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{label or ' '.join(argv)[:80]}\t{'pure' if pure else 'compiled'}\texit {proc.returncode}\t"
                    f"{seconds:.2f} s\t{peak:.0f} MB\n")
    return Outcome(proc.returncode, chunks.get("out", b""), chunks.get("err", b""), seconds, peak)
