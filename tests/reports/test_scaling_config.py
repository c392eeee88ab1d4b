"""The shape trends of `search predict`'s configurations (reports/scaling_config.py) on
fronts whose trends are known."""

from __future__ import annotations

import numpy as np
import pytest

from reports.scaling_config import key_trend, read_trends, shape_trends


def test_a_width_proportional_to_sqrt_n_is_read_at_a_hundred_times_the_front():
    n = np.geomspace(1e3, 1e6, 6)
    configs = [{"d": 3.0 * np.sqrt(x), "L": 4, "act": "relu" if x < 1e5 else "gelu"} for x in n]
    trends = shape_trends(n, configs, ["d", "L"], ["act"])
    assert trends["d"].kind == "power" and trends["d"].slope == pytest.approx(0.5)
    assert trends["L"].kind == "fixed" and trends["L"].value == 4
    assert trends["act"].kind == "choice" and trends["act"].value == "gelu"  # the largest's, not the majority's
    assert read_trends(trends, 1e8) == {"d": pytest.approx(3e4), "L": 4, "act": "gelu"}
    assert trends["d"].describe() == "d ~ N^0.50" and "same on every front configuration" in trends["L"].describe()


def test_a_noisy_trend_is_a_least_squares_line_in_log_log():
    rng = np.random.default_rng(0)
    n = np.geomspace(1e3, 1e7, 12)
    d = 2.0 * n**0.3 * np.exp(rng.normal(0, 0.05, len(n)))
    t = key_trend("d", n, list(d))
    slope, intercept = np.polyfit(np.log(n), np.log(d), 1)
    assert t.slope == pytest.approx(slope) and t.intercept == pytest.approx(intercept)
    assert t.slope == pytest.approx(0.3, abs=0.03)


@pytest.mark.parametrize(
    "params,values,kind,value,why",
    [
        ([1e3, 1e4], [10, 30], "largest", 30, "2 front points (a trend needs 3)"),
        ([1e3, 1e4, 1e5], [0, 1, 2], "largest", 2, "not positive"),
        ([1e3, 1e4, 1e5], [None, None, None], "largest", None, "on no front configuration"),
        ([1e3, 1e4, 1e5, 1e6], [None, 5, 5, 5], "fixed", 5, "the same"),
    ],
)
def test_a_key_without_a_trend_keeps_the_largest_front_value_and_says_why(params, values, kind, value, why):
    t = key_trend("k", np.array(params), values)
    assert t.kind == kind and t.value == value and why in t.why and t.at(1e9) == value


def test_a_numeric_key_holding_text_is_categorical_and_no_front_is_an_error():
    t = shape_trends([1e3, 1e4, 1e5], [{"k": 1}, {"k": "x"}, {"k": 3}], ["k"])["k"]
    assert t.kind == "choice" and t.value == 3
    with pytest.raises(ValueError, match="at least one front point"):
        shape_trends([], [], ["k"])
