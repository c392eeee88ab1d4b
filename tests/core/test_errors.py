"""The one-line error text every layer uses (core.errors.one_line)."""

import pytest

from core.errors import MAX_ERROR_CHARS, one_line


class Wrapped(Exception):
    """Like SQLAlchemy's DBAPIError: the driver's error is `orig`."""

    def __init__(self, orig):
        super().__init__("(sqlite3.IntegrityError) UNIQUE failed\n[SQL: INSERT ...]")
        self.orig = orig


@pytest.mark.parametrize(
    "exc, with_type, expected",
    [
        (ValueError("bad shape"), False, "bad shape"),
        (ValueError("bad shape"), True, "ValueError: bad shape"),
        (RuntimeError("out of memory\n  second   line\n"), True, "RuntimeError: out of memory second line"),
        (ConnectionError(""), False, "ConnectionError"),  # an empty message: the class name, no IndexError
        (ConnectionError("   \n "), True, "ConnectionError"),
        (
            Wrapped(KeyError("UNIQUE constraint failed: trials.number")),
            False,
            "'UNIQUE constraint failed: trials.number'",
        ),
    ],
)
def test_one_line(exc, with_type, expected):
    assert one_line(exc, with_type=with_type) == expected


def test_one_line_is_cut_to_the_limit():
    long = one_line(ValueError("x" * 2000))
    assert len(long) == MAX_ERROR_CHARS and long.endswith("...")
    assert one_line(ValueError("abcdef"), limit=5) == "ab..."
