"""MNIST (LeCun, Cortes, Burges) from its four IDX files, found locally or downloaded.

Files are looked for as described in tasks/datasets/fetch.py; when none are found they
are downloaded from a public mirror into the cache directory. Every file's uncompressed
bytes are checked against the SHA-256 below (once per file: a stamp remembers it).
Split (Chen et al.): 50k train / 10k validation drawn from the 60k training images with a
fixed `split_seed`; the official 10k test images for reporting.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from core.errors import DataError
from tasks.datasets import fetch
from tasks.datasets.idx import parse_idx, read_bytes
from tasks.datasets.splits import ImageSplits, split_indices

SHA256: dict[str, str] = {
    "train-images-idx3-ubyte": "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
    "train-labels-idx1-ubyte": "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
    "t10k-images-idx3-ubyte": "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
    "t10k-labels-idx1-ubyte": "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
}
FILES = tuple(SHA256)
MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
)
N_VAL = 10_000


def _download_all(dest: Path) -> None:
    """Download the missing files into dest, checking each one's checksum."""
    for name in FILES:
        if fetch.find_file(dest, name):
            continue
        path = dest / f"{name}.gz"
        errors = []
        for mirror in MIRRORS:
            try:
                fetch.download(mirror + path.name, path)
                break
            except Exception as e:  # any network/IO failure: try the next mirror
                if str(e) not in errors:
                    errors.append(str(e))
        else:
            raise OSError("; ".join(errors))
        try:
            fetch.verify(path, read_bytes(path), SHA256[name])
        except DataError:
            path.unlink(missing_ok=True)
            raise DataError(f"downloaded {path.name} does not match its SHA-256; removed it") from None


def find_mnist(data_dir: str | None = None) -> dict[str, Path]:
    """name -> path of the four files, downloading them when they are found nowhere."""
    found = fetch.find_all(fetch.candidate_dirs("mnist", data_dir), FILES)
    if found:
        return found
    dest = fetch.cache_root() / "mnist"
    try:
        _download_all(dest)
    except OSError as e:
        where = Path(data_dir) if data_dir is not None else dest.parent
        names = ", ".join(f"{n}.gz" for n in FILES)
        reason = str(e).replace("\n", " ")
        raise DataError(
            f"MNIST not found: put {names} in {where / 'mnist'} or pass --data-dir (download failed: {reason})"
        ) from None
    return {n: fetch.find_file(dest, n) for n in FILES}  # type: ignore[misc]


def _read(path: Path, name: str) -> np.ndarray:
    data = read_bytes(path)
    fetch.verify(path, data, SHA256[name])
    return parse_idx(data, str(path))


def read_mnist(data_dir: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(train_images (60000, 28, 28) uint8, train_labels, test_images, test_labels)."""
    paths = find_mnist(data_dir)
    arrays = [_read(paths[n], n) for n in FILES]
    for images, labels in (arrays[0:2], arrays[2:4]):
        if images.ndim != 3 or images.shape[1:] != (28, 28) or images.dtype != np.uint8:
            raise DataError(f"MNIST images have shape {images.shape}, expected (N, 28, 28) uint8")
        if labels.shape != (len(images),):
            raise DataError(f"MNIST labels have shape {labels.shape}, expected ({len(images)},)")
    return tuple(arrays)  # type: ignore[return-value]


def load_mnist(data_dir: str | None = None, split_seed: int = 0) -> ImageSplits:
    """MNIST as uint8 (N, 1, 28, 28) tensors: 50k train / 10k val (seeded) / 10k test."""
    train_x, train_y, test_x, test_y = (torch.from_numpy(a.copy()) for a in read_mnist(data_dir))
    val_idx, train_idx = split_indices(len(train_x), (N_VAL,), split_seed)
    return ImageSplits(
        train_x=train_x[train_idx].unsqueeze(1),
        train_y=train_y[train_idx].long(),
        val_x=train_x[val_idx].unsqueeze(1),
        val_y=train_y[val_idx].long(),
        test_x=test_x.unsqueeze(1),
        test_y=test_y.long(),
        num_classes=10,
    )
