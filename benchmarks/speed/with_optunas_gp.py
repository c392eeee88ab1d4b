"""`python -m benchmarks.speed.with_optunas_gp ARGS`: the `search` command with the default
GP's proposals made by Optuna's own GPSampler, as before search/engine/sampling/gp_sampler.py
(inside Optuna's torch function mode, its `logehvi`): a baseline arm for the speed
benchmarks, nothing else changed. `optunas_gp()` does the same in this process;
`fit_every_trial()` keeps the product's GP but with a fit and an acquisition search for
every trial, never two trials from one fit (search/engine/sampling/samplers.py PAIR_SHARE)."""

import contextlib
import sys

import optuna

import search.engine.sampling.gp_sampler as gp_sampler
import search.engine.sampling.samplers as samplers
from search.cli.main import main


@contextlib.contextmanager
def optunas_gp():
    """While the block runs, the product's GPSampler proposes as Optuna's does."""
    ours = gp_sampler.GPSampler.sample_relative
    gp_sampler.GPSampler.sample_relative = optuna.samplers.GPSampler.sample_relative
    try:
        yield
    finally:
        gp_sampler.GPSampler.sample_relative = ours


@contextlib.contextmanager
def fit_every_trial():
    """While the block runs, the GP samplers built fit and search for every trial."""
    share = samplers.PAIR_SHARE
    samplers.PAIR_SHARE = None
    try:
        yield
    finally:
        samplers.PAIR_SHARE = share


def with_optunas_gp() -> int:
    """`search` (its argv) with Optuna's own GPSampler's proposals."""
    with optunas_gp():
        return main()


if __name__ == "__main__":  # importing this module changes nothing
    sys.exit(with_optunas_gp())
