"""The "lm" trainer: one run (one seed) of a language model for a token budget.

As in the papers' (Llama-style) recipe: AdamW with betas (0.9, 0.95) and weight decay 0.1
on the matrices (embeddings and linears; not on RMSNorm scales, as in nanoGPT/Llama
training code), a linear warm-up over the first 5% of steps then a cosine decay to 10% of
the peak learning rate (Llama's final rate), gradient-norm clipping at 1.0, cross-entropy
on next-token logits (plus the auxiliary softmax loss when the task option `z_loss` is set),
bf16 autocast on a GPU (fp32 on the CPU), optionally
`torch.compile` (task option `compile`; evaluation runs the uncompiled module).

Length: `tokens` training tokens per run (spec.train.tokens, else the task's default),
steps = ceil(tokens / (batch_size * context)); `--max-train-samples N` caps the run at N
training windows (tokens <= N * context). `epochs` (spec.train.epochs, else the task's)
is the number of evaluations, at evenly spaced steps, the last at the final step: each is
one EpochRecord (train_loss: the mean training loss since the previous evaluation;
metrics: validation loss/perplexity/bpb on the fixed windows). The state with the best
validation loss is kept; the test metrics are those of that state.

Data: the corpus is a uint8 tensor on the device; each step gathers batch_size random
windows by index with the run's generator (tasks/lm_data.py). Deterministic given the
seed on the CPU. Non-finite loss -> status "diverged", "non-finite loss at step S"
(checked every step on the CPU, every 25 steps on a GPU, from a device tensor of losses).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

import models
from core.errors import UserError
from core.trials import EpochRecord, RunResult, TrialSpec
from tasks.base import Task
from tasks.by_name import TRAINERS
from tasks.lm_data import LMData, autocast
from tasks.train import GPU_CHECK_EVERY, BestValidation, OnEpoch, RunLog, evaluate, guarded_trainer

BETAS = (0.9, 0.95)
GRAD_CLIP = 1.0
MIN_LR_RATIO = 0.1  # the cosine ends at 10% of the peak learning rate (Llama)


@dataclass(frozen=True)
class LMHyper:
    """Resolved training settings of a language-model run."""

    tokens: int
    batch_size: int
    steps: int
    warmup_steps: int
    evals: int
    lr: float
    weight_decay: float

    @classmethod
    def resolve(cls, spec: TrialSpec, task: Task) -> LMHyper:
        d, t, c = task.defaults, spec.train, spec.config

        def pick(*values: Any) -> Any:
            return next(v for v in values if v is not None)

        context = task.io().input_shape[0]
        tokens = int(pick(t.tokens, getattr(d, "tokens", None)))
        if t.max_train_samples is not None:
            tokens = min(tokens, int(t.max_train_samples) * context)
        batch = int(pick(t.batch_size, d.batch_size))  # an out-of-memory retry sets a halved one
        evals = int(pick(t.epochs, d.epochs))
        lr = float(pick(c.get("lr"), t.lr, d.lr))
        wd = float(pick(c.get("weight_decay"), t.weight_decay, d.weight_decay))
        if tokens < 1 or batch < 1 or evals < 1:
            raise UserError(f"need tokens, batch_size and evaluations >= 1, got {tokens}, {batch}, {evals}")
        if not lr > 0 or not wd >= 0:
            raise UserError(f"need lr > 0 and weight_decay >= 0, got {lr} and {wd}")
        steps = math.ceil(tokens / (batch * context))
        warmup = max(1, round(getattr(d, "warmup", 0.05) * steps)) if steps > 1 else 0
        return cls(tokens, batch, steps, warmup, min(evals, steps), lr, wd)

    def eval_steps(self) -> list[int]:
        """1-based steps after which to evaluate: evenly spaced, the last one last."""
        return sorted({round(self.steps * i / self.evals) for i in range(1, self.evals + 1)})


def make_lm_optimizer(model: nn.Module, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW (0.9, 0.95): decay on tensors of 2+ dimensions, none on norm scales; fused
    (one kernel for all parameters) where this torch supports it."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    try:
        return torch.optim.AdamW(groups, lr=lr, betas=BETAS, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.AdamW(groups, lr=lr, betas=BETAS, foreach=True)


def warmup_cosine(optimizer: torch.optim.Optimizer, warmup: int, total: int) -> torch.optim.lr_scheduler.LambdaLR:
    """Factor of the peak lr at step s: (s + 1) / warmup during warm-up, then a cosine from
    1 to MIN_LR_RATIO reached at the last step."""

    def factor(s: int) -> float:
        if s < warmup:
            return (s + 1) / warmup
        progress = min(1.0, (s - warmup) / max(1, total - 1 - warmup))
        return MIN_LR_RATIO + (1 - MIN_LR_RATIO) * 0.5 * (1 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def lm_loss(logits: torch.Tensor, targets: torch.Tensor, z_loss: float = 0.0) -> torch.Tensor:
    """Mean next-token cross-entropy (float32) of logits (B, T, V) against targets (B, T),
    plus `z_loss` * mean(log Z^2) with log Z = logsumexp of each position's logits: the
    auxiliary softmax loss of PaLM (Chowdhery et al. 2022, Sec. 5) that Liao et al. train
    with (task option `z_loss`); it keeps the softmax normaliser near 1."""
    flat = logits.float().flatten(0, 1)
    loss = F.cross_entropy(flat, targets.flatten())
    if z_loss:
        loss = loss + z_loss * torch.logsumexp(flat, dim=-1).pow(2).mean()
    return loss


@TRAINERS.register("lm")
@guarded_trainer
def train_lm(
    spec: TrialSpec, task: Task, data: LMData, seed: int, index: int, on_epoch: OnEpoch | None, run: RunLog
) -> RunResult:
    """One seed of a language-model run."""
    hyper = LMHyper.resolve(spec, task)
    device = data.device
    check_every = 1 if device.type == "cpu" else GPU_CHECK_EVERY
    torch.manual_seed(seed)
    generator = torch.Generator(device=device).manual_seed(seed)
    model = models.get_family(spec.family).build(spec.config, task.io(), seed=seed).to(device)
    # `--compile MODE`, or the task option compile=true (torch.compile's default mode)
    mode = spec.train.compile or ("default" if task.options.get("compile") else None)
    forward = torch.compile(model, mode=mode) if mode else model
    optimizer = make_lm_optimizer(model, hyper.lr, hyper.weight_decay)
    scheduler = warmup_cosine(optimizer, hyper.warmup_steps, hyper.steps)
    params = [p for p in model.parameters() if p.requires_grad]
    losses = torch.empty(hyper.steps, device=device)
    eval_at = set(hyper.eval_steps())
    z_loss = float(task.options.get("z_loss", 0.0))

    best = BestValidation(task)
    checked = since = 0  # steps checked for finiteness / first step of this interval
    model.train()
    for step in range(hyper.steps):
        inputs, targets = data.train_batch(hyper.batch_size, generator)
        with autocast(device):
            logits = forward(inputs)
        loss = lm_loss(logits, targets, z_loss)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, GRAD_CLIP, foreach=True)
        optimizer.step()
        scheduler.step()
        losses[step] = loss.detach()
        done = step + 1
        evaluate_now = done in eval_at
        if done % check_every == 0 or evaluate_now:
            finite = torch.isfinite(losses[checked:done])
            if not bool(finite.all()):
                bad = checked + int((~finite).nonzero()[0, 0]) + 1
                return run.result("diverged", f"non-finite loss at step {bad}")
            checked = done
        if not evaluate_now:
            continue
        train_loss = float(losses[since:done].mean())
        since = done
        record = EpochRecord(len(run.epochs) + 1, train_loss, evaluate(model, data, "val"), run.elapsed())
        run.epochs.append(record)
        best.observe(model, record, index, on_epoch)
    return best.finish(model, data, run.result, "evaluation", seed)
