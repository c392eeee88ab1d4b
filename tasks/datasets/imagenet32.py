"""Downsampled ImageNet 32x32 (Chrabaszcz, Loshchilov, Hutter 2017), official npz batches.

Files: train_data_batch_1.npz .. train_data_batch_10.npz and val_data.npz, in `data_dir`
or `data_dir/imagenet32/` (or SEARCH_DATA_DIR / the cache, as for MNIST; they are not
downloaded: the data set needs an ImageNet account, and the error when they are missing
says where to get them, tasks/datasets/sources.py). Each holds `data` (N, 3072) uint8,
channel-major (the R plane's 1024 pixels, then G, then B), and `labels` 1..1000.
The official validation set is our test set; a seeded holdout of the training images
(`val_size`, default min(10000, 5%)) is our validation set. `train_batches` limits how
many training batches are read (each is ~128k images, ~390 MB of uint8; loading briefly
needs about twice the final size).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from core.errors import DataError
from tasks.datasets import fetch, sources
from tasks.datasets.splits import ImageSplits, split_indices

TRAIN_FILES = sources.IMAGENET32_TRAIN
TEST_FILE = sources.IMAGENET32_TEST


def _dirs(data_dir: str | None) -> list[Path]:
    return fetch.candidate_dirs("imagenet32", data_dir)


def find_imagenet32(data_dir: str | None) -> tuple[list[Path], Path]:
    """(training batch files found, in order; the val_data file) of the first directory
    holding val_data.npz and train_data_batch_1.npz."""
    for d in _dirs(data_dir):
        if (d / TEST_FILE).is_file() and (d / TRAIN_FILES[0]).is_file():
            train = []
            for name in TRAIN_FILES:  # consecutive batches from 1
                if not (d / name).is_file():
                    break
                train.append(d / name)
            return train, d / TEST_FILE
    where = Path(data_dir) / "imagenet32" if data_dir is not None else fetch.cache_root() / "imagenet32"
    raise DataError(
        f"ImageNet-32 not found: put train_data_batch_1.npz .. train_data_batch_10.npz and "
        f"val_data.npz in {where} or pass --data-dir (not downloaded: it needs an ImageNet account; log in at "
        f"{sources.IMAGENET32_URL}, download Imagenet32_train_npz.zip and Imagenet32_val_npz.zip of "
        f"Downsampled ImageNet 32x32 and unzip them there)"
    )


def _read_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        with np.load(path) as f:
            data, labels = f["data"], np.asarray(f["labels"])
    except (OSError, ValueError, KeyError) as e:
        raise DataError(f"cannot read {path}: {e}") from None
    if data.ndim != 2 or data.shape[1] != 3072 or data.dtype != np.uint8:
        raise DataError(f"{path}: data has shape {data.shape} {data.dtype}, expected (N, 3072) uint8")
    if labels.shape != (len(data),):
        raise DataError(f"{path}: {labels.shape[0] if labels.ndim else 0} labels for {len(data)} images")
    return data, labels


def load_imagenet32(
    data_dir: str | None = None,
    *,
    train_batches: int | None = None,
    val_size: int | None = None,
    split_seed: int = 0,
    val_from: str = "official",
) -> ImageSplits:
    """ImageNet-32 as uint8 (N, 3, 32, 32) tensors, labels 0..999.

    val_from "official" (Chen et al., A.3): the official validation set (val_data.npz)
    split in two halves with the split seed, one the validation split and the other the
    test split; training uses every training image. "train": the validation split is
    `val_size` training images (default 5%, at most 10,000) and the test split the whole
    official validation set."""
    if val_from not in ("official", "train"):
        raise DataError(f"val_from must be 'official' or 'train', got {val_from!r}")
    train_paths, test_path = find_imagenet32(data_dir)
    if train_batches is not None:
        if train_batches > len(train_paths):
            raise DataError(
                f"train_batches={train_batches} but only {len(train_paths)} training batch files "
                f"are in {train_paths[0].parent}"
            )
        train_paths = train_paths[:train_batches]
    parts = [_read_batch(p) for p in train_paths]
    x = torch.from_numpy(np.concatenate([p[0] for p in parts])).view(-1, 3, 32, 32)
    y = torch.from_numpy(np.concatenate([p[1] for p in parts]).astype(np.int64) - 1)
    test_data, test_labels = _read_batch(test_path)
    tx = torch.from_numpy(test_data).view(-1, 3, 32, 32)
    ty = torch.from_numpy(test_labels.astype(np.int64) - 1)
    if val_from == "official":
        if len(tx) < 2:
            raise DataError(f"the official validation set has {len(tx)} image(s): too few to split in two")
        val_idx, test_idx = split_indices(len(tx), (len(tx) // 2,), split_seed)
        return ImageSplits(
            train_x=x,
            train_y=y,
            val_x=tx[val_idx],
            val_y=ty[val_idx],
            test_x=tx[test_idx],
            test_y=ty[test_idx],
            num_classes=1000,
        )
    n_val = min(10_000, max(1, round(0.05 * len(x)))) if val_size is None else int(val_size)
    if not 0 < n_val < len(x):
        raise DataError(f"val_size={n_val} must be between 1 and {len(x) - 1}")
    val_idx, train_idx = split_indices(len(x), (n_val,), split_seed)
    return ImageSplits(
        train_x=x[train_idx],
        train_y=y[train_idx],
        val_x=x[val_idx],
        val_y=y[val_idx],
        test_x=tx,
        test_y=ty,
        num_classes=1000,
    )
