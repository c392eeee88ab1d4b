"""Every family x every task it fits: configs drawn from the family's own default search
space build, run forward and backward without NaN, and count exactly."""

import optuna
import pytest
import torch

from models import FAMILIES, get_family, trainable_params
from search.engine.sampling.optuna_draw import TrialDraw
from search.spaces import Infeasible, default_space, min_params, suggest_config
from tasks import TASKS, get_task

PAIRS = [(f, t) for f in FAMILIES.names() for t in TASKS.names() if get_family(f).fits(get_task(t).io())]


def drawn_configs(family, io, n, seed=0):
    """Random configs of the default space, budget 4x the smallest model (kept small)."""
    fam, space = get_family(family), default_space(family, io)
    count = lambda c: fam.count_params(c, io)  # noqa: E731
    budget = int(4 * min_params(space, io, count)) + 1000
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    out = []
    for _ in range(20 * n):  # a choice (e.g. a fine patch) may be over budget: drawn anew
        if len(out) == n:
            break
        t = study.ask()
        cfg = suggest_config(space, io, budget, count, TrialDraw(t, family))
        study.tell(t, 0.0)
        if not isinstance(cfg, Infeasible):
            out.append(cfg)
    assert out, f"no feasible config drawn for {family}"
    return out


def test_every_family_fits_some_task():
    for f in FAMILIES.names():
        assert any(p[0] == f for p in PAIRS), f"{f} fits no registered task"


@pytest.mark.parametrize("family,task", PAIRS)
def test_drawn_configs_count_exactly(family, task):
    io, fam = get_task(task).io(), get_family(family)
    for cfg in drawn_configs(family, io, 4):
        model = fam.build(cfg, io, seed=0)
        counted = fam.count_params(cfg, io)
        if fam.param_convention == "trainable parameters":
            assert counted == trainable_params(model), cfg
        else:  # families with another convention must report the model's own figure
            assert counted == model.budgeted_params(), cfg


@pytest.mark.parametrize("family", FAMILIES.names())
def test_forward_backward_on_a_fitting_task(family):
    task = next(t for f, t in PAIRS if f == family)
    io, fam = get_task(task).io(), get_family(family)
    cfg = drawn_configs(family, io, 1)[0]
    torch.manual_seed(0)
    model = fam.build(cfg, io, seed=0)
    x = example_input(io)
    y = model(*x) if isinstance(x, tuple) else model(x)
    assert torch.isfinite(y).all()
    y.float().square().mean().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters() if p.requires_grad)


def example_input(io, batch=4):
    """A batch of the task's inputs: token ids for language models, (x_t, t, y) for
    diffusion denoisers, floats otherwise."""
    if io.output == "noise":
        return (
            torch.randn(batch, *io.input_shape),
            torch.rand(batch) * 1000,
            torch.randint(0, io.num_classes + 1, (batch,)),
        )
    if io.output == "lm":
        return torch.randint(0, io.d_in, (batch, io.input_shape[0] if io.input_shape else 16))
    return torch.rand(batch, io.d_in)
