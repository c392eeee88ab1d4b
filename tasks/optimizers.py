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

from typing import Any, Callable

import torch
from torch import nn

from core.registry import Registry

Built = tuple[torch.optim.Optimizer, Any]
OptimizerFactory = Callable[[list[nn.Parameter], float, float, int, int], Built]
OPTIMIZERS: Registry[OptimizerFactory] = Registry("optimizer")
DEFAULT_OPTIMIZER = "adamw"


def make_adamw(params: list[nn.Parameter], lr: float, weight_decay: float,
               betas: tuple[float, float] = (0.9, 0.999)) -> torch.optim.AdamW:
    """AdamW, fused (one kernel for all parameters) where this torch supports it."""
    try:
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=betas, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=betas, foreach=True)


def linear_decay(
    optimizer: torch.optim.Optimizer, total_steps: int, warmup_steps: int = 0
) -> torch.optim.lr_scheduler.LambdaLR:
    """lr * (1 - step / total_steps), stepped once per optimiser step: 0 after the last;
    with warmup_steps > 0 also times (step + 1) / warmup_steps during the first steps."""

    def factor(s: int) -> float:
        ramp = min(1.0, (s + 1) / warmup_steps) if warmup_steps > 0 else 1.0
        return ramp * max(0.0, 1.0 - s / total_steps)

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def warmup_constant(optimizer: torch.optim.Optimizer, warmup_steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    """lr * (step + 1) / warmup_steps during the warm-up, then lr."""
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup_steps) if warmup_steps > 0 else 1.0)


def step_decay(optimizer: torch.optim.Optimizer, total_steps: int,
               at: tuple[float, ...] = (0.5, 0.7, 0.9), gamma: float = 0.2) -> torch.optim.lr_scheduler.LambdaLR:
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
