"""A task with its own training function: your loop trains the model, the product
searches the shapes under the budget, prunes, records and compares.

A one-dimensional regression, y = sin(3x) + 0.3 sin(17x) on [-1, 1], learnt by MLPs whose
width and depth are searched. The training loop is the user's: Adam with gradient
clipping on full batches, reporting the validation MSE after each epoch, returning the
test MSE. The family states its exact parameter count (checked against the built module
before the search starts). From the command line:

    search run --plugin examples/own_training.py --space wave-mlp --budget 5K --trials 8

From Python:

    python examples/own_training.py
"""

from __future__ import annotations

import torch
from torch import nn

import search


def mlp_count(config: dict, io) -> int:
    """Inputs -> `depth` hidden layers of `width` -> outputs, each with a bias."""
    w, d = config["width"], config["depth"]
    return (io.d_in + 1) * w + (d - 1) * (w + 1) * w + (w + 1) * io.d_out


@search.family(
    "wave-mlp",
    space={"width": {"low": 2, "high": 128, "log": True}, "depth": {"low": 1, "high": 4}},
    count=mlp_count,
    default_task="wave",
    outputs=("regression",),
)
def build(config: dict, io) -> nn.Module:
    layers, width = [], io.d_in
    for _ in range(config["depth"]):
        layers += [nn.Linear(width, config["width"]), nn.Tanh()]
        width = config["width"]
    return nn.Sequential(*layers, nn.Linear(width, io.d_out))


def wave(n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.rand(n, 1, generator=generator) * 2 - 1
    return x, torch.sin(3 * x) + 0.3 * torch.sin(17 * x)


@search.task(
    "wave",
    metrics={"mse": "minimize"},
    inputs=1,
    outputs=1,
    epochs=40,
    lr=1e-2,
    description="y = sin(3x) + 0.3 sin(17x) on [-1, 1], the user's own training loop, test MSE",
)
def train(model: nn.Module, settings, report) -> dict:
    data = torch.Generator().manual_seed(0)  # the same data for every trial; the trial's seed set the weights
    (x, y), (xv, yv), (xt, yt) = wave(512, data), wave(256, data), wave(256, data)
    x, y, xv, yv, xt, yt = (t.to(settings.device) for t in (x, y, xv, yv, xt, yt))
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    for epoch in range(1, settings.epochs + 1):
        for _ in range(10):
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        with torch.no_grad():
            report(epoch, {"mse": nn.functional.mse_loss(model(xv), yv).item()})
    with torch.no_grad():
        return {"mse": nn.functional.mse_loss(model(xt), yt).item()}


def main(storage: str = "own-training.db", trials: int = 8, epochs: int | None = None) -> None:
    study = search.run(space="wave-mlp", budget="5K", trials=trials, storage=storage, epochs=epochs, report=False)
    print(study.front())


if __name__ == "__main__":
    main()
