"""`search run`: parse the flags into the run's options (search/engine/run_options.py, one
table for the command line, `search.run` and the Tune searcher), check everything, run the
study, print its Pareto table and write its report page."""

from __future__ import annotations

import argparse

from search.engine.run_options import DEFAULT_REPORT_DIR, RunOptions, add_run_flags  # noqa: F401  (browse.py)


def add_parser(sub) -> None:
    """`search run`'s flags, a flag per option of `RunOptions`, in groups as `search run
    --help` shows them."""
    r = sub.add_parser("run", help="run or resume a study")
    add_run_flags(r)
    r.set_defaults(func=cmd_run)


def cmd_run(a: argparse.Namespace) -> int:
    from search.api.run import execute

    execute(RunOptions.from_namespace(a))
    return 0


def run_spec(a: argparse.Namespace):
    """The `RunSpec` of the flags (search/api/run.py: `run_spec`)."""
    from search.api.run import run_spec as spec_of

    return spec_of(RunOptions.from_namespace(a))
