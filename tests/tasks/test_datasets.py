"""Seeded splits, the digits data set and ImageNet-32 (tiny npz fixture)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.errors import DataError
from tasks.datasets import load_digits, load_imagenet32, split_indices


def test_split_indices_disjoint_sorted_and_seeded():
    val, test, train = split_indices(100, (10, 20), seed=0)
    assert (len(val), len(test), len(train)) == (10, 20, 70)
    assert sorted(torch.cat([val, test, train]).tolist()) == list(range(100))
    assert torch.equal(train, train.sort().values)
    again = split_indices(100, (10, 20), seed=0)
    assert all(torch.equal(a, b) for a, b in zip((val, test, train), again))
    assert not torch.equal(val, split_indices(100, (10, 20), seed=1)[0])


def test_digits_split():
    s = load_digits(split_seed=0)
    assert s.sizes() == (1197, 300, 300)
    assert s.train_x.shape == (1197, 1, 8, 8) and s.train_x.dtype == torch.float32
    assert 0.0 <= s.train_x.min() and s.train_x.max() == 1.0
    assert torch.equal((s.train_x * 16).round(), s.train_x * 16)  # values k/16
    from sklearn.datasets import load_digits as sk

    val, test, train = split_indices(1797, (300, 300), 0)
    target = torch.as_tensor(sk().target)
    assert torch.equal(s.train_y, target[train]) and torch.equal(s.test_y, target[test])
    assert torch.equal(load_digits(0).val_x, s.val_x)
    assert not torch.equal(load_digits(1).val_x, s.val_x)


def write_imagenet32(directory, n_batches=2, per_batch=40, n_test=12):
    """Tiny fixture in the official format: data (N, 3072) uint8 channel-major, labels 1-based."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for i in range(1, n_batches + 1):
        data = rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8)
        np.savez(directory / f"train_data_batch_{i}.npz", data=data, labels=list(rng.integers(1, 1001, per_batch)))
    data = rng.integers(0, 256, (n_test, 3072), dtype=np.uint8)
    data[0, :1024], data[0, 1024:2048], data[0, 2048:] = 10, 20, 30  # R, G, B planes
    np.savez(directory / "val_data.npz", data=data, labels=np.arange(1, n_test + 1))
    return directory


@pytest.mark.parametrize("sub", ["", "imagenet32"])
def test_imagenet32_fixture(tmp_path, sub):
    write_imagenet32(tmp_path / sub)
    s = load_imagenet32(str(tmp_path), val_from="train")
    n_val = 4  # 5% of 80
    assert s.sizes() == (80 - n_val, n_val, 12)
    assert s.train_x.shape == (76, 3, 32, 32) and s.train_x.dtype == torch.uint8
    assert s.test_y.tolist() == list(range(12))  # 1-based labels -> 0-based
    assert s.test_x[0, 0].unique().tolist() == [10] and s.test_x[0, 2].unique().tolist() == [30]
    assert s.num_classes == 1000 and int(s.train_y.min()) >= 0 and int(s.train_y.max()) <= 999


def test_imagenet32_options(tmp_path):
    write_imagenet32(tmp_path)
    assert load_imagenet32(str(tmp_path), train_batches=1, val_size=10, val_from="train").sizes() == (30, 10, 12)
    with pytest.raises(DataError, match="train_batches=3 but only 2"):
        load_imagenet32(str(tmp_path), train_batches=3)


def test_imagenet32_missing(tmp_path):
    with pytest.raises(DataError) as err:
        load_imagenet32(str(tmp_path))
    msg = str(err.value)
    assert "\n" not in msg and "train_data_batch_1.npz" in msg and "val_data.npz" in msg
    assert str(tmp_path / "imagenet32") in msg


def test_imagenet32_malformed(tmp_path):
    write_imagenet32(tmp_path)
    np.savez(tmp_path / "val_data.npz", data=np.zeros((3, 100), np.uint8), labels=[1, 2, 3])
    with pytest.raises(DataError, match=r"expected \(N, 3072\) uint8"):
        load_imagenet32(str(tmp_path))


def test_imagenet32_official_validation_set_split_in_two(tmp_path):
    """Chen et al. (A.3): train on every training image; the official validation set,
    split in halves with the split seed, gives the validation and the test splits."""
    write_imagenet32(tmp_path)
    s = load_imagenet32(str(tmp_path))
    assert s.sizes() == (80, 6, 6)
    assert sorted(s.val_y.tolist() + s.test_y.tolist()) == list(range(12))  # the official set, disjoint halves
    again, other = load_imagenet32(str(tmp_path)), load_imagenet32(str(tmp_path), split_seed=1)
    assert torch.equal(again.val_y, s.val_y) and not torch.equal(other.val_y, s.val_y)
