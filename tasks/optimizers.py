"""Optimisers with their learning-rate schedules, by name (`--optimizer`, the supervised
trainer): each builds (optimizer, per-step scheduler) from the trainable parameters, the
learning rate, the weight decay, the run's total steps and its warm-up steps.

    adamw     AdamW (fused where supported), linear decay to 0 over all steps after the
              task's linear warm-up (Chen et al.'s recipe; the default of every task)
    sgd-step  SGD with momentum 0.9, the lr times 0.2 at 50%, 70% and 90% of the steps
              (Yu & Zhang's checkerboard recipe: yyy32/HanNet checkerboard_experiments/
              main.py, MultiStepLR(milestones=[0.5, 0.7, 0.9] * maxiter, gamma=0.2),
              stepped per iteration); no warm-up
    adamw-uvit  AdamW with betas (0.9, 0.9), the task's linear warm-up, then a constant
              rate: the diffusion recipe of Hu & Rostami (Table 5: AdamW, lr 2e-4, weight
              decay 0.03, betas (0.9, 0.9), "Linear" schedule with 5,000 warm-up steps,
              settings they took from U-ViT, whose schedule is a warm-up then constant)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from core.registry import Registry

Built = tuple[torch.optim.Optimizer, Any]
OptimizerFactory = Callable[[list[nn.Parameter], float, float, int, int], Built]
OPTIMIZERS: Registry[OptimizerFactory] = Registry("optimizer")
DEFAULT_OPTIMIZER = "adamw"


def make_adamw(
    params: list[nn.Parameter], lr: float, weight_decay: float, betas: tuple[float, float] = (0.9, 0.999)
) -> torch.optim.AdamW:
    """AdamW, fused (one kernel for all parameters) where this torch supports it."""
    try:
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=betas, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=betas, foreach=True)


def linear_decay_factor(total_steps: int, warmup_steps: int = 0) -> Callable[[int], float]:
    """The multiplier of step s (0-based): (1 - s / total_steps), times (s + 1) /
    warmup_steps during the first warmup_steps."""

    def factor(s: int) -> float:
        ramp = min(1.0, (s + 1) / warmup_steps) if warmup_steps > 0 else 1.0
        return ramp * max(0.0, 1.0 - s / total_steps)

    return factor


def warmup_constant_factor(warmup_steps: int) -> Callable[[int], float]:
    """The multiplier of step s: (s + 1) / warmup_steps during the warm-up, then 1."""
    return lambda s: min(1.0, (s + 1) / warmup_steps) if warmup_steps > 0 else 1.0


def linear_decay(
    optimizer: torch.optim.Optimizer, total_steps: int, warmup_steps: int = 0
) -> torch.optim.lr_scheduler.LambdaLR:
    """lr * (1 - step / total_steps), stepped once per optimiser step: 0 after the last;
    with warmup_steps > 0 also times (step + 1) / warmup_steps during the first steps."""
    return torch.optim.lr_scheduler.LambdaLR(optimizer, linear_decay_factor(total_steps, warmup_steps))


def warmup_constant(optimizer: torch.optim.Optimizer, warmup_steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    """lr * (step + 1) / warmup_steps during the warm-up, then lr."""
    return torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_constant_factor(warmup_steps))


def step_decay(
    optimizer: torch.optim.Optimizer, total_steps: int, at: tuple[float, ...] = (0.5, 0.7, 0.9), gamma: float = 0.2
) -> torch.optim.lr_scheduler.LambdaLR:
    """lr * gamma^(number of fractions in `at` that step / total_steps has reached)."""
    marks = [f * total_steps for f in at]
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: gamma ** sum(s >= m for m in marks))


@OPTIMIZERS.register("adamw")
def _adamw(params, lr, weight_decay, total_steps, warmup_steps) -> Built:
    optimizer = make_adamw(params, lr, weight_decay)
    return optimizer, linear_decay(optimizer, total_steps, warmup_steps)


@OPTIMIZERS.register("sgd-step")
def _sgd_step(params, lr, weight_decay, total_steps, warmup_steps) -> Built:
    optimizer = torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=weight_decay)
    return optimizer, step_decay(optimizer, total_steps)


UVIT_BETAS = (0.9, 0.9)  # Hu & Rostami, Table 5


@OPTIMIZERS.register("adamw-uvit")
def _adamw_uvit(params, lr, weight_decay, total_steps, warmup_steps) -> Built:
    optimizer = make_adamw(params, lr, weight_decay, betas=UVIT_BETAS)
    return optimizer, warmup_constant(optimizer, warmup_steps)


# -- fused training (tasks/fused_train.py) ----------------------------------------------
@dataclass(frozen=True)
class FusedRule:
    """An optimiser the fused trainer runs on stacked tensors: AdamW's betas and the
    schedule's multiplier of step s, from (total_steps, warmup_steps)."""

    betas: tuple[float, float]
    schedule: Callable[[int, int], Callable[[int], float]]


