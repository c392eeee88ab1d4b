"""One table of run options (search/engine/run_options.py `RunOptions`): the command line,
`search.run` and the Tune searcher fill it and build the same `RunSpec` from it; the
parser's flags, `search.run`'s signature and docstring and the reference page are made
from it."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from pathlib import Path

import pytest

import search
from core.errors import UserError
from search.api.run import run_spec
from search.cli.main import build_parser
from search.engine.run_options import DEFAULTS, OPTION_NAMES, OPTIONS, RunOptions, flag, options_table

REPO = Path(__file__).resolve().parents[3]


def cli_spec(*flags: str):
    return run_spec(RunOptions.from_namespace(build_parser().parse_args(["run", *flags])))


def python_spec(**options):
    return run_spec(RunOptions.from_python(**options))


# (command-line flags, the same as Python values)
SAME = [
    (
        ["--space", "hourglass,conventional", "--budget", "100K", "--task", "digits-denoise"],
        dict(space=["hourglass", "conventional"], budget=100_000, task="digits-denoise"),
    ),
    (
        ["--family", "hourglass", "--budget", "1.5M", "--task-option", "noise=0.5", "--task-option", "flat=true"],
        dict(family="hourglass", budget="1.5M", task_option={"noise": 0.5, "flat": True}),
    ),
    (
        ["--space", "hourglass,conventional", "--budget", "60K", "--decide", "20K,40K", "--margin", "0.3"],
        dict(space=("hourglass", "conventional"), budget=60_000, decide=[20_000, "40K"], margin=0.3),
    ),
    (
        ["--space", "hourglass", "--budget", "20K", "--fuse", "off", "--epochs", "3", "--workers", "2"],
        dict(space="hourglass", budget=20_000, fuse=False, epochs=3, workers=2),
    ),
    (
        ["--space", "hourglass", "--budget", "20K", "--smoke", "--seed", "4", "--search-repeats", "2"],
        dict(space="hourglass", budget="20K", smoke=True, seed=4, search_repeats=2),
    ),
]


@pytest.mark.parametrize("flags,values", SAME, ids=[" ".join(f[:4]) for f, _ in SAME])
def test_the_command_line_and_python_build_the_same_spec(flags, values):
    a, b = cli_spec(*flags), python_spec(**values)
    if "workers" in values:  # the command line's text and Python's number: one placement
        assert str(a.executor_options.pop("workers")) == str(b.executor_options.pop("workers"))
    assert a == b


def test_values_are_typed_whichever_way_they_came():
    parsed = RunOptions.from_namespace(
        build_parser().parse_args(
            ["run", "--space", "a, b", "--budget", "2K", "--decide", "1K", "--task-option", "k=3", "--fuse", "on"]
        )
    )
    given = RunOptions.from_python(space=["a", "b"], budget=2000, decide=["1K"], task_option={"k": 3}, fuse=True)
    for options in (parsed, given):
        assert options.space == ("a", "b") and options.budget == 2000 and options.decide == (1000.0,)
        assert options.task_option == {"k": 3} and options.fuse is True


def test_every_option_is_a_flag_of_search_run_with_its_default():
    parser = build_parser()
    parsed = vars(parser.parse_args(["run"]))
    assert {k: v for k, v in parsed.items() if k not in ("command", "func")} == DEFAULTS
    help_text = " ".join(parser._subparsers._group_actions[0].choices["run"].format_help().split())
    for f in OPTIONS:
        if f.metadata["cli"]:
            assert flag(f.name) in help_text, f.name


def test_search_run_takes_every_option_by_its_signature_and_says_each():
    params = inspect.signature(search.run).parameters
    said = inspect.getdoc(search.run)
    for name in OPTION_NAMES:
        if name in ("no_report", "plugin"):  # report= and plugins= stand for them
            assert {"report", "plugins"} <= set(params)
            continue
        assert name in params, name
        assert f"- {name} ({flag(name)}):" in said, name


def test_the_reference_page_lists_every_keyword():
    table = options_table()
    for f in OPTIONS:
        if f.metadata["cli"]:
            assert f"| `{f.name}` | `{flag(f.name)}` |" in table
    assert "<!-- search.run options -->" in (REPO / "docs/reference/python.md").read_text()


@pytest.mark.parametrize(
    "values,message",
    [
        (dict(space="hourglass", budget=True), "--budget must be a count"),
        (dict(space="hourglass", budget="20K", decide=[]), "--decide needs at least one budget"),
        (dict(space="hourglass", budget="20K", fuse="maybe"), "--fuse must be on or off"),
        (dict(space="hourglass", budget="20K", task_option=["noise"]), "expected --task-option key=value"),
        (dict(space="hourglass", budget="20K", colour="red"), "unknown option 'colour'"),
    ],
)
def test_bad_python_values_are_one_line(values, message):
    with pytest.raises(UserError, match=message) as e:
        python_spec(**values)
    assert "\n" not in str(e.value)


def test_the_tune_searcher_builds_its_spec_as_search_run_does(tmp_path):
    pytest.importorskip("ray.tune", reason="Ray Tune is not installed (the ray extra)")
    api = importlib.import_module("search.tune.api")
    db = f"sqlite:///{tmp_path / 'x.db'}"
    tune = api._run_spec(
        ["hourglass"], "20K", "digits-denoise", db, epochs=2, seed=3, keep="none", task_option={"noise": 0.5}
    )
    cli = cli_spec(
        *("--space", "hourglass", "--budget", "20K", "--task", "digits-denoise", "--storage", db),
        *("--executor", "tune", "--pruner", "none", "--epochs", "2", "--seed", "3", "--keep", "none"),
        *("--task-option", "noise=0.5"),
    )
    assert tune == cli
    assert dataclasses.replace(tune, executor="local") != cli
