"""A family and a task from a plugin file, searched from the command line (issue 60):
`--plugin`, `$SEARCH_PLUGINS`, `search spaces/tasks` saying where each comes from,
compare with intervals, `search model` of the winner, and every bad-input row."""

import json
import sqlite3
import warnings

import pytest

from tests.search.cli.test_cli import db_dump
from tests.search.plugins.conftest import forget_plugins
from tests.search.plugins.sources import BAD, FLAKY, GOOD, LOOP, write

RUN = ("run", "--space", "tiny-mlp", "--budget", "2K", "--trials", "6", "--no-report")


@pytest.fixture
def good(tmp_path):
    return str(write(tmp_path, "good_plugin", GOOD))


def test_a_plugin_family_and_task_are_listed_with_their_origin(cli, good):
    code, out, err = cli("spaces", "--plugin", good)
    assert code == 0, err
    line = next(row for row in out.splitlines() if row.startswith("tiny-mlp"))
    assert line.endswith(f"from: plugin {good}") and "default task tiny-data" in line
    assert "hourglass" in out and "from: built-in" in out
    code, out, err = cli("tasks", "--plugin", good)
    line = next(row for row in out.splitlines() if row.startswith("tiny-data"))
    assert code == 0 and "[accuracy, maximize]" in line and line.endswith(f"from: plugin {good}")


def test_search_plugins_variable_loads_a_plugin(cli, good, monkeypatch):
    monkeypatch.setenv("SEARCH_PLUGINS", good)
    code, out, err = cli("tasks")
    assert code == 0 and "tiny-data" in out, err


def test_plugin_search_compare_with_intervals_and_model_of_the_winner(cli, good, tmp_path):
    code, out, err = cli(*RUN, "--repeats", "2", "--plugin", good)
    assert code == 0, err
    assert "study 'tiny-data-tiny-mlp': 6 finished trial(s)" in out
    rows = sqlite3.connect(tmp_path / "search.db").execute("SELECT status, params FROM trials").fetchall()
    assert len(rows) == 6 and all(p <= 2000 for _, p in rows)
    code, out, err = cli("compare", "tiny-data-tiny-mlp", "--format", "json")
    assert code == 0, err
    verdict = json.loads(out)
    assert verdict["metric"] == "accuracy" and verdict["direction"] == "maximize"
    rows = [f for level in verdict["levels"] for f in level["families"] if f["value"] is not None]
    assert rows and any(f["low"] is not None and f["low"] <= f["value"] <= f["high"] for f in rows)
    best = max(rows, key=lambda f: f["value"])
    code, out, err = cli(
        "model", "tiny-data-tiny-mlp", str(best["trial"]), "--out", str(tmp_path / "winner"), "--plugin", good
    )
    assert code == 0, err
    assert (tmp_path / "winner").is_dir()


def test_a_training_function_task_is_searched_and_reported_per_epoch(cli, tmp_path):
    loop = str(write(tmp_path, "loop_plugin", LOOP))
    code, out, err = cli(
        "run",
        "--plugin",
        loop,
        "--space",
        "tiny-mlp",
        "--budget",
        "2K",
        "--trials",
        "3",
        "--no-report",
        "--pruner",
        "none",
    )
    assert code == 0, err
    con = sqlite3.connect(tmp_path / "search.db")
    complete = con.execute("SELECT count(*) FROM trials WHERE status = 'complete'").fetchone()[0]
    checks = "SELECT count(*) FROM trials WHERE status = 'complete' AND note LIKE 'seed check of trial %'"
    assert complete - con.execute(checks).fetchone()[0] == 3  # the trials; a seed check or so after them
    assert con.execute("SELECT count(*) FROM epochs").fetchone()[0] == 3 * complete  # 3 epochs reported by each
    code, out, err = cli("trials", "loop-tiny-mlp", "--format", "json")
    assert all(0 <= r["score"] <= 1 and 0 <= r["val_score"] <= 1 for r in json.loads(out))


