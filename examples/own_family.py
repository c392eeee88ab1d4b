"""Your own model family and your own data, searched under a parameter budget.

A small convolutional network whose width (channels) and depth (conv layers) are
searched, on 8x8 handwritten digits that this file writes to a NumPy file and reads back
(scikit-learn's bundled copy, so it runs offline). From the command line:

    search run --plugin examples/own_family.py --space small-cnn --task digits-npz --budget 20K --trials 8
    search compare digits-npz-small-cnn --plugin examples/own_family.py
    search model digits-npz-small-cnn 3 --out winner/ --plugin examples/own_family.py

From Python:

    python examples/own_family.py            # runs a small search, compares, loads the winner

The data file goes to $OWN_FAMILY_DATA, by default ~/.cache/shape-search/examples/digits.npz.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from torch import nn

import search

DATA = Path(os.environ.get("OWN_FAMILY_DATA", "~/.cache/shape-search/examples/digits.npz")).expanduser()


def write_data(path: Path) -> None:
    """8x8 digits (1,797 images, scaled to [0, 1]) with their labels, as a NumPy file."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp.npz")
    np.savez(tmp, x=(digits.images / 16.0).astype(np.float32)[:, None], y=digits.target.astype(np.int64))
    tmp.replace(path)


def read_splits() -> dict:
    """The file's images in a fixed shuffled order: 1,000 to train, 397 to validate, 400 to test."""
    if not DATA.exists():
        write_data(DATA)
    with np.load(DATA) as f:
        x, y = f["x"], f["y"]
    order = np.random.default_rng(0).permutation(len(x))
    x, y = x[order], y[order]
    return {"train": (x[:1000], y[:1000]), "val": (x[1000:1397], y[1000:1397]), "test": (x[1397:], y[1397:])}


search.array_task(
    "digits-npz",
    read_splits,
    metrics={"accuracy": "maximize", "loss": "minimize"},
    epochs=8,
    batch_size=64,
    lr=3e-3,
    description="8x8 digits from a NumPy file, accuracy",
)


@search.family(
    "small-cnn",
    space={"width": {"low": 2, "high": 48, "log": True}, "depth": {"low": 1, "high": 4}, "lr": [1e-3, 3e-3]},
    default_task="digits-npz",
    outputs=("logits",),
)
def build(config: dict, io) -> nn.Module:
    """`depth` 3x3 convolutions of `width` channels with ReLU, average pooling to 4x4 and a
    linear head onto the classes; io.input_shape is (channels, height, width)."""
    channels = io.input_shape[0]
    layers: list[nn.Module] = []
    for _ in range(config["depth"]):
        layers += [nn.Conv2d(channels, config["width"], 3, padding=1), nn.ReLU()]
        channels = config["width"]
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(channels * 16, io.d_out))


def main(storage: str = "own-family.db", trials: int = 8, epochs: int | None = None) -> None:
    study = search.run(
        space="small-cnn", task="digits-npz", budget="20K", trials=trials, storage=storage, epochs=epochs, report=False
    )
    print(study.front())
    verdict = study.compare()
    best = max(
        (f for level in verdict.to_dict()["levels"] for f in level["families"] if f["value"] is not None),
        key=lambda f: f["value"],
    )
    model = study.load_model(best["trial"])
    x, y = (torch.as_tensor(a) for a in read_splits()["test"])
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    print(
        f"winner: trial {best['trial']} {best['config']} ({int(best['params']):,} parameters), "
        f"test accuracy {accuracy:.3f} reloaded"
    )


if __name__ == "__main__":
    main()
