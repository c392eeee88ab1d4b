"""Stylised 2-D tasks of Yu & Zhang, "A lightweight and gradient-stable neural layer".

Both live on an n x n grid (n = 81, 6561 points as the paper's Sec. 4), point (i, j) at
(x[i], x[j]) with x = linspace(lo, hi, n): [lo, hi] = [-1, 1] for the checkerboard
(Sec. 4: "6561 mesh points over the square [-1, 1]^2"; points -1, -0.975, ..., 1) and
[0, 1] for the sines (Sec. 4.3: "x in [0, 1]^2 ... evaluated on the same grid as in the
checkerboard dataset"; points 0, 0.0125, ..., 1).
  checkerboard: labels of a board of `board` x `board` squares of s = (8n // 9) // board
                grid points each, centred (offset (n - board*s) // 2), 0 outside it. The
                defaults (n = 81, board = 12: 6-point squares on rows/columns 4..75) give
                exactly the labels of the authors' released checkerboard data set
                (problem(t=6) in their code). Two logits, cross-entropy; accuracy, error.
  sines:        g(x) = sin(2 pi x1) sin(2 pi x2) + sin(10 pi x1) sin(10 pi x2) (Sec. 4.3),
                one output, MSE loss; primary metric the test MSE `mse` (minimise: the
                "test loss" of Fig. 7, HanNet 0.034, FCNets about 0.37), and `rmse`
                = sqrt(mse) beside it. Option `domain`: "unit" ([0, 1]^2, the paper's,
                default) or "symmetric" ([-1, 1]^2, the checkerboard's square: this
                project's former sines, a deviation kept for comparison). g is 1-periodic
                in x1 and x2, so on [-1, 1]^2 the grid holds four copies of the unit
                square's function at half the resolution (spacing 0.025), and a test
                point mostly has an identical copy (shifted by 1) among the training
                points: an easier, leakier task than the paper's.
Split: a seeded random `train_fraction` (the paper's 25%) of the points for training;
the paper reports accuracy on all the rest. To keep model selection off the reported
points, the rest is split in two seeded halves: validation (the best epoch and the
search objective) and test (reported).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from core.errors import UserError
from core.io import IOSpec
from tasks.base import Task, TrainDefaults
from tasks.by_name import TASKS
from tasks.datasets.splits import split_indices


class GridData:
    """The points of a grid task on a device; the `TaskData` the trainer uses."""

    def __init__(self, task: GridTask, x: torch.Tensor, y: torch.Tensor, device: torch.device) -> None:
        self.task = task
        self.device = torch.device(device)
        n = len(x)
        n_train = int(n * task.options["train_fraction"])
        n_val = (n - n_train) // 2
        if n_train < 2 or n_val < 1:
            raise UserError(f"{task.name}: {n} grid points are too few for a train/validation/test split")
        train, val, test = split_indices(n, (n_train, n_val), task.options["split_seed"])
        self.x = {k: x[i].to(self.device) for k, i in (("train", train), ("val", val), ("test", test))}
        self.y = {k: y[i].to(self.device) for k, i in (("train", train), ("val", val), ("test", test))}

    @property
    def n_train(self) -> int:
        return len(self.x["train"])

    def size(self, split: str) -> int:
        return len(self.x[split])

    def train_batch(self, idx: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        return self.x["train"][idx], self.y["train"][idx]

    def evaluate(self, predict: Callable[[torch.Tensor], torch.Tensor], split: str) -> dict[str, float]:
        """The task's metrics over a whole split (a few thousand points: one batch)."""
        metrics = self.task.split_metrics(predict(self.x[split]), self.y[split])
        names = list(metrics)
        values = torch.stack([metrics[k].double() for k in names]).tolist()  # one sync
        return dict(zip(names, values))


