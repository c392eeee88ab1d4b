"""IDX parsing on small synthetic files (gzip and raw) and malformed ones."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from core.errors import DataError
from tasks.datasets.idx import parse_idx, read_idx
from tests.tasks.conftest import idx_bytes, write_idx


@pytest.mark.parametrize("suffix", [".gz", ""])
def test_reads_uint8_images(tmp_path, suffix):
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    got = read_idx(write_idx(tmp_path / f"images{suffix}", images))
    assert got.dtype == np.uint8 and got.shape == (2, 3, 4)
    np.testing.assert_array_equal(got, images)


def test_reads_big_endian_types(tmp_path):
    ints = np.array([1, -2, 70000], dtype=np.int32)
    np.testing.assert_array_equal(read_idx(write_idx(tmp_path / "i.gz", ints, 0x0C)), ints)
    floats = np.array([[0.5, -1.25]], dtype=np.float32)
    np.testing.assert_array_equal(read_idx(write_idx(tmp_path / "f", floats, 0x0D)), floats)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\x01\x00\x08\x01" + b"\x00" * 8, "bad magic"),
        (b"\x00\x00\x07\x01\x00\x00\x00\x01\x00", "unknown IDX type"),
        (b"\x00\x00\x08\x03\x00\x00", "truncated"),
        (idx_bytes(np.zeros((2, 3), np.uint8))[:-1], r"shape \(2, 3\)"),
        (idx_bytes(np.zeros((2, 3), np.uint8)) + b"\x00", "bytes"),
        (b"", "bad magic"),
    ],
)
def test_malformed(data, message):
    with pytest.raises(DataError, match=message):
        parse_idx(data)


def test_corrupt_gzip(tmp_path):
    path = tmp_path / "broken.gz"
    path.write_bytes(gzip.compress(idx_bytes(np.zeros(5, np.uint8)))[:-6])
    with pytest.raises(DataError, match="cannot read"):
        read_idx(path)
