"""Statuses, directions and shape rules: the shared rules of core/."""

import pytest

from core.directions import DIRECTIONS, METRIC_DIRECTIONS, arrow, better, check_direction, metric_direction
from core.io import IOSpec
from core.shape_rules import Constraint, first_violation
from core.statuses import (
    FAILURE_STATUSES,
    FINISHED_STATUSES,
    HEADLINE_STATUSES,
    PROBLEM_STATUSES,
    REPLAYED_STATUSES,
    RETRY_STATUSES,
    TRIAL_STATUSES,
)


def test_status_groups_are_subsets_of_the_one_list():
    for group in (
        FINISHED_STATUSES,
        PROBLEM_STATUSES,
        RETRY_STATUSES,
        HEADLINE_STATUSES,
        FAILURE_STATUSES,
        REPLAYED_STATUSES,
    ):
        assert set(group) <= set(TRIAL_STATUSES)
    assert "running" not in FINISHED_STATUSES and "rejected" not in FINISHED_STATUSES
    assert not set(FINISHED_STATUSES) & {"interrupted"} and "complete" not in PROBLEM_STATUSES


def test_the_schema_check_constraint_is_built_from_the_one_list():
    from storage.schema import Study, Trial

    status = next(c for c in Trial.__table__.constraints if str(c.name).endswith("_status"))
    assert all(repr(s) in str(status.sqltext) for s in TRIAL_STATUSES)
    direction = next(c for c in Study.__table__.constraints if str(c.name).endswith("_direction"))
    assert all(repr(d) in str(direction.sqltext) for d in DIRECTIONS)


@pytest.mark.parametrize(
    "value, best, direction, expected",
    [
        (2.0, 1.0, "maximize", True),
        (2.0, 1.0, "minimize", False),
        (1.0, 1.0, "maximize", False),
        (5.0, None, "minimize", True),
        (float("nan"), None, "maximize", False),
        (float("nan"), 1.0, "minimize", False),
    ],
)
def test_better(value, best, direction, expected):
    assert better(value, best, direction) is expected


def test_direction_checks_and_arrows():
    assert [arrow(d) for d in ("maximize", "minimize")] == ["↑", "↓"]
    assert check_direction("minimize") == "minimize"
    with pytest.raises(ValueError, match="'minimize' or 'maximize'"):
        check_direction("up")


def test_metric_directions_come_from_one_table_and_validation_copies_share_them():
    assert set(METRIC_DIRECTIONS.values()) <= set(DIRECTIONS)
    assert metric_direction("frechet") == metric_direction("val_frechet") == "minimize"
    assert metric_direction("sample_accuracy") == metric_direction("psnr") == "maximize"
    assert metric_direction("nope") is None and metric_direction("val_nope") is None


def test_shape_rules_name_the_broken_rule_with_its_values():
    io = IOSpec(d_in=784, d_out=784)
    rules = (Constraint("d_z", ">", "d_x"), Constraint("d_h", "<", "d_z"))
    assert first_violation("hourglass", rules, {"d_z": 1000, "d_h": 50}, io) is None
    assert first_violation("hourglass", rules, {"d_z": 500, "d_h": 50}, io) == "hourglass needs d_z > d_x (500 <= 784)"
    assert first_violation("x", rules, {"d_z": 1000, "d_h": 1000}, io) == "x needs d_h < d_z (1000 >= 1000)"
    ratio = Constraint("d_h", ">=", "d_model", scale=0.1)
    assert ratio.holds({"d_h": 64, "d_model": 640}) and not ratio.holds({"d_h": 63, "d_model": 640})
    assert first_violation("f", (ratio,), {"d_h": 6, "d_model": 65}, io) == "f needs d_h >= 0.1 * d_model (6 < 6.5)"