class GridTask(Task):
    """A function on the n x n grid of [-1, 1]^2. Options: grid, train_fraction, split_seed."""

    own_options: ClassVar[dict[str, Any]] = {"grid": 81, "train_fraction": 0.25, "split_seed": 0}
    # Ours (the paper: SGD with momentum, batch 100, 40k steps = about 2400 epochs): batch 100,
    # AdamW without weight decay, 400 epochs (HanNet width 30 depth 20 at lr 5e-3 reaches
    # about 63% test accuracy on the 12x12 board after 200 epochs, 84% after 600).
    defaults = TrainDefaults(epochs=400, batch_size=100, lr=5e-3, weight_decay=0.0)

    def _check_options(self) -> None:
        o = self.options
        if not _is_int(o["grid"]) or o["grid"] < 3:
            raise UserError(f"grid must be an integer >= 3 (points per side), got {o['grid']!r}")
        f = o["train_fraction"]
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f < 1:
            raise UserError(f"train_fraction must be a number between 0 and 1, got {f!r}")
        if not _is_int(o["split_seed"]) or o["split_seed"] < 0:
            raise UserError(f"split_seed must be a non-negative integer, got {o['split_seed']!r}")

    def bounds(self) -> tuple[float, float]:
        """(lo, hi): the grid spans [lo, hi]^2."""
        return -1.0, 1.0

    def points(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(x (N, 2) float32, i (N,), j (N,)): the grid's points and their indices."""
        n = self.options["grid"]
        i, j = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
        i, j = i.flatten(), j.flatten()
        axis = torch.linspace(*self.bounds(), n, dtype=torch.float64)
        return torch.stack([axis[i], axis[j]], 1).float(), i, j

    def values(self, x: torch.Tensor, i: torch.Tensor, j: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def split_metrics(self, pred: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def load(self, data_dir: str | None, device: Any) -> GridData:
        x, i, j = self.points()
        return GridData(self, x, self.values(x, i, j), torch.device(device))


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@TASKS.register("checkerboard")
class Checkerboard(GridTask):
    name = "checkerboard"
    description = "2-D checkerboard (81x81 grid, 25% train), accuracy (Yu & Zhang, HanNet)"
    metric = "accuracy"
    direction = "maximize"
    metrics = ("accuracy", "error")
    own_options = {"board": 12, "loss": "ce"}

    def _check_options(self) -> None:
        super()._check_options()
        if self.options["loss"] not in ("ce", "mse"):
            raise UserError(f"loss must be 'ce' or 'mse', got {self.options['loss']!r}")
        b = self.options["board"]
        if not _is_int(b) or b < 1 or (8 * self.options["grid"] // 9) // b < 1:
            raise UserError(
                f"board must be a positive integer of at most {8 * self.options['grid'] // 9} "
                f"squares per side for grid={self.options['grid']}, got {b!r}"
            )

    def io(self) -> IOSpec:
        return IOSpec(2, 2, "logits", None, (2,))

    def values(self, x: torch.Tensor, i: torch.Tensor, j: torch.Tensor) -> torch.Tensor:
        """(N,) int64 labels: (row square + column square) mod 2 on the board, 0 off it."""
        n, b = self.options["grid"], self.options["board"]
        s = (8 * n // 9) // b
        off = (n - b * s) // 2
        inside = (i >= off) & (i < off + b * s) & (j >= off) & (j < off + b * s)
        labels = ((i - off).div(s, rounding_mode="floor") + (j - off).div(s, rounding_mode="floor")) % 2
        return torch.where(inside, labels, torch.zeros_like(labels)).long()

    def loss(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """loss "ce" (default): cross-entropy of the two logits. loss "mse": as the authors'
        code (yyy32/HanNet checkerboard_experiments: nn.MSELoss on targets [y, y]), both
        outputs regress the 0/1 label."""
        if self.options["loss"] == "mse":
            return F.mse_loss(pred, target.to(pred.dtype).unsqueeze(1).expand_as(pred))
        return F.cross_entropy(pred, target)

    def predicted(self, pred: torch.Tensor) -> torch.Tensor:
        """Class of each prediction: the larger logit, or with loss "mse" the mean of the
        two outputs above 0.5 (the authors' `correct`)."""
        return (pred.mean(1) > 0.5).long() if self.options["loss"] == "mse" else pred.argmax(1)

    def split_metrics(self, pred: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
        acc = (self.predicted(pred) == y).float().mean()
        return {"accuracy": acc, "error": 1.0 - acc}


DOMAINS: dict[str, tuple[float, float]] = {
    "unit": (0.0, 1.0),  # the paper's (Sec. 4.3)
    "symmetric": (-1.0, 1.0),  # the checkerboard's square (a deviation)
}


@TASKS.register("sines")
class Sines(GridTask):
    name = "sines"
    description = "2-D regression sin(2pi x1)sin(2pi x2) + sin(10pi x1)sin(10pi x2) on [0,1]^2, test MSE (Yu & Zhang)"
    metric = "mse"
    direction = "minimize"
    metrics = ("mse", "rmse")
    own_options = {"domain": "unit"}

    def _check_options(self) -> None:
        super()._check_options()
        if self.options["domain"] not in DOMAINS:
            raise UserError(
                f"domain must be one of {', '.join(DOMAINS)} ([0, 1]^2 or [-1, 1]^2), got {self.options['domain']!r}"
            )

    def bounds(self) -> tuple[float, float]:
        return DOMAINS[self.options["domain"]]

    def io(self) -> IOSpec:
        return IOSpec(2, 1, "regression", None, (2,))

    def values(self, x: torch.Tensor, i: torch.Tensor, j: torch.Tensor) -> torch.Tensor:
        """(N, 1) float32 targets g(x1, x2), computed in float64."""
        a, b = x[:, 0].double(), x[:, 1].double()
        g = torch.sin(2 * math.pi * a) * torch.sin(2 * math.pi * b)
        g = g + torch.sin(10 * math.pi * a) * torch.sin(10 * math.pi * b)
        return g.float().unsqueeze(1)

    def split_metrics(self, pred: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
        mse = (pred.float() - y).pow(2).mean()
        return {"mse": mse, "rmse": mse.sqrt()}
