"""Run a writer in a child process and ``kill -9`` it in the middle of a write.

The child replaces :func:`os.fdopen` (which :func:`budgetdag_core.persist.
atomic_write` opens its temporary file with) by one whose files write half of
their first chunk, flush it to disk, tell the parent on stdout and wait on
stdin: the parent kills the child at that exact point, with part of the new
file on disk. No sleep, no timing: the child waits until it is killed.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import os, sys

_fdopen = os.fdopen


class _Cut:
    # A file that stops, killed, in the middle of its first write.
    def __init__(self, fh):
        self._fh = fh

    def write(self, data):
        self._fh.write(data[: max(1, len(data) // 2)])
        self._fh.flush()
        os.fsync(self._fh.fileno())
        sys.__stdout__.write("cut\n")
        sys.__stdout__.flush()
        sys.stdin.read()  # until the parent kills this process
        raise SystemExit("not killed")

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._fh.__exit__(*exc)


def _fdopen_cut(fd, mode="r", *args, **kwargs):
    fh = _fdopen(fd, mode, *args, **kwargs)
    return _Cut(fh) if "w" in mode else fh


os.fdopen = _fdopen_cut
sys.argv = sys.argv[1:]
exec(compile(sys.argv[0], "<writer>", "exec"))
"""


def kill_during_write(code: str, folder: Path, timeout: float = 300) -> list[Path]:
    """Run ``code`` (Python) in a child, kill it with SIGKILL in the middle of
    its first write through ``atomic_write``; return the partial temporary
    files it left in ``folder`` (non-empty: the kill was mid-write).

    Raises AssertionError when the child ends without reaching a write.
    """
    err = folder / "child-stderr.txt"
    # No compiling grandchild (BUDGETDAG_WARM_UP=0): SIGKILL would orphan it.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BUDGETDAG_WARM_UP": "0"}
    with err.open("wb") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, code],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    try:
        ready, _, _ = select.select([child.stdout], [], [], timeout)
        line = child.stdout.readline() if ready else b""
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdin.close()
        child.stdout.close()
    assert line == b"cut\n", err.read_text()
    assert child.returncode == -signal.SIGKILL
    return [p for p in folder.glob(".*.tmp") if p.stat().st_size > 0]
