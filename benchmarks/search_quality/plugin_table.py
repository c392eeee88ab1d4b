"""Search quality on a user's own family over real training runs (issue 80, item 4b).

`make`: an MLP family on scikit-learn's 8x8 digits (1,197 train / 300 validation images,
tasks/datasets/digits.py's split) trained once over a grid of its size keys (`num_layers`
1-3, `width` 16-256) and its free keys (`lr`, `dropout`, `batch_size`), 10 epochs each with
Adam, one seed, every epoch's validation accuracy kept: docs/data/plugin-table-digits.json.

`compare` (the default): the table replayed by a training-function task registered the way
a user writes a plugin (`search.task`: it looks the configuration up and reports each
epoch's accuracy), searched by the product's default proposer and by plain Optuna (TPE,
random, GP, NSGA-II) at the same trials, 10 seeds; each search's hypervolume share, in
(log10 params, best validation accuracy), of the table's whole front. The metric's floor
(the hypervolume's reference) is the table's 10th percentile, so that the models worse
than nearly every configuration add nothing. benchmarks/search_quality/plugin_quality.py holds the
comparison; this file only the table.

    python -m benchmarks.search_quality.plugin_table make [--out docs/data/plugin-table-digits.json]
    python -m benchmarks.search_quality.plugin_table [--seeds 10] [--trials 40] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import benchmarks.search_quality.plugin_quality as q
from core.io import IOSpec
from core.pareto import pareto_mask

TABLE = Path(__file__).resolve().parents[2] / "docs" / "data" / "plugin-table-digits.json"
GRID = {
    "num_layers": [1, 2, 3],
    "width": [16, 32, 64, 128, 256],
    "lr": [3e-4, 1e-3, 3e-3, 1e-2, 3e-2],
    "dropout": [0.0, 0.2, 0.4],
    "batch_size": [32, 128],
}
EPOCHS = 10
BUDGET = 100_000
IO = IOSpec(64, 10)


def count(config: dict[str, Any]) -> int:
    sizes = [IO.d_in] + [config["width"]] * config["num_layers"] + [IO.d_out]
    return sum(a * b + b for a, b in zip(sizes, sizes[1:]))


def train_one(config: dict[str, Any], data, seed: int = 0) -> list[float]:
    """Every epoch's validation accuracy of one configuration (Adam, cross-entropy)."""
    import torch
    from torch import nn

    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    width = IO.d_in
    for _ in range(config["num_layers"]):
        layers += [nn.Linear(width, config["width"]), nn.ReLU(), nn.Dropout(config["dropout"])]
        width = config["width"]
    model = nn.Sequential(nn.Flatten(), *layers, nn.Linear(width, IO.d_out))
    opt = torch.optim.Adam(model.parameters(), lr=config["lr"])
    x, y = data.train_x, data.train_y
    out = []
    for _ in range(EPOCHS):
        model.train()
        order = torch.randperm(len(x))
        for i in range(0, len(x), config["batch_size"]):
            idx = order[i : i + config["batch_size"]]
            opt.zero_grad()
            nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            out.append(float((model(data.val_x).argmax(1) == data.val_y).float().mean()))
    return out


def make(path: Path) -> int:
    import torch

    from tasks.datasets import load_digits

    torch.set_num_threads(1)
    data = load_digits(split_seed=0)
    runs = []
    t0 = time.perf_counter()
    for values in itertools.product(*GRID.values()):
        config = dict(zip(GRID, values))
        runs.append({**config, "params": count(config), "val_accuracy": train_one(config, data)})
    table = {
        "what": "MLP on 8x8 digits, Adam, 10 epochs, seed 0: every epoch's validation accuracy",
        "command": "python -m benchmarks.search_quality.plugin_table make",
        "machine": f"{platform.processor() or platform.machine()}, torch {torch.__version__}, 1 thread",
        "date": time.strftime("%Y-%m-%d"),
        "seconds": round(time.perf_counter() - t0, 1),
        "grid": GRID,
        "runs": runs,
    }
    path.write_text(json.dumps(table) + "\n")
    print(f"{len(runs)} runs in {table['seconds']} s: {path}", file=sys.stderr)
    return 0


def problem(path: Path = TABLE) -> q.Problem:
    """The table as a `Problem`: its runs looked up by configuration."""
    table = json.loads(path.read_text())
    keys = list(table["grid"])
    runs = {tuple(r[k] for k in keys): r["val_accuracy"] for r in table["runs"]}

    def curve(config: dict[str, Any], params: int) -> list[float]:
        return runs[tuple(config[k] for k in keys)]

    def metric(config: dict[str, Any], params: int) -> float:
        return max(curve(config, params))  # the best validation epoch, as the product's trainer keeps

    points = np.array([(math.log10(r["params"]), max(r["val_accuracy"])) for r in table["runs"]])
    points = points[[r["params"] <= BUDGET for r in table["runs"]]]
    front = points[pareto_mask(points, q.DIRECTIONS)]
    floor = float(np.quantile([max(r["val_accuracy"]) for r in table["runs"]], 0.1))
    space = {"num_layers": {"low": 1, "high": 3}} | {k: list(v) for k, v in table["grid"].items() if k != "num_layers"}
    return q.Problem(
        "table-mlp",
        space,
        count,
        metric,
        front,
        BUDGET,
        np.array([math.log10(BUDGET) + 0.05, floor]),
        curve=curve,
        epochs=EPOCHS,
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["make"]:
        ap = argparse.ArgumentParser(description="train the table")
        ap.add_argument("--out", default=str(TABLE))
        return make(Path(ap.parse_args(argv[1:]).out))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--table", default=str(TABLE))
    ap.add_argument("--samplers", default="default", help=q.SAMPLERS_HELP)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    if a.seeds < 1 or a.trials < 2 or not Path(a.table).is_file():
        print(
            f"error: --seeds >= 1, --trials >= 2 and a table file (make one: plugin_table.py make); {a.table}",
            file=sys.stderr,
        )
        return 2
    samplers = q.product_samplers(a.samplers)
    if samplers is None:
        return 2
    result = q.compare([problem(Path(a.table))], a.seeds, a.trials, samplers=samplers)
    return q.report(result, a.out)


if __name__ == "__main__":
    sys.exit(main())
