"""Run a script of benchmarks/ in a subprocess (`python -m benchmarks.GROUP.NAME`), as the
benchmark tests do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]  # the repository's root


def run_benchmark(
    name: str, *args, cwd=None, timeout: float = 300, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run the benchmark `name` (a module of the benchmarks package, dotted below it: e.g.
    "search_quality.tune_front") as `python -m benchmarks.<name>` with `args` (each passed
    through str) under this Python, capturing its stdout and stderr as text.

    The environment is os.environ with PYTHONPATH=<the repository> and OMP_NUM_THREADS=1,
    then `env` on top. `cwd` None runs it in the current directory; no check of the
    return code is made: the caller asserts on it."""
    environ = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", f"benchmarks.{name}", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environ,
        cwd=cwd,
        check=False,
    )