# The optimisers of OPTIMIZERS a pack can train with; a run with another trains alone.
FUSED_OPTIMIZERS: dict[str, FusedRule] = {
    "adamw": FusedRule((0.9, 0.999), linear_decay_factor),
    "adamw-uvit": FusedRule(UVIT_BETAS, lambda total, warmup: warmup_constant_factor(warmup)),
}


class StackedAdamW:
    """AdamW on stacked tensors (K, ...) with a learning rate and a weight decay per member
    (dim 0): torch.optim.AdamW's update (its single-tensor form, eps 1e-8), member by member,

        p <- p (1 - lr_k wd_k);  m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
        p <- p - lr_k / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)

    A member whose rate is 0 (a stopped run) does not move. The tensors are moved into
    one (K, P) buffer (each becomes a view of its columns), so that a step is a handful
    of operations on that buffer, whatever the number of tensors: the gradients are
    gathered into it with one `torch.cat`."""

    def __init__(
        self,
        params: list[torch.Tensor],
        lr: torch.Tensor,
        weight_decay: torch.Tensor,
        betas: tuple[float, float],
        eps: float = 1e-8,
    ) -> None:
        self.params, self.betas, self.eps, self.t = list(params), betas, eps, 0
        k = self.params[0].shape[0]
        self.lr, self.weight_decay = lr.view(k, 1), weight_decay.view(k, 1)
        with torch.no_grad():
            self.flat = torch.cat([p.detach().reshape(k, -1) for p in self.params], dim=1)
            start = 0
            for p in self.params:
                n = p[0].numel()
                p.data = self.flat[:, start : start + n].view(p.shape)
                start += n
        self.m = torch.zeros_like(self.flat)
        self.v = torch.zeros_like(self.flat)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self, scale: torch.Tensor) -> None:
        """One update with member k's rate lr_k * scale_k (scale: (K,), the schedule's
        factor, 0 for a stopped member)."""
        k = self.flat.shape[0]
        grad = torch.cat(
            [(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(k, -1) for p in self.params], dim=1
        )
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, (1 - b2**self.t) ** 0.5
        rate = self.lr * scale.view(k, 1)
        self.flat.mul_(1 - rate * self.weight_decay)
        self.m.lerp_(grad, 1 - b1)
        self.v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        denom = self.v.sqrt().div_(c2).add_(self.eps)
        self.flat.addcdiv_(self.m * (rate / c1), denom, value=-1.0)

    def step_members(self, factor: float, live: list[int]) -> None:
        """One update of the `live` members at the schedule's `factor`; the others rest."""
        scale = torch.zeros(self.flat.shape[0], device=self.flat.device)
        scale[live] = factor
        self.step(scale)


class GroupedAdamW:
    """AdamW over members that keep their own tensors (models/ragged_pack.py): torch's
    AdamW (`make_adamw`: fused where supported) with one parameter group a member, its
    learning rate and weight decay, so that one call updates every member. A member's
    rate at a step is lr_k times the schedule's factor, computed as the alone trainer's
    LambdaLR computes it (so a member's updates are those it gets alone); a member that
    has left gets rate 0 and no gradient, and does not move."""

    def __init__(
        self, groups: list[list[torch.Tensor]], lr: list[float], weight_decay: list[float], betas: tuple[float, float]
    ) -> None:
        self.lr = [float(x) for x in lr]
        param_groups = [
            {"params": ps, "lr": r, "weight_decay": float(wd)} for ps, r, wd in zip(groups, self.lr, weight_decay)
        ]
        self.optimizer = make_adamw(param_groups, self.lr[0], float(weight_decay[0]), betas)

    def zero_grad(self) -> None:
        self.optimizer.zero_grad(set_to_none=True)

    def step_members(self, factor: float, live: list[int]) -> None:
        """One update of the `live` members at the schedule's `factor`."""
        alive = set(live)
        for k, group in enumerate(self.optimizer.param_groups):
            group["lr"] = self.lr[k] * factor if k in alive else 0.0
        self.optimizer.step()
