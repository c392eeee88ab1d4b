"""core/durations.py: wall-time strings."""

import pytest

from core.durations import format_duration, parse_duration
from core.errors import UserError


@pytest.mark.parametrize(
    "text,seconds",
    [
        ("90s", 90),
        ("45m", 2700),
        ("2h", 7200),
        ("1.5h", 5400),
        ("1h30m", 5400),
        ("1d2h", 93600),
        ("3600", 3600),
        ("0.5", 0.5),
        (" 2H ", 7200),
        (120, 120),
        (1.5, 1.5),
        ("1h 30m", 5400),
    ],
)
def test_durations_parse_to_seconds(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "abc", "2x", "30m1h", "1h1h", "-5", "0", "0s", "inf", "nan", "1h-5m", True])
def test_bad_durations_are_one_line_errors_naming_the_flag(text):
    with pytest.raises(UserError) as e:
        parse_duration(text, "--time-limit")
    assert str(e.value).startswith("--time-limit") and "\n" not in str(e.value)


@pytest.mark.parametrize(
    "seconds,text", [(12.5, "12.5s"), (90, "1m30s"), (5400, "1h30m"), (7200, "2h"), (3600 + 5, "1h")]
)
def test_durations_format_shortly(seconds, text):
    assert format_duration(seconds) == text
