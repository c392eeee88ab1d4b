import math

import numpy as np
import pytest

from core.pooling import pool_runs


def test_pooled_trials_read_as_all_their_runs_at_once() -> None:
    """Oracle: the mean and std (ddof 1) of the runs themselves, from each trial's summary."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        trials = [
            rng.normal(rng.normal(), rng.uniform(0.1, 2), size=rng.integers(1, 5)) for _ in range(rng.integers(1, 5))
        ]
        runs = [len(t) for t in trials]
        means = [float(t.mean()) for t in trials]
        stds = [float(t.std(ddof=1)) if len(t) > 1 else math.nan for t in trials]
        everything = np.concatenate(trials)
        mean, std, total = pool_runs(runs, means, stds)
        assert total == len(everything)
        assert mean == pytest.approx(everything.mean())
        if total > 1:
            assert std == pytest.approx(everything.std(ddof=1))
        else:
            assert math.isnan(std)


def test_a_missing_mean_or_std_is_said() -> None:
    assert math.isnan(pool_runs([1, 2], [1.0, math.nan])[0])
    mean, std, total = pool_runs([1, 3], [1.0, 2.0])  # no stds: the mean alone
    assert (mean, total) == (1.75, 4) and math.isnan(std)
    assert math.isnan(pool_runs([], [])[0])
