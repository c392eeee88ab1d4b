"""reports/savings.py: the training early stopping saved, against hand-computed values."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from reports.savings import early_stopping_savings, savings_line


def frame(rows):
    return pd.DataFrame(rows, columns=["number", "status", "duration_s", "error", "seeds"])


def test_a_pruned_trial_costs_its_epochs_and_runs_to_the_end():
    df = frame(
        [
            (0, "complete", 10.0, None, [1, 2]),
            (1, "pruned", 2.0, "stopped at epoch 2 of 10: validation 1", [1, 2]),  # 1 s an epoch, 2 runs
            (2, "pruned", 3.0, "stopped at epoch 3 of 6: validation 1", [5]),  # 1 s an epoch, 1 run
            (3, "failed", 1.0, "boom", [1]),
            (4, "rejected", None, None, []),
            (5, "running", 4.0, None, [1]),  # not finished: not counted
        ]
    )
    s = early_stopping_savings(df)
    assert (s.pruned, s.estimated) == (2, 2)
    assert s.spent_s == pytest.approx(16.0)
    # run to the end: trial 1 would cost 1 s x 10 epochs x 2 runs, trial 2 1 s x 6 epochs
    assert s.full_s == pytest.approx(10.0 + 20.0 + 6.0 + 1.0)
    assert s.saved == pytest.approx(1 - 16.0 / 37.0)
    line = savings_line(s)
    assert line.startswith("early stopping: 2 trial(s) stopped by the pruner") and "(57% saved)" in line


def test_reasons_without_the_epochs_are_counted_not_estimated():
    df = frame(
        [
            (0, "complete", 10.0, None, [1]),
            (1, "pruned", 2.0, "stopped at epoch 2: validation 1, while ...", [1]),
            (2, "pruned", 2.0, "stopped at epoch 2 of 4: validation 1", [1]),
        ]
    )
    s = early_stopping_savings(df)
    assert (s.pruned, s.estimated) == (2, 1)
    assert s.full_s == pytest.approx(14.0 + 2.0)
    assert "1 stopped trial(s) do not say at which epoch" in savings_line(s)


def test_no_pruned_trial_no_figure():
    assert early_stopping_savings(frame([(0, "complete", 10.0, None, [1])])) is None
    assert early_stopping_savings(frame([])) is None
    assert early_stopping_savings(None) is None


def test_a_missing_duration_counts_as_none():
    s = early_stopping_savings(
        frame([(0, "complete", math.nan, None, [1]), (1, "pruned", 2.0, "stopped at epoch 1 of 2: v", [1])])
    )
    assert (s.spent_s, s.full_s) == (2.0, 4.0) and s.saved == 0.5
