"""`python -m benchmarks.speed.with_gp_fit_each ARGS`: the `search` command with the default
GP fitting and searching for every trial, never two trials from one fit (search/engine/
sampling/gp_sampler.py, "Two trials from one fit"): a baseline arm for the benchmarks,
nothing else changed."""

import sys

from benchmarks.speed.with_optunas_gp import fit_every_trial
from search.cli.main import main


def with_gp_fit_each() -> int:
    """`search` (its argv) with a GP fit and acquisition search for every trial."""
    with fit_every_trial():
        return main()


if __name__ == "__main__":  # importing this module changes nothing
    sys.exit(with_gp_fit_each())
