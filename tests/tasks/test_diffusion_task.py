"""The diffusion tasks: options, training batches, the fixed-seed validation loss, a tiny
model whose loss falls, and sample quality + the sample grid of a finished run."""

from __future__ import annotations

import base64
import io

import pytest
import torch

import tasks
from core.errors import UserError
from core.trials import TrainSettings, TrialResult, TrialSpec
from tasks.diffusion_tasks import T_STEPS, eval_timesteps, to_model_scale
from tests.tasks.conftest import SHARED_DATA, needs_mnist

TINY = {"D": 32, "depth": 3, "patch": 2, "mlp_ratio": 2}


def data(**options):
    return tasks.load_data(tasks.get_task("digits-diffusion", {"samples": 0, **options}), None, "cpu")


def test_io_and_options():
    task = tasks.get_task("mnist-diffusion")
    io_ = task.io()
    assert (io_.output, io_.image_shape, io_.input_shape, io_.num_classes) == ("noise", (1, 28, 28), (1, 28, 28), 10)
    assert (task.metric, task.direction) == ("loss", "minimize")
    assert task.options["samples"] == 200 and task.options["guidance"] == 1.0
    for bad, match in [
        ({"schedule": "quadratic"}, "schedule must be one of linear, cosine"),
        ({"samples": -1}, "samples must be an integer >= 0"),
        ({"sample_steps": 0}, "sample_steps must be an integer between 1 and 1000"),
        ({"cond_drop": 1.5}, r"cond_drop must be a number in \[0.0, 1.0\)"),
        ({"guidance": -1}, "guidance"),
        ({"eval_levels": True}, "eval_levels"),
        ({"noise": 0.5}, "unknown option 'noise' for task mnist-diffusion"),
    ]:
        with pytest.raises(UserError, match=match):
            tasks.get_task("mnist-diffusion", bad)


def test_eval_levels_are_evenly_spread():
    assert eval_timesteps(10) == [50, 150, 250, 350, 450, 550, 650, 750, 850, 950]
    assert eval_timesteps(1) == [T_STEPS // 2]


def test_training_batches_noise_and_condition_dropout():
    d = data()
    g = torch.Generator().manual_seed(0)
    idx = torch.arange(512) % d.n_train
    (x_t, t, y), eps = d.train_batch(idx, g)
    assert x_t.shape == eps.shape == (512, 1, 8, 8) and t.shape == y.shape == (512,)
    assert t.dtype == torch.float32 and 0 <= t.min() and t.max() < T_STEPS
    dropped = y == 10
    assert 0.05 < dropped.float().mean() < 0.16  # cond_drop = 0.1
    assert torch.equal(y[~dropped], d.y["train"][idx][~dropped])
    x0 = to_model_scale(d.x["train"][idx])
    ab = d.schedule.alpha_bar[t.long()].float().view(-1, 1, 1, 1)
    assert torch.allclose(x_t, ab.sqrt() * x0 + (1 - ab).sqrt() * eps, atol=1e-5)
    (_, _, y0), _ = data(cond_drop=0.0).train_batch(idx, g)
    assert not bool((y0 == 10).any())


def test_validation_loss_is_fixed_and_the_zero_predictor_scores_about_one():
    """Fixed seeds: the same loss twice; predicting zero noise costs E[eps^2] = 1."""
    d = data()
    zero = lambda x, t, y: torch.zeros_like(x)  # noqa: E731
    a, b = d.evaluate(zero, "val"), d.evaluate(zero, "val")
    assert a == b and set(a) == {"loss"}
    assert abs(a["loss"] - 1.0) < 0.02  # E[eps^2] = 1
    # every fixed level is evaluated, on every image
    seen = []

    def oracle(x, t, y):
        seen.append(t[0].item())
        return torch.zeros_like(x)

    d.evaluate(oracle, "val", batch_size=100)
    assert sorted(set(seen)) == [float(v) for v in eval_timesteps(10)]


def test_a_tiny_model_learns_and_reports_sample_quality():
    spec = TrialSpec(
        "t",
        0,
        "lmlp",
        dict(TINY),
        "digits-diffusion",
        (0,),
        TrainSettings(epochs=6, batch_size=64),
        task_options={"samples": 40, "sample_steps": 10, "eval_images": 200, "eval_levels": 4},
    )
    result = tasks.run_trial(spec)
    assert result.status == "complete", result.error
    run = result.runs[0]
    losses = [e.metrics["loss"] for e in run.epochs]
    assert losses[-1] < 0.8 * losses[0] and min(losses) < 0.6, losses
    assert run.metrics["val_loss"] == min(losses)
    assert {"loss", "sample_accuracy", "frechet", "val_loss"} <= set(run.metrics)
    assert 0.0 <= run.metrics["sample_accuracy"] <= 1.0 and run.metrics["frechet"] >= 0.0
    art = run.artifacts["samples"]
    assert art["media_type"] == "image/png"
    assert TrialResult.from_dict(result.to_dict()).runs[0].artifacts == run.artifacts  # travels from Ray workers
    from PIL import Image

    img = Image.open(io.BytesIO(base64.b64decode(art["data"])))
    assert img.size == ((10 * 9 + 1) * 2, (4 * 9 + 1) * 2)  # 40 samples: 4 rows of 10 classes


@needs_mnist
@pytest.mark.slow
@pytest.mark.mnist
def test_mnist_diffusion_smoke():
    spec = TrialSpec(
        "t",
        0,
        "uvit",
        {"D": 64, "depth": 3, "patch": 7, "mlp_ratio": 2},
        "mnist-diffusion",
        (0,),
        TrainSettings(epochs=1, batch_size=64, max_train_samples=512),
        data_dir=str(SHARED_DATA),
        task_options={"samples": 0, "eval_images": 128, "eval_levels": 2},
    )
    result = tasks.run_trial(spec)
    assert result.status == "complete", result.error
    assert 0 < result.runs[0].metrics["loss"] < 1.5
