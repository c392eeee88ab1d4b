"""A byte corpus on a device: random training windows, fixed evaluation windows.

The three contiguous splits are uint8 tensors held on the training device; a batch is B
windows of context + 1 bytes gathered by index (inputs: the first `context`, targets: the
last `context`), with random starts drawn from the run's generator -- no DataLoader.

Evaluation is cheap and deterministic: each of val/test has a FIXED set of windows,
min(eval_tokens // context, what fits) windows whose starts are evenly spaced over the
split, the same for every evaluation, trial and device. Metrics over all their tokens:
  loss        mean cross-entropy, nats per token (the primary metric, minimised)
  perplexity  exp(loss)
  bpb         bits per byte = loss / ln 2 (byte-level: one token is one byte)
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable

import torch
import torch.nn.functional as F

from core.errors import DataError
from tasks.datasets.text import TextSplits

EVAL_BATCH = 64  # windows per evaluation forward pass


def autocast(device: torch.device) -> contextlib.AbstractContextManager:
    """bf16 autocast on a GPU, nothing on the CPU (fp32 there)."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def eval_starts(n: int, context: int, max_tokens: int) -> torch.Tensor:
    """Evenly spaced starts of the fixed evaluation windows of a split of n bytes."""
    last = n - context - 1  # the last start whose window (context + 1 bytes) fits
    count = max(1, min(max_tokens // context, last // context + 1))
    if count == 1:
        return torch.zeros(1, dtype=torch.long)
    return torch.linspace(0, last, count, dtype=torch.float64).round().long()


class LMData:
    """The `TaskData` of a language-model task (see tasks/lm_train.py for its use)."""

    def __init__(self, splits: TextSplits, context: int, eval_tokens: int, device: torch.device) -> None:
        for name, part in zip(("train", "validation", "test"), (splits.train, splits.val, splits.test)):
            if len(part) < context + 1:
                raise DataError(
                    f"{splits.source}: the {name} split has {len(part)} bytes, fewer than context + 1 = "
                    f"{context + 1}; use a longer text or a shorter context"
                )
        self.device = torch.device(device)
        self.context = context
        self.source = splits.record()  # which text: corpus, file, SHA-256, bytes (stored with each run)
        self.tokens = {
            k: v.to(self.device) for k, v in (("train", splits.train), ("val", splits.val), ("test", splits.test))
        }
        self.starts = {
            k: eval_starts(len(self.tokens[k]), context, eval_tokens).to(self.device) for k in ("val", "test")
        }
        self._offsets = torch.arange(context + 1, device=self.device)

    @property
    def n_train(self) -> int:
        """Training tokens (bytes)."""
        return len(self.tokens["train"])

    def eval_tokens(self, split: str) -> int:
        return len(self.starts[split]) * self.context

    def _windows(self, split: str, starts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        w = self.tokens[split][starts[:, None] + self._offsets].long()  # (B, context + 1)
        return w[:, :-1], w[:, 1:]

    def train_batch(self, batch_size: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """(inputs, targets), each (batch_size, context) int64, at random starts."""
        high = self.n_train - self.context  # starts 0 .. n - context - 1
        starts = torch.randint(0, high, (batch_size,), generator=generator, device=self.device)
        return self._windows("train", starts)

    def evaluate(self, model: Callable[[torch.Tensor], torch.Tensor], split: str) -> dict[str, float]:
        """Loss, perplexity and bits per byte on the split's fixed windows (call under
        inference mode, model in eval mode)."""
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        starts = self.starts[split]
        for i in range(0, len(starts), EVAL_BATCH):
            inputs, targets = self._windows(split, starts[i : i + EVAL_BATCH])
            with autocast(self.device):
                logits = model(inputs)
            total += F.cross_entropy(logits.float().flatten(0, 1), targets.flatten(), reduction="sum").double()
        loss = float(total) / self.eval_tokens(split)  # the one sync
        return {"loss": loss, "perplexity": math.exp(min(loss, 700.0)), "bpb": loss / math.log(2)}
