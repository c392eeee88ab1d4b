"""search/engine/sampling/gp_acquisition.py: `log_ehvi` is Optuna's `logehvi`, the batched
line searches are Optuna's one after another, and `swapped` puts Optuna's back."""

import math

import numpy as np
import optuna
import optuna._gp.acqf as acqf_module
import optuna._gp.optim_mixed as optim_module
import pytest
import torch

import search.engine.sampling.gp_acquisition as gp_acquisition
from search.engine.sampling.gp_acquisition import local_search_discrete_batched, log_ehvi, swapped

OPTUNAS_LOGEHVI = gp_acquisition.OPTUNA["logehvi"]
OPTUNAS_DISCRETE = gp_acquisition.OPTUNA["_local_search_discrete_batched"]


def boxes(generator, b=7, m=2):
    lower = torch.randn(b, m, generator=generator, dtype=torch.float64)
    return lower, torch.rand(b, m, generator=generator, dtype=torch.float64) * 2 + 0.01


@pytest.mark.parametrize("objectives", [1, 2, 3, 9])
def test_log_ehvi_is_optunas_logehvi(objectives):
    g = torch.Generator().manual_seed(objectives)
    lower, intervals = boxes(g, m=objectives)
    y = torch.randn(5, 3, 128, objectives, generator=g, dtype=torch.float64) * 2  # some far below every box: clamped
    ours = log_ehvi(y.clone(), lower, intervals)
    assert ours.shape == (5, 3)
    assert torch.allclose(ours, OPTUNAS_LOGEHVI(y.clone(), lower, intervals), rtol=1e-12, atol=1e-12)


def test_log_ehvi_has_optunas_gradient():
    g = torch.Generator().manual_seed(0)
    lower, intervals = boxes(g)
    y = torch.randn(128, 2, generator=g, dtype=torch.float64)
    grads = []
    for f in (log_ehvi, OPTUNAS_LOGEHVI):
        x = y.clone().requires_grad_(True)
        f(x * 1.0, lower, intervals).backward()
        grads.append(x.grad)
    assert grads[0].abs().sum() > 0 and torch.allclose(grads[0], grads[1], rtol=1e-9, atol=1e-12)


def test_all_clamped_at_eps_is_finite():
    lower, intervals = torch.zeros(3, 2, dtype=torch.float64), torch.ones(3, 2, dtype=torch.float64)
    y = torch.full((128, 2), -5.0, dtype=torch.float64)
    assert log_ehvi(y, lower, intervals).item() == pytest.approx(math.log(3 * 1e-24))


class Bumpy:
    """An acquisition function over 2 normalised keys with several local maxima, counting
    its calls and the points it scores."""

    class search_space:  # noqa: N801 (Optuna's attribute)
        is_categorical = np.array([False, False])

    def __init__(self):
        self.calls, self.points = 0, 0

    def eval_acqf_no_grad(self, x):
        self.calls += 1
        x = np.asarray(x, dtype=float)
        self.points += 1 if x.ndim == 1 else len(x)
        value = np.sin(9 * x[..., 0]) + np.cos(5 * x[..., 1]) - (x[..., 0] - 0.6) ** 2
        return value


@pytest.mark.parametrize("grid", [200, 12])  # a line search (more than 16 values) and the exhaustive one
def test_batched_line_searches_find_what_optunas_find_one_after_another(grid):
    rng = np.random.default_rng(grid)
    choices = np.linspace(0, 1, grid)
    starts = np.column_stack([rng.choice(choices, 10), rng.random(10)])
    ours, theirs = Bumpy(), Bumpy()
    values = Bumpy().eval_acqf_no_grad(starts)
    got = local_search_discrete_batched(ours, starts, values.copy(), 0, choices, 1e-3)
    want = OPTUNAS_DISCRETE(theirs, starts, values.copy(), 0, choices, 1e-3)
    for a, b in zip(got, want, strict=True):
        assert np.array_equal(a, b)
    assert got[2].any()  # some start moved
    assert ours.points == theirs.points  # the same points scored...
    assert ours.calls < theirs.calls  # ...in fewer calls


def test_optunas_functions_come_back_after_the_block():
    with swapped():
        assert acqf_module.logehvi is log_ehvi
        assert optim_module._local_search_discrete_batched is local_search_discrete_batched
    assert acqf_module.logehvi is OPTUNAS_LOGEHVI
    assert optim_module._local_search_discrete_batched is OPTUNAS_DISCRETE
    with pytest.raises(RuntimeError), swapped():
        raise RuntimeError
    assert acqf_module.logehvi is OPTUNAS_LOGEHVI


def test_a_function_of_other_parameters_is_left_alone(monkeypatch):
    def logehvi(Y_post, lower, intervals):  # as if Optuna renamed a parameter
        return OPTUNAS_LOGEHVI(Y_post, lower, intervals)

    monkeypatch.setitem(gp_acquisition.OPTUNA, "logehvi", logehvi)
    monkeypatch.setattr(acqf_module, "logehvi", logehvi)
    with swapped():
        assert acqf_module.logehvi is logehvi
        assert optim_module._local_search_discrete_batched is local_search_discrete_batched


def test_optuna_has_what_is_swapped():
    """If this fails, Optuna's GP changed: the swaps are off (the proposals are Optuna's own,
    at Optuna's cost) until gp_acquisition.py follows."""
    assert optuna.__version__ and all(s.replaceable() for s in gp_acquisition.SWAPS)
