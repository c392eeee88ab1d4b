"""The task registry and every task's static description (no data loaded)."""

from __future__ import annotations

import pytest

import tasks
from core.errors import UserError
from tasks.base import TrainDefaults

EXPECTED_IO = {
    "mnist-denoise": (784, 784, (1, 28, 28), (1, 28, 28)),
    "mnist-sr": (196, 784, (1, 28, 28), (1, 14, 14)),
    "mnist-genclass": (784, 784, (1, 28, 28), (1, 28, 28)),
    "digits-denoise": (64, 64, (1, 8, 8), (1, 8, 8)),
    "digits-sr": (16, 64, (1, 8, 8), (1, 4, 4)),
    "digits-genclass": (64, 64, (1, 8, 8), (1, 8, 8)),
    "imagenet32-denoise": (3072, 3072, (3, 32, 32), (3, 32, 32)),
    "imagenet32-sr": (768, 3072, (3, 32, 32), (3, 16, 16)),
}


def test_registry_holds_every_task():
    assert set(EXPECTED_IO) <= set(tasks.TASKS.names())  # other modules register more tasks


def test_unknown_task_lists_known_names():
    with pytest.raises(UserError, match="unknown task 'nope'; known: .*digits-denoise.*mnist-sr"):
        tasks.get_task("nope")


@pytest.mark.parametrize("name", sorted(EXPECTED_IO))
def test_io_and_attributes(name):
    task = tasks.get_task(name)
    d_in, d_out, image_shape, input_shape = EXPECTED_IO[name]
    io = task.io()
    assert (io.d_in, io.d_out, io.image_shape, io.input_shape, io.output) == (
        d_in,
        d_out,
        image_shape,
        input_shape,
        "image",
    )
    assert task.name == name
    assert task.description and "\n" not in task.description
    assert task.metric == "psnr" and task.direction == "maximize"
    assert task.metrics[0] == task.metric and "ssim" in task.metrics
    assert ("accuracy" in task.metrics) == name.endswith("genclass")
    assert isinstance(task.defaults, TrainDefaults)


def test_options_defaults_and_validation():
    assert tasks.get_task("mnist-denoise").options == {"split_seed": 0, "noise": 0.25, "flips": False}
    assert tasks.get_task("digits-denoise", {"noise": 0.5}).options["noise"] == 0.5
    assert tasks.get_task("mnist-sr", {"split_seed": 3}).options == {
        "split_seed": 3,
        "flips": True,
        "downsample": "bicubic",
    }
    with pytest.raises(UserError, match="unknown option 'noise' for task mnist-sr; known: "):
        tasks.get_task("mnist-sr", {"noise": 0.1})
    with pytest.raises(UserError, match="noise must be"):
        tasks.get_task("digits-denoise", {"noise": -1})
    with pytest.raises(UserError, match="split_seed"):
        tasks.get_task("digits-sr", {"split_seed": "a"})
    with pytest.raises(UserError, match="train_batches"):
        tasks.get_task("imagenet32-sr", {"train_batches": 11})
    with pytest.raises(UserError, match="val_from must be 'official' or 'train'"):
        tasks.get_task("imagenet32-sr", {"val_from": "test"})
    with pytest.raises(UserError, match="val_size needs val_from='train'"):
        tasks.get_task("imagenet32-sr", {"val_size": 100})


def test_paper_defaults_for_mnist():
    d = tasks.get_task("mnist-denoise").defaults
    assert d.batch_size == 128 and d.lr == 1e-3


def test_io_loads_no_data(monkeypatch):
    import tasks.image_tasks as image_tasks

    def refuse(*a, **k):
        raise AssertionError("io() loaded data")

    for loader in ("load_mnist", "load_digits", "load_imagenet32"):
        monkeypatch.setattr(image_tasks, loader, refuse)
    for name in tasks.TASKS:
        assert tasks.get_task(name).io().d_out > 0


@pytest.mark.parametrize("name", sorted(tasks.TASKS.names()))
def test_every_metric_of_a_task_has_its_direction_in_the_one_table(name):
    from core.directions import metric_direction

    task = tasks.TASKS.get(name)
    assert task.metrics[0] == task.metric
    assert {m: metric_direction(m) for m in task.metrics if metric_direction(m) is None} == {}
    assert metric_direction(task.metric) == task.direction


def test_the_old_module_name_is_the_task_table_itself():
    """`tasks.registry` (the module's name until 2026-12-06) is kept as an alias."""
    import tasks
    import tasks.registry
    from tasks.registry import TASKS, get_task

    assert tasks.registry is tasks.by_name and TASKS is tasks.TASKS and get_task is tasks.get_task