def test_a_builder_that_fails_for_one_configuration_fails_that_trial_only(cli, tmp_path):
    """...and no Optuna warning reaches the terminal: the failing builds count 0, so the
    budget logic narrows the width's range away from the smallest corner's value, which is
    used all the same and said in the trial's note."""
    flaky = str(write(tmp_path, "flaky_plugin", FLAKY))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, out, err = cli(
            "run",
            "--plugin",
            flaky,
            "--space",
            "tiny-mlp",
            "--budget",
            "3K",
            "--trials",
            "8",
            "--no-report",
            "--retries",
            "0",
            "--pruner",
            "none",
        )
    assert code == 0, err
    assert not [str(w.message) for w in caught if "optuna" in w.filename], "an Optuna warning reached the user"
    con = sqlite3.connect(tmp_path / "search.db")
    notes = [n for (n,) in con.execute("SELECT note FROM trials WHERE note IS NOT NULL")]
    assert any("enqueued outside the range the budget left: width=2" in n for n in notes), notes
    rows = con.execute("SELECT status, error, config FROM trials").fetchall()
    failed = [r for r in rows if r[0] == "failed"]
    assert any(r[0] == "complete" for r in rows) and failed
    for _status, error, config in failed:
        c = json.loads(config)
        assert ("too wide for this builder" in error) if c["width"] > 12 else ("not a torch.nn.Module" in error)


@pytest.mark.parametrize(
    "variant,match",
    [
        ("import_fails", "failed to import: RuntimeError: boom"),
        ("builtin_family", "family 'hourglass' is already registered (built-in)"),
        ("builtin_task", "task 'digits-denoise' is already registered (built-in)"),
        ("same_family", "family 'tiny-mlp' is already registered (plugin "),
        ("wrong_count", "count gives"),
        ("no_direction", "metric 'f1' has no direction"),
        ("no_valid_config", "its space allows no configuration"),
        ("bad_shapes", "cannot take the data's inputs (2, 6)"),
        ("bad_outputs", "to (2, 7), but the targets need (2, 3)"),
        ("never_reports", "returned without calling report(epoch, metrics)"),
        ("undeclared_metric", "reported metric 'acc' that the task did not declare"),
        ("budget", "budget 10 is below the smallest tiny-mlp model (plugin "),
    ],
)
def test_bad_plugin_input_one_line_exit_2_database_unchanged(cli, good, tmp_path, variant, match):
    code, out, err = cli(*RUN, "--plugin", good, "--trials", "1")
    assert code == 0, err
    forget_plugins()  # as a new process would start
    before = db_dump(tmp_path / "search.db")
    plugins = ["--plugin", good] if variant in ("same_family", "budget") else []
    if variant in BAD:
        plugins += ["--plugin", str(write(tmp_path, variant, BAD[variant]))]
    args = [*RUN, *plugins] + (["--budget", "10"] if variant == "budget" else [])
    code, out, err = cli(*args)
    assert code == 2, err
    assert err.startswith("error: ") and match in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert "plugin " in err  # the message names the plugin
    assert db_dump(tmp_path / "search.db") == before


TWO = (
    GOOD
    + """
search.family("tiny-wide", space={"width": {"low": 4, "high": 64, "log": True}, "depth": {"low": 1, "high": 1}},
              build=mlp, default_task="tiny-data")
"""
)


def test_every_reading_command_works_on_a_plugins_study(cli, tmp_path):
    """Replicate searches of two plugin families, then compare (pooled), predict, report,
    train (a retraining of a trial) and export-optuna, as for built-in families."""
    two = str(write(tmp_path, "two_plugin", TWO))
    code, out, err = cli(
        "run",
        "--plugin",
        two,
        "--space",
        "tiny-mlp,tiny-wide",
        "--budget",
        "4K",
        "--trials",
        "8",
        "--search-repeats",
        "2",
        "--epochs",
        "2",
        "--no-report",
        "--study",
        "two",
    )
    assert code == 0, err
    code, out, err = cli("compare", "two", "--format", "json")
    assert code == 0 and "(2 searches)" in json.loads(out)["interval"], err
    code, out, err = cli("predict", "two-r1", "--at", "40K", "--plugin", two, "--format", "json")
    assert code in (0, 2), err  # a fit needs enough front points; when it has too few it says so in one line
    assert (code == 0 and json.loads(out)["targets"]) or "too few complete trials" in err
    code, out, err = cli("report", "two-r1", "two-r2", "--out", str(tmp_path / "site"))
    assert code == 0 and (tmp_path / "site" / "index.html").exists(), err
    trial = (
        sqlite3.connect(tmp_path / "search.db")
        .execute(
            "SELECT t.number FROM trials t JOIN studies s ON s.id = t.study_id WHERE s.name = 'two-r1' "
            "AND t.status = 'complete' ORDER BY t.number LIMIT 1"
        )
        .fetchone()[0]
    )
    code, out, err = cli("train", "two-r1", str(trial), "--epochs", "1", "--plugin", two)
    assert code == 0, err
    code, out, err = cli("export-optuna", "two-r1", "--to", f"sqlite:///{tmp_path / 'optuna.db'}")
    assert code == 0, err
