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
