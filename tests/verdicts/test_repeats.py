"""Several trials of one configuration read as one (`verdicts/repeats.py merge_runs`)."""

import math

import pandas as pd
import pytest

from verdicts.repeats import merge_runs


def points(configs):
    return pd.DataFrame(
        {
            "number": range(len(configs)),
            "family": ["mlp"] * len(configs),
            "params": [100] * len(configs),
            "config": configs,
            "value": [10.0, 12.0, 11.0][: len(configs)],
            "std": [math.nan] * len(configs),
            "runs": [1] * len(configs),
        }
    )


def test_every_row_sharing_a_size_merges_by_its_config():
    """Every row shares study, family and size (the mask of rows to compare is all True:
    pandas 3.0.x refused the list assignment through it) and two share a config."""
    out = merge_runs(points([{"w": 1}, {"w": 1}, {"w": 2}]))
    assert out["number"].tolist() == [0, 2]
    assert out["value"].tolist() == pytest.approx([11.0, 11.0]) and out["runs"].tolist() == [2, 1]


def test_rows_of_other_configs_stay_apart():
    out = merge_runs(points([{"w": 1}, {"w": 2}]))
    assert out["number"].tolist() == [0, 1] and out["value"].tolist() == [10.0, 12.0]
