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
from tasks.datasets import fetch, sources
from tasks.datasets.idx import parse_idx, read_bytes
from tasks.datasets.splits import ImageSplits, split_indices

SHA256: dict[str, str] = dict(sources.MNIST_SHA256)  # of the uncompressed files
FILES = tuple(SHA256)
MIRRORS = sources.MNIST_MIRRORS
N_VAL = 10_000


def _download_all(dest: Path) -> None:
    """Download the files missing from dest (built in a temporary folder, moved in when all
    are there), checking each one's checksum; OSError or DataError leave nothing behind."""
    missing = [n for n in FILES if not fetch.find_file(dest, n)]
    if not missing:
        return
    with fetch.staged(dest) as tmp:
        for name in missing:
            remote = sources.Remote(
                f"{name}.gz", tuple(m + f"{name}.gz" for m in MIRRORS), SHA256[name], checks="content"
            )
            fetch.fetch_remote(remote, tmp)
    for name in missing:
        fetch.mark_verified(dest / f"{name}.gz", SHA256[name])


def install(root: Path) -> Path:
    """Download MNIST into root/mnist (`search data fetch mnist`); the folder."""
    _download_all(root / "mnist")
    return root / "mnist"


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
