"""Diffusion math: schedules, DDIM on a Gaussian toy problem with a known optimal denoiser,
and classifier-free guidance (the Fréchet distance and the sample-quality classifier:
tests/tasks/test_diffusion_quality.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from core.errors import UserError
from tasks.diffusion import (
    SCHEDULES,
    NoiseSchedule,
    cosine_schedule,
    ddim_sample,
    ddim_timesteps,
    guided_eps,
    linear_schedule,
)

REPO = Path(__file__).parents[2]


# ----------------------------------------------------------------------------- schedules


def test_linear_schedule_known_values():
    sch = linear_schedule()
    assert sch.T == 1000 and sch.betas.dtype == torch.float64 and sch.betas.device.type == "cpu"
    ab = sch.alpha_bar
    assert float(ab[0]) == pytest.approx(1 - 1e-4, abs=1e-15)
    assert float(ab[-1]) == pytest.approx(4.04e-5, rel=2e-3)
    assert float(sch.betas[-1]) == pytest.approx(0.02)
    assert torch.allclose(sch.alphas, 1 - sch.betas)
    assert SCHEDULES["linear"] is linear_schedule and SCHEDULES["cosine"] is cosine_schedule


@pytest.mark.parametrize("T", [1000, 50])
def test_cosine_schedule_monotone_in_unit_interval(T):
    sch = cosine_schedule(T)
    ab = sch.alpha_bar
    assert len(ab) == T
    assert bool(((ab > 0) & (ab < 1)).all())
    assert bool((ab[1:] < ab[:-1]).all())
    assert float(sch.betas.max()) <= 0.999
    # improved-diffusion's definition: alpha_bar(t) = f(t + 1) / f(0) before clipping binds
    f = lambda u: math.cos((u / T + 0.008) / 1.008 * math.pi / 2) ** 2  # noqa: E731
    assert float(ab[T // 2]) == pytest.approx(f(T // 2 + 1) / f(0), rel=1e-9)


def test_schedule_rejects_bad_betas():
    with pytest.raises(UserError):
        NoiseSchedule(torch.tensor([0.1, 1.0]))
    with pytest.raises(UserError):
        NoiseSchedule(torch.zeros(0))


def test_alpha_bar_at_gathers_float32_for_int_and_float_indices():
    sch = linear_schedule(100)
    t = torch.tensor([0, 5, 99])
    got = sch.alpha_bar_at(t, "cpu")
    assert got.dtype == torch.float32 and got.shape == (3,)
    assert torch.allclose(got.double(), sch.alpha_bar[t], rtol=1e-6)
    assert torch.equal(sch.alpha_bar_at(t.float()), got)
    with pytest.raises(UserError):
        sch.alpha_bar_at(torch.tensor([100]))


def test_q_sample_moments():
    sch = linear_schedule()
    g = torch.Generator().manual_seed(0)
    n = 200_000
    t = torch.tensor([10, 500, 900]).repeat_interleave(n)
    x0 = torch.full((3 * n, 1), 0.7)
    x = sch.q_sample(x0, t, torch.randn(3 * n, 1, generator=g)).view(3, n)
    ab = sch.alpha_bar[[10, 500, 900]].float()
    se = 4 / math.sqrt(n)
    assert torch.allclose(x.mean(1), 0.7 * ab.sqrt(), atol=se)
    assert torch.allclose(x.var(1), 1 - ab, atol=3 * se)
    assert sch.q_sample(x0[:2].view(2, 1, 1, 1), t[:2], torch.zeros(2, 1, 1, 1)).shape == (2, 1, 1, 1)


# --------------------------------------------------------- Gaussian toy: optimal denoiser


def optimal_eps(sch: NoiseSchedule, mu: torch.Tensor, s: float):
    """eps*(x, t) for x0 ~ N(mu, s^2 I): sqrt(1-ab) (x - sqrt(ab) mu) / (ab s^2 + 1 - ab)."""

    def eps_fn(x, t, y):
        ab = sch.alpha_bar_at(t, x.device).view(-1, *([1] * (x.ndim - 1)))
        return (1 - ab).sqrt() * (x - ab.sqrt() * mu) / (ab * s * s + 1 - ab)

    return eps_fn


@pytest.mark.parametrize("t", [0, 100, 400, 999])
def test_optimal_denoiser_loss(t):
    sch, mu, s, n = linear_schedule(), 0.4, 0.6, 400_000
    g = torch.Generator().manual_seed(t)
    x0 = mu + s * torch.randn(n, 1, dtype=torch.float64, generator=g)
    eps = torch.randn(n, 1, dtype=torch.float64, generator=g)
    tt = torch.full((n,), t)
    xt = sch.q_sample(x0, tt, eps)
    pred = optimal_eps(sch, torch.tensor(mu, dtype=torch.float64), s)(xt, tt, None)
    ab = float(sch.alpha_bar[t])
    expected = ab * s * s / (ab * s * s + 1 - ab)
    loss = (eps - pred).pow(2).mean().item()
    assert loss == pytest.approx(expected, rel=5e-3, abs=1e-5)
    # and it is optimal: a scaled predictor does worse
    assert (eps - 1.05 * pred).pow(2).mean().item() > loss


def ddim_recurrence(sch: NoiseSchedule, steps: int, s: float) -> tuple[float, float]:
    """(F, a_T): DDIM with eps* maps x_T to mu + F (x_T - a_T mu), exactly (every step is
    linear; the deviation from a' mu scales by (a' a s^2 + b' b) / (a^2 s^2 + b^2))."""
    ts = ddim_timesteps(sch.T, steps)
    ab = sch.alpha_bar.tolist()
    factor = 1.0
    for i, t in enumerate(ts):
        a, b = math.sqrt(ab[t]), math.sqrt(1 - ab[t])
        a2 = math.sqrt(ab[ts[i + 1]]) if i + 1 < len(ts) else 1.0
        b2 = math.sqrt(1 - a2 * a2)
        factor *= (a2 * a * s * s + b2 * b) / (a * a * s * s + b * b)
    return factor, math.sqrt(ab[ts[0]])


@pytest.mark.parametrize("kind, steps", [("linear", 100), ("cosine", 50)])
def test_ddim_matches_analytic_recurrence_on_gaussian(kind, steps):
    sch = SCHEDULES[kind]()
    mu, s, n = torch.tensor([0.5, -0.3, 0.0, 0.9]), 0.5, 20_000
    labels = torch.zeros(n, dtype=torch.long)
    g = torch.Generator().manual_seed(1)
    out = ddim_sample(
        optimal_eps(sch, mu, s), sch, labels, (n, 4), steps=steps, guidance=0.0, generator=g, clip_x0=False
    )
    x_T = torch.randn(n, 4, generator=torch.Generator().manual_seed(1))
    factor, a_T = ddim_recurrence(sch, steps, s)
    # per sample, exactly (up to float32 round-off)
    assert torch.allclose(out, mu + factor * (x_T - a_T * mu), atol=1e-4)
    # the moments to Monte Carlo precision
    pred_mean, pred_std = mu * (1 - factor * a_T), factor
    se = pred_std / math.sqrt(n)
    assert torch.allclose(out.mean(0), pred_mean, atol=4 * se)
    assert torch.allclose(out.std(0), torch.full((4,), pred_std), rtol=0.03)
    # the ODE transports N(0, I) to (nearly) N(mu, s^2): the discretisation error is small
    assert factor == pytest.approx(s, rel=0.04)
    assert torch.allclose(out.mean(0), mu, atol=0.02)


def test_ddim_sample_determinism_x_T_and_clipping():
    sch = linear_schedule(100)
    labels = torch.zeros(64, dtype=torch.long)
    zero_eps = lambda x, t, y: torch.zeros_like(x)  # noqa: E731
    kw = dict(steps=10, guidance=0.0)
    a = ddim_sample(zero_eps, sch, labels, (64, 3), generator=torch.Generator().manual_seed(3), **kw)
    b = ddim_sample(zero_eps, sch, labels, (64, 3), generator=torch.Generator().manual_seed(3), **kw)
    assert torch.equal(a, b) and not a.requires_grad
    x_T = 3 * torch.randn(64, 3, generator=torch.Generator().manual_seed(4))
    clipped = ddim_sample(zero_eps, sch, labels, (64, 3), x_T=x_T, **kw)
    assert float(clipped.abs().max()) <= 1.0
    # with eps = 0 and no clipping the sample is x_T / sqrt(ab) of the first timestep
    free = ddim_sample(zero_eps, sch, labels, (64, 3), x_T=x_T, clip_x0=False, **kw)
    assert torch.allclose(free, x_T / math.sqrt(float(sch.alpha_bar[90])), rtol=1e-5)
    assert float(free.abs().max()) > 1.0


def test_ddim_timesteps_and_step_validation():
    assert ddim_timesteps(1000, 50) == list(range(980, -1, -20))
    assert ddim_timesteps(10, 10) == list(range(9, -1, -1))
    assert ddim_timesteps(1000, 1) == [0]
    assert len(ddim_timesteps(1000, 300)) == 300
    sch = linear_schedule(10)
    for bad in (0, 11, -1):
        with pytest.raises(UserError):
            ddim_timesteps(10, bad)
        with pytest.raises(UserError):
            ddim_sample(lambda x, t, y: x, sch, torch.zeros(2, dtype=torch.long), (2, 1), steps=bad, guidance=0.0)


# ------------------------------------------------------------ classifier-free guidance


class TwoGaussians:
    """eps* of N(means[y], s^2) per label (label 2 = null: the midpoint); records calls."""

    def __init__(self, sch, means, s):
        self.sch, self.means, self.s, self.calls = sch, means, s, []

    def __call__(self, x, t, y):
        self.calls.append((x.shape[0], y.clone()))
        ab = self.sch.alpha_bar_at(t, x.device).view(-1, 1)
        return (1 - ab).sqrt() * (x - ab.sqrt() * self.means[y]) / (ab * self.s**2 + 1 - ab)


def test_guidance_zero_is_conditional_sampling_with_one_pass():
    sch, s = linear_schedule(), 0.5
    means = torch.tensor([[1.0, 0.0], [-1.0, 0.5], [0.0, 0.25]])
    model = TwoGaussians(sch, means, s)
    labels = torch.tensor([0, 1] * 500)
    x_T = torch.randn(1000, 2, generator=torch.Generator().manual_seed(5))
    out = ddim_sample(model, sch, labels, (1000, 2), steps=20, guidance=0.0, x_T=x_T, clip_x0=False)
    assert len(model.calls) == 20 and all(b == 1000 for b, _ in model.calls)
    factor, a_T = ddim_recurrence(sch, 20, s)
    mu = means[labels]
    assert torch.allclose(out, mu + factor * (x_T - a_T * mu), atol=1e-4)


@pytest.mark.parametrize("w", [1.0, 3.0])
def test_guidance_combines_cond_and_uncond_in_one_batched_call(w):
    sch, s = linear_schedule(), 0.5
    means = torch.tensor([[1.0, 0.0], [-1.0, 0.5], [0.0, 0.25]])
    model = TwoGaussians(sch, means, s)
    labels = torch.tensor([0, 1] * 100)
    x_T = torch.randn(200, 2, generator=torch.Generator().manual_seed(6))
    out = ddim_sample(model, sch, labels, (200, 2), steps=20, guidance=w, null_label=2, x_T=x_T, clip_x0=False)
    assert len(model.calls) == 20
    assert all(b == 400 and torch.equal(y, torch.cat([labels, torch.full((200,), 2)])) for b, y in model.calls)
    # eps* is affine in the mean, so eps_c + w (eps_c - eps_u) is eps* of the mean
    # (1 + w) m_c - w m_u: guided DDIM equals conditional DDIM towards that mean.
    m_w = (1 + w) * means[labels] - w * means[2]
    factor, a_T = ddim_recurrence(sch, 20, s)
    assert torch.allclose(out, m_w + factor * (x_T - a_T * m_w), atol=1e-4)


def test_guided_eps_one_step_manual():
    def eps_fn(x, t, y):  # an arbitrary function of all three inputs
        return x * (y.float() + 1).view(-1, 1) + t.view(-1, 1) / 100

    x = torch.randn(3, 2, generator=torch.Generator().manual_seed(7))
    t = torch.tensor([10.0, 10.0, 10.0])
    y = torch.tensor([0, 1, 2])
    eps_c, eps_u = eps_fn(x, t, y), eps_fn(x, t, torch.full((3,), 9))
    assert torch.allclose(guided_eps(eps_fn, x, t, y, 2.0, 9), eps_c + 2.0 * (eps_c - eps_u))
    assert torch.equal(guided_eps(eps_fn, x, t, y, 0.0, None), eps_c)
    with pytest.raises(UserError):
        guided_eps(eps_fn, x, t, y, 1.0, None)
    with pytest.raises(UserError):
        ddim_sample(eps_fn, linear_schedule(10), y, (3, 2), steps=2, guidance=1.0)


# ------------------------------------------------------------------ Fréchet distance
