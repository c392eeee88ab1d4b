"""Fixtures for the task tests: an isolated cache, no network, the shared MNIST copy."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

# ../shared/data beside the repository (see /work/shared/data/README.md).
SHARED_DATA = Path(__file__).parents[2].parent / "shared" / "data"
HAVE_MNIST = (SHARED_DATA / "mnist" / "train-images-idx3-ubyte.gz").is_file()
needs_mnist = pytest.mark.skipif(
    not HAVE_MNIST,
    reason=f"needs the real MNIST files (train-images-idx3-ubyte.gz and the 3 others) in {SHARED_DATA}/mnist",
)


@pytest.fixture(autouse=True)
def isolated(isolated_data):
    """Every task test: a fresh cache dir, no SEARCH_DATA_DIR, and no network (tests/conftest.py)."""


def idx_bytes(array: np.ndarray, type_code: int = 0x08) -> bytes:
    """An IDX file's bytes for `array` (big-endian values)."""
    header = bytes([0, 0, type_code, array.ndim]) + np.asarray(array.shape, ">u4").tobytes()
    dtype = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}[type_code]
    return header + np.ascontiguousarray(array, dtype=dtype).tobytes()


def write_idx(path: Path, array: np.ndarray, type_code: int = 0x08) -> Path:
    data = idx_bytes(array, type_code)
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path
