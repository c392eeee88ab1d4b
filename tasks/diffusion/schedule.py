"""Noise schedules of a DDPM forward process (Ho et al. 2020, "Denoising Diffusion
Probabilistic Models").

The forward process adds Gaussian noise in T steps with variances betas[0..T-1]:
q(x_t | x_0) = N(sqrt(alpha_bar_t) x_0, (1 - alpha_bar_t) I), alpha_bar_t = prod_{s<=t}
(1 - beta_s). Timesteps are 0-based: t = 0 is the first (least noisy) step, as in the
reference implementations (ermongroup/ddim, improved-diffusion, diffusers).

Betas and alpha_bar are float64 on the CPU; `alpha_bar_at` gathers float32 values on the
device the training/sampling tensors live on.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from core.errors import UserError

COSINE_MAX_BETA = 0.999  # Nichol & Dhariwal 2021: clip betas to avoid a singularity at t = T


@dataclass(frozen=True)
class NoiseSchedule:
    """A forward-process schedule: `betas` is a float64 CPU tensor of shape (T,)."""

    betas: torch.Tensor

    def __post_init__(self) -> None:
        b = torch.as_tensor(self.betas, dtype=torch.float64).detach().cpu()
        if b.ndim != 1 or len(b) == 0:
            raise UserError(f"betas must be a non-empty 1-D tensor, got shape {tuple(b.shape)}")
        if not bool(((b > 0) & (b < 1)).all()):
            raise UserError("betas must lie in (0, 1)")
        object.__setattr__(self, "betas", b)

    @property
    def T(self) -> int:  # noqa: N802 - the usual name of the number of diffusion steps
        """The number of diffusion steps."""
        return len(self.betas)

    @property
    def alphas(self) -> torch.Tensor:
        """(T,) float64: 1 - betas."""
        return 1.0 - self.betas

    @property
    def alpha_bar(self) -> torch.Tensor:
        """(T,) float64: cumulative product of alphas, decreasing from 1 - betas[0]."""
        return torch.cumprod(self.alphas, dim=0)

    def alpha_bar_at(self, t: torch.Tensor, device: torch.device | str | None = None) -> torch.Tensor:
        """alpha_bar gathered at timesteps `t` (any shape, integer or integral float values in
        0..T-1) as float32 on `device` (default: t's device); same shape as t."""
        t = torch.as_tensor(t)
        device = t.device if device is None else device
        idx = t.detach().to("cpu").round().long() if t.is_floating_point() else t.detach().to("cpu").long()
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= self.T):
            raise UserError(f"timesteps must lie in 0..{self.T - 1}, got {int(idx.min())}..{int(idx.max())}")
        return self.alpha_bar[idx].to(device=device, dtype=torch.float32)

    def q_sample(self, x0: torch.Tensor, t: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        """Sample x_t ~ q(x_t | x_0): sqrt(ab_t) x0 + sqrt(1 - ab_t) noise.

        x0, noise: (B, ...) float; t: (B,) timesteps. Returns (B, ...) in x0's dtype.
        """
        if noise.shape != x0.shape:
            raise UserError(f"noise shape {tuple(noise.shape)} differs from x0 shape {tuple(x0.shape)}")
        if t.shape != (x0.shape[0],):
            raise UserError(f"t must have shape ({x0.shape[0]},), got {tuple(t.shape)}")
        return noisy_mix(x0, noise, self.alpha_bar_at(t, x0.device)).to(x0.dtype)


def noisy_mix(x0: torch.Tensor, noise: torch.Tensor, ab: torch.Tensor) -> torch.Tensor:
    """sqrt(ab) x0 + sqrt(1 - ab) noise, with ab (B,) the alpha_bar of each sample's timestep
    (broadcast over x0's other dimensions): the forward process q(x_t | x_0)."""
    ab = ab.view(-1, *([1] * (x0.ndim - 1)))
    return ab.sqrt() * x0 + (1.0 - ab).sqrt() * noise


def linear_schedule(T: int = 1000, beta_start: float = 1e-4, beta_end: float = 0.02) -> NoiseSchedule:  # noqa: N803
    """Ho et al. 2020's schedule: betas linear from beta_start to beta_end over T steps."""
    if T < 1:
        raise UserError(f"T must be >= 1, got {T}")
    return NoiseSchedule(torch.linspace(beta_start, beta_end, T, dtype=torch.float64))


def cosine_schedule(T: int = 1000, s: float = 0.008) -> NoiseSchedule:  # noqa: N803
    """Nichol & Dhariwal 2021 ("Improved DDPM"): alpha_bar(t) = f(t) / f(0) with
    f(t) = cos(((t / T + s) / (1 + s)) pi / 2)^2, betas_t = 1 - alpha_bar(t+1) / alpha_bar(t)
    clipped at 0.999 (improved-diffusion's betas_for_alpha_bar)."""
    if T < 1:
        raise UserError(f"T must be >= 1, got {T}")

    def f(u: torch.Tensor) -> torch.Tensor:
        return torch.cos((u / T + s) / (1 + s) * math.pi / 2) ** 2

    steps = torch.arange(T + 1, dtype=torch.float64)
    ab = f(steps) / f(torch.zeros((), dtype=torch.float64))
    betas = (1.0 - ab[1:] / ab[:-1]).clamp(max=COSINE_MAX_BETA)
    return NoiseSchedule(betas)


SCHEDULES: dict[str, Callable[..., NoiseSchedule]] = {"linear": linear_schedule, "cosine": cosine_schedule}
