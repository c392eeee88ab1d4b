"""Deterministic DDIM sampling (Song et al. 2021, "Denoising Diffusion Implicit Models",
eta = 0) with classifier-free guidance (Ho & Salimans 2022).

Timesteps: the "uniform" skip of ermongroup/ddim, every (T // steps)-th step starting at 0
(0, k, 2k, ...), visited in reverse; exactly `steps` of them (diffusers' "leading"
spacing; the same as ermongroup/ddim's range(0, T, T // steps) whenever steps divides T).
The step from the last timestep (0) goes to alpha_bar_prev = 1, so the result is the model's
x0 prediction there.

One step at timestep t with a = alpha_bar_t and a' = alpha_bar of the next (smaller) one:
    x0_hat = (x - sqrt(1 - a) eps) / sqrt(a)          (clamped to [-1, 1] if clip_x0)
    x'     = sqrt(a') x0_hat + sqrt(1 - a') eps
As in diffusers' DDIMScheduler (clip_sample=True, use_clipped_model_output=False), eps is
not re-derived from the clipped x0_hat.

Guidance in U-ViT's convention (Bao et al. 2023): eps = eps_c + w (eps_c - eps_u), where
eps_u is the prediction for the null label; w = 0 is plain conditional sampling (one model
pass), otherwise the conditional and unconditional passes are one batched call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from core.errors import UserError
from tasks.diffusion.schedule import NoiseSchedule

EpsFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def ddim_timesteps(T: int, steps: int) -> list[int]:  # noqa: N803
    """The DDIM timesteps in visiting order: [(steps-1) k, ..., k, 0] with k = T // steps.

    T=1000, steps=50 -> [980, 960, ..., 20, 0]. steps must lie in 1..T (UserError).
    """
    if not isinstance(steps, int) or isinstance(steps, bool) or not 1 <= steps <= T:
        raise UserError(f"DDIM steps must be an integer in 1..{T}, got {steps!r}")
    k = T // steps
    return [i * k for i in reversed(range(steps))]


def guided_eps(
    eps_fn: EpsFn, x: torch.Tensor, t: torch.Tensor, labels: torch.Tensor, guidance: float, null_label: int | None
) -> torch.Tensor:
    """Classifier-free guided epsilon: eps_c + guidance (eps_c - eps_u).

    x: (B, ...); t: (B,) float; labels: (B,) int64. guidance == 0 calls eps_fn once on the
    batch; otherwise once on the (2B, ...) batch [x; x] with labels [labels; null_label].
    """
    if guidance == 0:
        return eps_fn(x, t, labels)
    if null_label is None:
        raise UserError("classifier-free guidance (guidance != 0) needs null_label")
    null = torch.full_like(labels, int(null_label))
    eps = eps_fn(torch.cat([x, x]), torch.cat([t, t]), torch.cat([labels, null]))
    eps_c, eps_u = eps.chunk(2)
    return eps_c + guidance * (eps_c - eps_u)


@torch.inference_mode()
def ddim_sample(
    eps_fn: EpsFn,
    schedule: NoiseSchedule,
    labels: torch.Tensor,
    shape: Sequence[int],
    *,
    steps: int = 50,
    guidance: float = 1.0,
    null_label: int | None = None,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    clip_x0: bool = True,
    x_T: torch.Tensor | None = None,  # noqa: N803
) -> torch.Tensor:
    """Generate samples of the full batch shape `shape` = (B, ...) for `labels` (B,) int64.

    eps_fn(x (B', ...) float32, t (B',) float32 timesteps, y (B',) int64) -> eps (B', ...).
    x_T defaults to N(0, I) drawn from `generator` (on the generator's device, then moved to
    `device`; device defaults to labels' device). Returns float32 (B, ...) on `device`, in
    the model's data range ([-1, 1] when clip_x0).
    """
    timesteps = ddim_timesteps(schedule.T, steps)
    device = torch.device(device) if device is not None else labels.device
    shape = tuple(int(s) for s in shape)
    labels = labels.to(device=device, dtype=torch.long)
    if labels.shape != (shape[0],):
        raise UserError(f"labels must have shape ({shape[0]},), got {tuple(labels.shape)}")
    if guidance != 0 and null_label is None:
        raise UserError("classifier-free guidance (guidance != 0) needs null_label")
    if x_T is None:
        gen_device = generator.device if generator is not None else device
        x = torch.randn(shape, generator=generator, device=gen_device, dtype=torch.float32).to(device)
    else:
        if tuple(x_T.shape) != shape:
            raise UserError(f"x_T has shape {tuple(x_T.shape)}, expected {shape}")
        x = x_T.to(device=device, dtype=torch.float32)

    ab = schedule.alpha_bar.tolist()
    for i, t in enumerate(timesteps):
        a = ab[t]
        a_prev = ab[timesteps[i + 1]] if i + 1 < len(timesteps) else 1.0
        t_batch = torch.full((shape[0],), float(t), device=device)
        eps = guided_eps(eps_fn, x, t_batch, labels, guidance, null_label).float()
        x0 = (x - (1.0 - a) ** 0.5 * eps) / a**0.5
        if clip_x0:
            x0 = x0.clamp(-1.0, 1.0)
        x = a_prev**0.5 * x0 + (1.0 - a_prev) ** 0.5 * eps
    return x
