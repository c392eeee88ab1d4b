"""Train/validation/test image splits and the seeded split of a pool of images."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class ImageSplits:
    """Images (N, C, H, W) on the CPU, uint8 in 0..255 or float32 in [0, 1]; labels int64."""

    train_x: torch.Tensor
    train_y: torch.Tensor
    val_x: torch.Tensor
    val_y: torch.Tensor
    test_x: torch.Tensor
    test_y: torch.Tensor
    num_classes: int

    def sizes(self) -> tuple[int, int, int]:
        return len(self.train_x), len(self.val_x), len(self.test_x)

    def on(self, device: torch.device) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """(images, labels) by split name ("train", "val", "test"), moved to `device`."""
        x = {"train": self.train_x, "val": self.val_x, "test": self.test_x}
        y = {"train": self.train_y, "val": self.val_y, "test": self.test_y}
        return {k: v.to(device) for k, v in x.items()}, {k: v.to(device) for k, v in y.items()}


def split_indices(n: int, sizes: tuple[int, ...], seed: int) -> list[torch.Tensor]:
    """Split range(n) into disjoint parts of the given sizes, the rest going to a last part.

    The permutation comes from a CPU generator seeded with `seed`, so a split is the same
    on every machine and device. Each part is returned sorted (file order).
    """
    if sum(sizes) > n:
        raise ValueError(f"cannot take {sum(sizes)} items from {n}")
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(int(seed)))
    parts, start = [], 0
    for size in sizes:
        parts.append(perm[start : start + size].sort().values)
        start += size
    parts.append(perm[start:].sort().values)
    return parts
