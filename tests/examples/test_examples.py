"""The examples run, at small sizes, from the command line (`--plugin FILE`) and from
Python (their `main`), each in a child process as a user would start them."""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def child(args, cwd, **env):
    return subprocess.run(
        args,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", **env),
    )


def test_own_family_from_the_command_line_and_from_python(tmp_path):
    data = str(tmp_path / "digits.npz")
    plugin = str(REPO / "examples" / "own_family.py")
    out = child(
        [
            sys.executable,
            "-m",
            "search.cli",
            "run",
            "--plugin",
            plugin,
            "--space",
            "small-cnn",
            "--budget",
            "20K",
            "--trials",
            "3",
            "--epochs",
            "1",
            "--no-report",
        ],
        tmp_path,
        OWN_FAMILY_DATA=data,
    )
    assert out.returncode == 0, out.stderr
    assert "study 'digits-npz-small-cnn': 3 finished trial(s)" in out.stdout and Path(data).is_file()
    db = sqlite3.connect(tmp_path / "search.db")
    trials = "SELECT count(*) FROM trials WHERE params <= 20000 AND (note IS NULL OR note NOT LIKE 'seed check%')"
    assert db.execute(trials).fetchone() == (3,)  # the search's trials; a seed check or so after them
    code = f"import runpy; runpy.run_path({plugin!r})['main'](storage='api.db', trials=3, epochs=2)"
    out = child([sys.executable, "-c", code], tmp_path, OWN_FAMILY_DATA=data)
    assert out.returncode == 0, out.stderr
    assert "winner: trial" in out.stdout and "test accuracy" in out.stdout


def test_own_training_function_from_the_command_line_and_from_python(tmp_path):
    plugin = str(REPO / "examples" / "own_training.py")
    out = child(
        [
            sys.executable,
            "-m",
            "search.cli",
            "run",
            "--plugin",
            plugin,
            "--space",
            "wave-mlp",
            "--budget",
            "5K",
            "--trials",
            "3",
            "--epochs",
            "3",
            "--no-report",
        ],
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "study 'wave-wave-mlp': 3 finished trial(s)" in out.stdout
    code = f"import runpy; runpy.run_path({plugin!r})['main'](storage='api.db', trials=3, epochs=3)"
    out = child([sys.executable, "-c", code], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "wave-mlp" in out.stdout


def test_the_own_model_howto_example_runs_as_a_script_and_as_a_plugin(tmp_path):
    import re

    text = (REPO / "docs" / "how-to" / "own-model-and-data.md").read_text()
    section = text[text.index("# Your own model and data") :]
    (tmp_path / "my_search.py").write_text(re.search(r"```python\n(.*?)```", section, re.S).group(1))
    out = child([sys.executable, "my_search.py"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "study 'my-data-my-mlp': 12 finished trial(s)" in out.stdout
    command = re.search(r"`(search run --plugin my_search\.py[^`]*)`", section.replace("\n", " ")).group(1).split()
    out = child(
        [sys.executable, "-m", "search.cli", *command[1:], "--study", "cli", "--trials", "3", "--no-report"], tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert "study 'cli': 3 finished trial(s)" in out.stdout
