"""Training throughput of the hourglass Transformer LM: ours against a textbook baseline.

One byte-level hourglass model (d_model=256, L=4, K=4, d_h=102, 4 heads, context 128,
batch 32) trained on Shakespeare windows for the same steps by
  ours:     models/transformer_lm.py + the "lm" trainer's step (tasks/lm_train.py): fused
            QKV and W1/W3 linears, PyTorch's fused scaled_dot_product_attention (causal),
            F.rms_norm, fused AdamW, bf16 autocast on a GPU (fp32 on the CPU);
  baseline: the same model written plainly, nn.MultiheadAttention-style: separate Q, K,
            V, O and W1, W3, W2 linears, attention as softmax(QK^T / sqrt(d) + causal
            mask) V with the T x T matrix materialised, RMSNorm by hand,
            torch.optim.AdamW with its default implementation, always fp32.
Both rotate with Llama's complex-number RoPE (models/rope.py).
Both start from the same weights (the baseline's are copied from ours and its logits are
checked against ours before timing), take the same batches (windows gathered by index
from the uint8 corpus), and use the same clipping and schedule-free peak learning rate.
They run in this process, alternating (the order flips every repeat). Reported: tokens/s
per repeat (median) and the ratio ours/baseline.

    python -m benchmarks.speed.transformer_throughput [--data-dir ../shared/data] [--steps 8]
        [--repeats 5] [--batch 32] [--device cpu]

Other processes on the machine distort CPU timings; the load average is printed at the
start and the end so that a disturbed run can be recognised.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

import models
import tasks
from benchmarks.bench_util import cpu_name
from tasks.lm_data import autocast
from tasks.lm_train import GRAD_CLIP, lm_loss, make_lm_optimizer

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = str(REPO.parent / "shared" / "data") if (REPO.parent / "shared" / "data").is_dir() else None

CONFIG = {"d_model": 256, "L": 4, "K": 4, "d_h": 102, "n_heads": 4}
LR, WD = 1e-3, 0.1


# ---------------------------------------------------------------- the plain baseline


class PlainRMSNorm(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.weight


class PlainAttention(nn.Module):
    def __init__(self, d: int, n_heads: int) -> None:
        super().__init__()
        self.h, self.hd = n_heads, d // n_heads
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(d, d, bias=False) for _ in range(4))

    def forward(self, x, freqs):  # freqs: (T, hd/2) complex
        B, T, D = x.shape
        q, k, v = (w(x).view(B, T, self.h, self.hd) for w in (self.wq, self.wk, self.wv))
        q = torch.view_as_real(torch.view_as_complex(q.reshape(B, T, self.h, -1, 2)) * freqs[:, None]).flatten(3)
        k = torch.view_as_real(torch.view_as_complex(k.reshape(B, T, self.h, -1, 2)) * freqs[:, None]).flatten(3)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, H, T, hd)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        mask = torch.full((T, T), float("-inf"), device=x.device).triu(1)
        y = (scores + mask).softmax(-1) @ v
        return self.wo(y.transpose(1, 2).reshape(B, T, D))


class PlainSwiGLU(nn.Module):
    def __init__(self, d: int, d_h: int) -> None:
        super().__init__()
        self.w1, self.w3 = nn.Linear(d, d_h, bias=False), nn.Linear(d, d_h, bias=False)
        self.w2 = nn.Linear(d_h, d, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class PlainLayer(nn.Module):
    def __init__(self, c: dict) -> None:
        super().__init__()
        self.attn_norm, self.attn = PlainRMSNorm(c["d_model"]), PlainAttention(c["d_model"], c["n_heads"])
        self.norms = nn.ModuleList(PlainRMSNorm(c["d_model"]) for _ in range(c["K"]))
        self.ffns = nn.ModuleList(PlainSwiGLU(c["d_model"], c["d_h"]) for _ in range(c["K"]))

    def forward(self, x, freqs):
        x = x + self.attn(self.attn_norm(x), freqs)
        for norm, ffn in zip(self.norms, self.ffns):
            x = x + ffn(norm(x))
        return x


class PlainLM(nn.Module):
    def __init__(self, c: dict, vocab: int, context: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, c["d_model"])
        self.layers = nn.ModuleList(PlainLayer(c) for _ in range(c["L"]))
        self.norm, self.head = PlainRMSNorm(c["d_model"]), nn.Linear(c["d_model"], vocab, bias=False)
        hd = c["d_model"] // c["n_heads"]
        inv = 1.0 / 10000.0 ** (torch.arange(0, hd, 2).float() / hd)
        self.register_buffer(
            "freqs", torch.polar(torch.ones(context, hd // 2), torch.outer(torch.arange(context).float(), inv))
        )

    def forward(self, idx):
        x = self.embed(idx)
        for layer in self.layers:
            x = layer(x, self.freqs[: idx.shape[1]])
        return self.head(self.norm(x))

    @torch.no_grad()
    def copy_from(self, ours: nn.Module) -> None:
        """Take the weights of our model (split fused QKV and W1/W3)."""
        self.embed.weight.copy_(ours.embed.weight)
        self.norm.weight.copy_(ours.norm.weight)
        self.head.weight.copy_(ours.head.weight)
        for mine, theirs in zip(self.layers, ours.layers):
            mine.attn_norm.weight.copy_(theirs.attn_norm.weight)
            for w, part in zip((mine.attn.wq, mine.attn.wk, mine.attn.wv), theirs.attn.wqkv.weight.chunk(3)):
                w.weight.copy_(part)
            mine.attn.wo.weight.copy_(theirs.attn.wo.weight)
            for norm, ffn, block in zip(mine.norms, mine.ffns, theirs.ffn):
                norm.weight.copy_(block.norm.weight)
                w1, w3 = block.ffn.w13.weight.chunk(2)
                ffn.w1.weight.copy_(w1)
                ffn.w3.weight.copy_(w3)
                ffn.w2.weight.copy_(block.ffn.w2.weight)


# ---------------------------------------------------------------- timing


class Side:
    def __init__(self, model, optimizer, data, batch, use_autocast):
        self.model, self.opt, self.data, self.batch, self.autocast = model, optimizer, data, batch, use_autocast
        self.gen = torch.Generator(device=data.device).manual_seed(0)
        self.params = [p for p in model.parameters() if p.requires_grad]

    def run(self, steps: int) -> int:
        self.model.train()
        for _ in range(steps):
            x, y = self.data.train_batch(self.batch, self.gen)
            with autocast(self.data.device) if self.autocast else contextlib.nullcontext():
                logits = self.model(x)
            loss = lm_loss(logits, y)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.params, GRAD_CLIP)
            self.opt.step()
        if self.data.device.type == "cuda":
            torch.cuda.synchronize(self.data.device)
        return steps * self.batch * self.data.context


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--data-dir",
        default=SHARED_DATA,
        help="default: ../shared/data when it is there, else the search order (cache, download)",
    )
    p.add_argument("--steps", type=int, default=8, help="training steps per timed block")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--device", default="cpu")
    args = p.parse_args(argv)

    device = tasks.resolve_device(args.device)
    task = tasks.get_task("lm-shakespeare")
    data = tasks.load_data(task, args.data_dir, device)
    io = task.io()
    torch.manual_seed(0)
    ours_model = models.get_family("transformer-hourglass").build(CONFIG, io).to(device)
    base_model = PlainLM(CONFIG, io.d_in, io.input_shape[0]).to(device)
    base_model.copy_from(ours_model)
    x, _ = data.train_batch(4, torch.Generator(device=device).manual_seed(1))
    with torch.no_grad():
        diff = float((ours_model(x) - base_model(x)).abs().max())
    assert diff < 1e-3, f"the baseline is not the same model: max |logit difference| {diff}"

    ours = Side(ours_model, make_lm_optimizer(ours_model, LR, WD), data, args.batch, True)
    base_opt = torch.optim.AdamW(base_model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=WD)
    base = Side(base_model, base_opt, data, args.batch, False)

    n = models.get_family("transformer-hourglass").count_params(CONFIG, io)
    print(
        f"machine: {cpu_name()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, device {tasks.device_label(device)}"
    )
    print(
        f"model: transformer-hourglass {CONFIG}, {n:,} non-embedding parameters, batch {args.batch} x "
        f"context {data.context}, {args.steps} steps per block, {args.repeats} repeats (+ a warm-up); "
        f"same logits as the baseline within {diff:.1e}"
    )
    print(f"load average at start: {os.getloadavg()[0]:.2f}\n")

    ours.run(2)
    base.run(2)
    rates: dict[str, list[float]] = {"ours": [], "baseline": []}
    for r in range(args.repeats):
        order = [("ours", ours), ("baseline", base)]
        for name, side in order if r % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            tokens = side.run(args.steps)
            rates[name].append(tokens / (time.perf_counter() - t0))
    o, b = statistics.median(rates["ours"]), statistics.median(rates["baseline"])
    print("| implementation | tokens/s (median) | per repeat |")
    print("|---|---:|---|")
    print(
        f"| ours (fused SDPA, fused QKV/W13, fused AdamW) | {o:,.0f} | {', '.join(f'{v:,.0f}' for v in rates['ours'])} |"
    )
    print(
        f"| baseline (explicit softmax attention, fp32) | {b:,.0f} | {', '.join(f'{v:,.0f}' for v in rates['baseline'])} |"
    )
    print(f"| **ratio ours / baseline** | **{o / b:.2f}x** | |")
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
