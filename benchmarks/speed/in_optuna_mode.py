"""`python -m benchmarks.speed.in_optuna_mode ARGS`: the `search` command with the default
GP's proposals made inside Optuna's torch function mode, as before
search/engine/sampling/gp_sampler.py (which takes Optuna's own path where the default device
is not the CPU): a baseline arm for the speed benchmarks, nothing else changed."""

import sys

import search.engine.sampling.gp_sampler as gp_sampler
from search.cli.main import main


def in_optuna_mode() -> int:
    """`search` (its argv) with the GP's proposals on Optuna's own path."""
    gp_sampler.default_device_is_cpu = lambda: False
    return main()


if __name__ == "__main__":  # importing this module changes nothing
    sys.exit(in_optuna_mode())
