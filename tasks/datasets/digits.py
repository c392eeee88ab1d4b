"""scikit-learn's bundled handwritten digits (UCI optdigits test set): 1797 8x8 images.

Pixel values 0..16 are scaled to [0, 1] by /16. There is no official split: 1197 train /
300 validation / 300 test, drawn with a fixed `split_seed`. Needs no download.
"""

from __future__ import annotations

import torch

from tasks.datasets.splits import ImageSplits, split_indices

N_VAL = 300
N_TEST = 300


def load_digits(split_seed: int = 0) -> ImageSplits:
    """Digits as float32 (N, 1, 8, 8) tensors in [0, 1]: 1197 / 300 / 300."""
    from sklearn.datasets import load_digits as sk_load_digits

    bunch = sk_load_digits()
    x = torch.as_tensor(bunch.images, dtype=torch.float32).div_(16.0).unsqueeze(1)
    y = torch.as_tensor(bunch.target, dtype=torch.long)
    val_idx, test_idx, train_idx = split_indices(len(x), (N_VAL, N_TEST), split_seed)
    return ImageSplits(x[train_idx], y[train_idx], x[val_idx], y[val_idx], x[test_idx], y[test_idx], 10)
