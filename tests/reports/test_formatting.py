"""Display text of single values and trials (reports.formatting)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reports.formatting import (
    PALETTE,
    config_keys,
    family_colors,
    format_bytes,
    format_duration,
    format_mean_std,
    format_params,
    format_time,
    format_value,
    hover_text,
)
from verdicts.points import parse_config


def test_family_colors_follow_sorted_names():
    assert family_colors(["b", "a", "b"]) == {"a": PALETTE[0], "b": PALETTE[1]}
    many = family_colors(f"f{i:02d}" for i in range(len(PALETTE) + 1))
    assert many[f"f{len(PALETTE):02d}"] == PALETTE[0]  # wraps around


def test_parse_config_and_keys():
    assert parse_config({"a": 1}) == {"a": 1}
    assert parse_config('{"a": 1}') == {"a": 1}
    assert parse_config("[1]") == {} and parse_config("nope") == {} and parse_config(None) == {}
    assert config_keys([{"a": 1, "b": 2}, '{"c": 3, "a": 0}', None]) == ["a", "b", "c"]


def test_format_value():
    assert format_value(True) == "True"
    assert format_value(np.int64(3)) == "3"
    assert format_value(1e-3) == "0.001"
    assert format_value(1234567.0) == "1.235e+06"
    assert format_value(float("nan")) == "" and format_value(pd.NA) == "" and format_value(None) == ""
    assert format_value("x") == "x"


def test_format_numbers():
    assert format_params(1234567) == "1.23M (1,234,567)"
    assert format_params(800) == "800 (800)"
    assert format_params(None) == "" and format_params(float("nan")) == ""
    assert format_mean_std(25.3125, 0.12345) == "25.31 ± 0.12"
    assert format_mean_std(20.0) == "20" and format_mean_std(1, "x") == "1"
    assert format_mean_std(None) == ""


def test_format_duration_and_time():
    assert [format_duration(v) for v in (12.5, 150, 5400, None)] == ["12.5 s", "2.5 min", "1.50 h", ""]
    assert format_time(pd.Timestamp("2024-01-01 12:00:00")) == "2024-01-01 12:00:00"
    assert format_time(pd.NaT) == "" and format_time(None) == ""


def test_hover_text_escapes_user_text():
    text = hover_text(3, "<x>", {"d": 1}, 1000.0, "psnr", 20.0, 0.1)
    assert text == "<b>#3</b> &lt;x&gt;<br>d=1<br>params 1K (1,000)<br>psnr 20 ± 0.1"
    assert "(no config)" in hover_text(0, "a", {}, 1.0, "m", 1.0, float("nan"))


def test_file_sizes_read_in_decimal_units_with_the_exact_count():
    assert format_bytes(512) == "512 bytes"
    assert format_bytes(36_736) == "36.7 kB (36,736 bytes)"
    assert format_bytes(246_184_000) == "246 MB (246,184,000 bytes)"
    assert format_bytes(None) == "" and format_bytes(float("nan")) == ""
