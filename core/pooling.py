"""Several trials of one configuration (its seed checks) read as one: the mean and std of
all their runs from each trial's summary."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def pool_runs(
    runs: Sequence[int], means: Sequence[float], stds: Sequence[float] | None = None
) -> tuple[float, float, int]:
    """(mean, std, R) of all the runs of k trials, from each trial's runs R_i, mean m_i and
    std s_i (each (k,)):

        R = sum R_i,   mean = sum R_i m_i / R,
        std^2 = (sum (R_i - 1) s_i^2 + sum R_i (m_i - mean)^2) / (R - 1)

    (the within- and between-trial sums of squares of a one-way analysis of variance). A
    missing s_i (a trial of one run) counts as 0. The mean is NaN where any m_i is; the std
    is NaN where R < 2 or `stds` is None."""
    n = np.asarray(runs, dtype=float)
    m = np.asarray(means, dtype=float)
    total = float(n.sum())
    if total <= 0:
        return float("nan"), float("nan"), 0
    mean = float(np.sum(n * m) / total)
    if stds is None or total < 2:
        return mean, float("nan"), int(total)
    s = np.nan_to_num(np.asarray(stds, dtype=float))
    ss = float(np.sum((n - 1) * s**2) + np.sum(n * (m - mean) ** 2))
    return mean, float(np.sqrt(ss / (total - 1))), int(total)
