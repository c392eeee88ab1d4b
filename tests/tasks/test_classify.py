"""Classification tasks: cross-entropy training, accuracy/error, CIFAR-10 pickle batches."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import tasks
from core.errors import DataError
from core.trials import TrainSettings, TrialSpec
from tasks.datasets.cifar10 import FILES, load_cifar10
from tests.tasks.conftest import SHARED_DATA, needs_mnist


def spec(task, family, config, seeds=(0,), **train):
    return TrialSpec("test", 1, family, dict(config), task, tuple(seeds), TrainSettings(**train))


def test_classification_io_loss_and_metrics():
    task = tasks.get_task("digits-classify")
    io = task.io()
    assert (io.d_in, io.d_out, io.output, io.input_shape) == (64, 10, "logits", (1, 8, 8))
    assert (task.metric, task.direction, task.metrics) == ("accuracy", "maximize", ("accuracy", "error"))
    logits, labels = torch.tensor([[2.0, 0.0], [0.0, 1.0]]), torch.tensor([0, 0])
    assert torch.isclose(task.loss(logits, labels), torch.nn.functional.cross_entropy(logits, labels))
    data = tasks.load_data(task, None, "cpu")
    inputs, targets = data.train_batch(torch.arange(5), torch.Generator())
    assert inputs.shape == (5, 64) and targets.dtype == torch.int64 and torch.equal(targets, data.y["train"][:5])
    always_zero = data.evaluate(
        lambda x: torch.nn.functional.one_hot(torch.zeros(len(x), dtype=torch.long), 10).float(), "test"
    )
    share = float((data.y["test"] == 0).float().mean())
    assert always_zero["accuracy"] == pytest.approx(share) and always_zero["error"] == pytest.approx(1 - share)


@pytest.mark.parametrize(
    "family,config",
    [
        ("hourglass", {"d_z": 128, "d_h": 32, "L": 2, "lr": 3e-3}),
        ("mixer", {"S": 16, "C": 16, "gamma": 2, "L": 2, "patch": 2, "lr": 1e-2}),
        ("han", {"width": 64, "depth": 4, "lr": 3e-3}),
    ],
)
def test_training_classifies_digits(family, config):
    result = tasks.run_trial(spec("digits-classify", family, config, epochs=4))
    assert result.status == "complete", result.error
    m = result.runs[0].metrics
    assert set(m) == {"accuracy", "error", "val_accuracy", "val_error"}
    assert m["accuracy"] > 0.8 and m["error"] == pytest.approx(1 - m["accuracy"])


def test_mse_tasks_are_unchanged():
    assert tasks.get_task("digits-denoise").loss(torch.ones(2, 3), torch.zeros(2, 3)) == 1.0


# ---------------------------------------------------------------- CIFAR-10 batches


def write_cifar(root, n_train=20, n_test=10, seed=0):
    """The six pickle batches of CIFAR-10's python version, with a few random images."""
    rng = np.random.default_rng(seed)
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    for name in FILES:
        n = n_test if name == "test_batch" else n_train
        batch = {
            b"batch_label": name.encode(),
            b"labels": rng.integers(0, 10, n).tolist(),
            b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
            b"filenames": [b"x.png"] * n,
        }
        (folder / name).write_bytes(pickle.dumps(batch, protocol=2))
    return folder


def test_cifar10_reads_the_pickle_batches(tmp_path):
    folder = write_cifar(tmp_path)
    splits = load_cifar10(str(tmp_path))
    assert splits.sizes() == (90, 10, 10) and splits.train_x.shape[1:] == (3, 32, 32)
    assert splits.train_x.dtype == torch.uint8 and splits.num_classes == 10
    with open(folder / "test_batch", "rb") as f:
        raw = pickle.load(f, encoding="bytes")
    assert torch.equal(splits.test_x.flatten(1), torch.from_numpy(raw[b"data"]))  # channel-major rows
    assert splits.test_y.tolist() == raw[b"labels"]
    task = tasks.get_task("cifar10-classify")
    data = task.load(str(folder), "cpu")  # the folder itself works too
    assert data.n_train == 90 and task.io().input_shape == (3, 32, 32)
    result = tasks.run_trial(
        TrialSpec(
            "t",
            1,
            "mixer",
            {"S": 16, "C": 8, "gamma": 1, "L": 1, "patch": 8},
            "cifar10-classify",
            (0,),
            TrainSettings(epochs=1),
            data_dir=str(tmp_path),
        )
    )
    assert result.status == "complete", result.error


def test_cifar10_absent_names_the_files(tmp_path):
    with pytest.raises(DataError, match="data_batch_1.*test_batch") as e:
        load_cifar10(str(tmp_path))
    assert "\n" not in str(e.value)


def test_cifar10_refuses_pickles_that_run_code(tmp_path):
    folder = write_cifar(tmp_path)

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    (folder / "data_batch_3").write_bytes(pickle.dumps({b"data": Evil(), b"labels": []}))
    with pytest.raises(DataError, match="data_batch_3.*refusing"):
        load_cifar10(str(tmp_path))


@pytest.mark.mnist
@needs_mnist
def test_mnist_classify_on_real_data():
    result = tasks.run_trial(
        TrialSpec(
            "t",
            1,
            "hourglass",
            {"d_z": 800, "d_h": 32, "L": 1},
            "mnist-classify",
            (0,),
            TrainSettings(epochs=1, max_train_samples=2048),
            data_dir=str(SHARED_DATA),
        )
    )
    assert result.status == "complete" and result.runs[0].metrics["accuracy"] > 0.8
