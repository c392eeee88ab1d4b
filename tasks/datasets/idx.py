"""Reading IDX files (the MNIST format, LeCun et al.), gzip-compressed or raw.

An IDX file is a 4-byte magic number (two zero bytes, a type code, the number of
dimensions), one big-endian uint32 per dimension, then the values in C order.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np

from core.errors import DataError

# IDX type code -> big-endian numpy dtype.
IDX_DTYPES: dict[int, str] = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_bytes(path: str | Path) -> bytes:
    """The file's uncompressed bytes (gunzipped when the name ends in .gz)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        return gzip.decompress(raw) if path.suffix == ".gz" else raw
    except (OSError, EOFError, zlib.error) as e:
        raise DataError(f"cannot read {path}: {e}") from None


def parse_idx(data: bytes, name: str = "IDX data") -> np.ndarray:
    """Parse IDX bytes into an array of the file's dtype and shape (a read-only view)."""
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise DataError(f"{name} is not an IDX file (bad magic number)")
    code, ndim = data[2], data[3]
    if code not in IDX_DTYPES:
        raise DataError(f"{name} has unknown IDX type code 0x{code:02x}")
    header = 4 + 4 * ndim
    if ndim == 0 or len(data) < header:
        raise DataError(f"{name} has a truncated IDX header")
    dims = tuple(int(d) for d in np.frombuffer(data, ">u4", count=ndim, offset=4))
    dtype = np.dtype(IDX_DTYPES[code])
    expected = header + int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    if len(data) != expected:
        raise DataError(f"{name}: IDX header says shape {dims} ({expected} bytes) but the data has {len(data)} bytes")
    return np.frombuffer(data, dtype, offset=header).reshape(dims)


def read_idx(path: str | Path) -> np.ndarray:
    """Read one IDX file (.gz or raw) into a numpy array."""
    return parse_idx(read_bytes(path), str(path))
