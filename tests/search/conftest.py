import os
import subprocess
import sys
from pathlib import Path

import pytest

from search.cli import main

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"


def data_dir_for_mechanics(tmp_path: Path) -> Path:
    """../shared/data when it is there; in a clone with nothing beside it, a folder with a
    generated stand-in for the Shakespeare corpus (random words, about 200 kB, where
    lm-shakespeare looks first). For tests of mechanics (a study runs, fronts are drawn),
    not of what a corpus teaches; the other data sets come from the cache or download."""
    if SHARED_DATA.is_dir():
        return SHARED_DATA
    import random

    words = (
        "thou",
        "art",
        "the",
        "lord",
        "of",
        "my",
        "love",
        "and",
        "all",
        "that",
        "is",
        "fair",
        "in",
        "this",
        "world",
        "doth",
        "call",
        "me",
        "to",
        "thy",
        "side",
        "where",
        "we",
        "shall",
        "speak",
        "kings",
        "crowns",
    )
    rng = random.Random(0)
    folder = tmp_path / "generated-data" / "shakespeare"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "shakespeare.txt").write_text(" ".join(rng.choice(words) for _ in range(40_000)) + "\n")
    return folder.parent


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
    return subprocess.Popen(
        [sys.executable, "-m", "search.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )
