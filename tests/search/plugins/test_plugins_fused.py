"""A user's own data with a built-in family that fuses: the trial's seeds train as one
pack through the data's `train_batch` and the task's own loss, member by member, and give
each seed what it gets alone."""

import numpy as np
import pytest

import search
import tasks
from core.trials import TrainSettings, TrialSpec
from tasks.fused_train import pack_key


def splits():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 6)).astype(np.float32)
    y = (x @ rng.normal(size=(6, 3))).argmax(1)
    return {"train": (x[:200], y[:200]), "val": (x[200:250], y[200:250]), "test": (x[250:], y[250:])}


def regression_splits():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 5)).astype(np.float32)
    y = (x @ rng.normal(size=(5, 2))).astype(np.float32)
    return {"train": (x[:200], y[:200]), "val": (x[200:250], y[200:250]), "test": (x[250:], y[250:])}


@pytest.mark.parametrize(
    "name,data,metrics,config",
    [
        ("fused-classes", splits, ["accuracy", "loss"], {"d_z": 8, "d_h": 24, "L": 2}),
        ("fused-regression", regression_splits, ["mse"], {"d_z": 16, "d_h": 4, "L": 3}),
    ],
)
def test_own_array_task_seeds_fuse_and_equal_alone(name, data, metrics, config):
    search.array_task(name, data, metrics=metrics, epochs=3, batch_size=32, lr=1e-2)
    family = "conventional" if config["d_h"] > config["d_z"] else "hourglass"

    def spec(fuse):
        return TrialSpec("own", 1, family, config, name, (0, 1, 2), TrainSettings(device="cpu", fuse=fuse))

    assert pack_key(spec(True), tasks.get_task(name)) is not None
    fused, alone = tasks.run_trial(spec(True)), tasks.run_trial(spec(False))
    assert fused.status == alone.status == "complete"
    for f, a in zip(fused.runs, alone.runs):
        assert f.best_epoch == a.best_epoch
        assert f.metrics == pytest.approx(a.metrics, rel=1e-5, abs=1e-7)


def test_a_users_own_family_of_different_widths_packs_without_padding_and_equals_alone():
    """A family registered through the public API, with dropout, trials of different
    widths and depths in one pack on the CPU (models/ragged_pack.py): each gives what it
    gives alone: its metrics to
    the last bit (its own module, its own random draws)."""
    import torch
    from torch import nn

    from tasks.fused_train import PackRun, train_pack

    def net(config, io):
        layers, width = [], io.d_in
        for _ in range(config["depth"]):
            layers += [nn.Linear(width, config["width"]), nn.ReLU(), nn.Dropout(config["dropout"])]
            width = config["width"]
        return nn.Sequential(*layers, nn.Linear(width, io.d_out))

    space = {
        "width": {"low": 2, "high": 32, "log": True},
        "depth": {"low": 1, "high": 3},
        "dropout": {"low": 0.0, "high": 0.5},
    }
    search.array_task("ragged-data", splits, metrics=["accuracy", "loss"], epochs=3, batch_size=32, lr=1e-2)
    search.family("dropout-mlp", space=space, build=net, default_task="ragged-data")
    configs = [
        {"width": 8, "depth": 1, "dropout": 0.2},
        {"width": 24, "depth": 3, "dropout": 0.4},
        {"width": 4, "depth": 2, "dropout": 0.0},
    ]
    specs = [
        TrialSpec("own", i + 1, "dropout-mlp", c, "ragged-data", (i,), TrainSettings(device="cpu"))
        for i, c in enumerate(configs)
    ]
    task = tasks.get_task("ragged-data")
    assert len({pack_key(s, task) for s in specs}) == 1
    data = tasks.load_data(task, None, "cpu")
    torch.manual_seed(1234)
    out = train_pack([PackRun(s, s.seeds[0], 0, None, s.number) for s in specs], task, data)
    for s, (run, tb) in zip(specs, out):
        alone = tasks.run_trial(s).runs[0]
        assert tb is None and run.status == alone.status == "complete"
        assert run.metrics == alone.metrics
        assert [e.train_loss for e in run.epochs] == pytest.approx([e.train_loss for e in alone.epochs], rel=1e-6)
