import pytest

from core.budget import format_count, parse_budget
from core.errors import UserError


@pytest.mark.parametrize(
    "text,n",
    [
        ("500K", 500_000),
        ("80M", 80_000_000),
        ("1.5B", 1_500_000_000),
        ("80000000", 80_000_000),
        ("3m", 3_000_000),
        (" 2.5k ", 2500),
    ],
)
def test_parse(text, n):
    assert parse_budget(text) == n


@pytest.mark.parametrize("text", ["80Q", "", "M", "-5M", "0", "1e6", "80 MB", "1.2.3M"])
def test_bad_budgets(text):
    with pytest.raises(UserError, match="budget"):
        parse_budget(text)


def test_format():
    assert format_count(1_234_567) == "1.23M" and format_count(999) == "999" and format_count(80e6) == "80M"
