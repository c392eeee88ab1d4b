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
    spec = TrialSpec(
        "t",
        1,
        "han",
        {"width": 30, "depth": 10, "lr": 0.05},
        "checkerboard",
        (0,),
        TrainSettings(epochs=8, optimizer="sgd-step"),
        task_options={"board": 2, "loss": "mse"},
    )
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


@pytest.mark.parametrize("name", ["adamw", "adamw-uvit"])
def test_stacked_adamw_moves_each_member_as_torch_adamw_with_its_own_rate(name):
    """StackedAdamW on (K, ...) tensors, with a learning rate and weight decay per member
    and the schedule of FUSED_OPTIMIZERS, equals the named optimiser stepping each member
    alone; a member whose scale is 0 does not move."""
    from tasks.optimizers import FUSED_OPTIMIZERS, StackedAdamW

    torch.manual_seed(0)
    lrs_, wds, total, warmup = [1e-2, 3e-3, 1e-3], [0.0, 0.1, 0.05], 6, 2
    start = [torch.randn(3, 4, 5), torch.randn(3, 2)]
    grads = [[torch.randn_like(t) for t in start] for _ in range(total)]
    alone = []
    for k in range(3):
        params = [torch.nn.Parameter(t[k].clone()) for t in start]
        opt, sched = OPTIMIZERS.get(name)(params, lrs_[k], wds[k], total, warmup)
        for g in grads:
            for p, gt in zip(params, g):
                p.grad = gt[k].clone()
            opt.step()
            sched.step()
        alone.append([p.detach() for p in params])
    rule = FUSED_OPTIMIZERS[name]
    stacked = [t.clone().requires_grad_() for t in start]
    fused = StackedAdamW(stacked, torch.tensor(lrs_), torch.tensor(wds), rule.betas)
    factor = rule.schedule(total, warmup)
    for s, g in enumerate(grads):
        for p, gt in zip(stacked, g):
            p.grad = gt.clone()
        fused.step(torch.full((3,), factor(s)))
    for k in range(3):
        for got, want in zip(stacked, alone[k]):
            torch.testing.assert_close(got[k].detach(), want, rtol=1e-5, atol=1e-6)
    before = [p.detach().clone() for p in stacked]
    for p in stacked:
        p.grad = torch.ones_like(p)
    fused.step(torch.tensor([0.0, 1.0, 1.0]))
    assert all(torch.equal(p[0], b[0]) and not torch.equal(p[1], b[1]) for p, b in zip(stacked, before))
