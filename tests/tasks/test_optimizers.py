"""Optimisers by name (`--optimizer`): AdamW with linear decay (the default) and Yu &
Zhang's SGD with momentum and step decay, as in their checkerboard script."""
import pytest
import torch

import tasks
from core.trials import TrainSettings, TrialSpec
from tasks.optimizers import DEFAULT_OPTIMIZER, OPTIMIZERS, step_decay


def lrs(scheduler, optimizer, steps):
    out = []
    for _ in range(steps):
        out.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return out


def test_sgd_step_is_momentum_sgd_with_the_authors_milestones():
    """yyy32/HanNet checkerboard_experiments/main.py: SGD(momentum=0.9), MultiStepLR at
    0.5, 0.7 and 0.9 of the iterations with gamma 0.2, stepped per iteration."""
    w = torch.nn.Parameter(torch.zeros(3))
    opt, sched = OPTIMIZERS.get("sgd-step")([w], 0.1, 0.0, 100, 7)
    assert isinstance(opt, torch.optim.SGD) and opt.param_groups[0]["momentum"] == 0.9
    got = lrs(sched, opt, 100)
    assert got[:50] == pytest.approx([0.1] * 50)  # no warm-up, whatever the task's
    assert got[50:70] == pytest.approx([0.02] * 20) and got[70:90] == pytest.approx([0.004] * 20)
    assert got[90:] == pytest.approx([0.0008] * 10)
    ref_opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(3))], lr=0.1, momentum=0.9)
    ref = torch.optim.lr_scheduler.MultiStepLR(ref_opt, milestones=[50, 70, 90], gamma=0.2)
    assert got == pytest.approx(lrs(ref, ref_opt, 100))


def test_adamw_is_the_default_with_linear_decay():
    assert DEFAULT_OPTIMIZER == "adamw" and sorted(OPTIMIZERS.names()) == ["adamw", "adamw-uvit", "sgd-step"]
    w = torch.nn.Parameter(torch.zeros(3))
    opt, sched = OPTIMIZERS.get("adamw")([w], 1e-3, 0.01, 4, 0)
    assert isinstance(opt, torch.optim.AdamW)
    assert lrs(sched, opt, 4) == pytest.approx([1e-3, 7.5e-4, 5e-4, 2.5e-4])


def test_step_decay_factor():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    assert lrs(step_decay(opt, 10, at=(0.5,), gamma=0.5), opt, 10) == [1.0] * 5 + [0.5] * 5


def test_checkerboard_with_the_authors_recipe_learns():
    """SGD-step and the MSE loss on a coarse 2 x 2 board (the authors' lr range)."""
    spec = TrialSpec("t", 1, "han", {"width": 30, "depth": 10, "lr": 0.05}, "checkerboard", (0,),
                     TrainSettings(epochs=8, optimizer="sgd-step"), task_options={"board": 2, "loss": "mse"})
    result = tasks.run_trial(spec)
    assert result.status == "complete", result.error
    assert result.runs[0].metrics["accuracy"] > 0.8


def test_adamw_uvit_is_hu_and_rostamis_table_5_warm_up_then_constant():
    w = torch.nn.Parameter(torch.zeros(3))
    opt, sched = OPTIMIZERS.get("adamw-uvit")([w], 2e-4, 0.03, 100, 4)
    group = opt.param_groups[0]
    assert isinstance(opt, torch.optim.AdamW) and group["betas"] == (0.9, 0.9) and group["weight_decay"] == 0.03
    rates = []
    for _ in range(10):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert rates == pytest.approx([0.5e-4, 1e-4, 1.5e-4, 2e-4] + [2e-4] * 6)
