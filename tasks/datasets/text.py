"""Byte-level text corpora as uint8 tensors, split contiguously into train/val/test.

A named corpus (e.g. Shakespeare: `shakespeare/shakespeare.txt.gz`) is looked up like every
data set (tasks/datasets/fetch.py): `--data-dir` or its NAME/ folder, then
$SEARCH_DATA_DIR, then the user cache; gz or raw. There is no download (the corpus has no
single canonical URL): a missing corpus is a one-line DataError saying where to put it.
Any UTF-8 text file can be read by path (`read_text_file`, gz or raw).
"""
from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path

import torch

from core.errors import DataError
from tasks.datasets import fetch

SPLIT = (0.90, 0.05, 0.05)  # contiguous train / validation / test fractions


@dataclass
class TextSplits:
    """Byte tensors (uint8, CPU) of the three contiguous parts of a corpus."""

    train: torch.Tensor
    val: torch.Tensor
    test: torch.Tensor
    source: str  # the file it came from

    def sizes(self) -> tuple[int, int, int]:
        return len(self.train), len(self.val), len(self.test)


def _read(path: Path) -> bytes:
    try:
        raw = path.read_bytes()
        return gzip.decompress(raw) if path.suffix == ".gz" else raw
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise DataError(f"cannot read {path}: {' '.join(str(e).split()) or type(e).__name__}") from None


def read_text_file(path: str | Path) -> bytes:
    """The bytes of a UTF-8 text file (gunzipped when it ends in .gz); DataError when it is
    missing, empty or not UTF-8."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise DataError(f"text file {str(path)!r} not found (give an existing UTF-8 file with --data)")
    data = _read(p)
    if not data:
        raise DataError(f"text file {str(path)!r} is empty")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"text file {str(path)!r} is not UTF-8 text (bad byte at offset {e.start})") from None
    return data


def find_corpus(name: str, filename: str, data_dir: str | None) -> Path:
    """The path of `filename` (.gz or raw) in the data directories; DataError if absent."""
    found = fetch.find_all(fetch.candidate_dirs(name, data_dir), [filename])
    if found:
        return found[filename]
    where = Path(data_dir) / name if data_dir is not None else fetch.cache_root() / name
    raise DataError(
        f"{name} corpus not found: put {filename}.gz (or {filename}) in {where} "
        f"or pass --data-dir DIR holding {name}/{filename}.gz"
    )


def split_bytes(data: bytes, fractions: tuple[float, float, float] = SPLIT, source: str = "") -> TextSplits:
    """Contiguous train/val/test parts of `data` (first 90%, next 5%, last 5%)."""
    n = len(data)
    n_train = int(n * fractions[0])
    n_val = int(n * fractions[1])
    t = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    return TextSplits(t[:n_train].clone(), t[n_train : n_train + n_val].clone(), t[n_train + n_val :].clone(), source)


def load_corpus(name: str, filename: str, data_dir: str | None) -> TextSplits:
    path = find_corpus(name, filename, data_dir)
    return split_bytes(read_text_file(path), source=str(path))


def load_text_file(path: str | Path) -> TextSplits:
    return split_bytes(read_text_file(path), source=str(path))
