import os
import subprocess
import sys
from pathlib import Path

import pytest

from search.cli import main

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys):
    """Run `search ...` in-process in a temp dir; returns (exit code, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SEARCH_STORAGE", raising=False)

    def run(*args: str):
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def run_subprocess(args, cwd, env_extra=None, **kw):
    """`search ARGS` in a child process. Each child gets one torch thread (unless the caller
    says otherwise): tests start several at once on a 2-core machine, and oversubscribed
    torch threads slow every process by orders of magnitude."""
    env = dict(os.environ, PYTHONPATH=str(REPO), **{"OMP_NUM_THREADS": "1", **(env_extra or {})})
    return subprocess.Popen([sys.executable, "-m", "search.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
