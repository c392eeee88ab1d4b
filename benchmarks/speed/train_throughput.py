"""Training throughput: our trainer's inner loop against a plain PyTorch DataLoader loop.

One MNIST denoising hourglass (d_z=1150, d_h=115, L=10; batch 128) trained by
  ours:     tasks.train.train_epoch -- the whole data set as a uint8 tensor, batches by
            index, noise drawn per batch, fused AdamW, no per-step host sync;
  baseline: a torch.utils.data.Dataset returning one (noisy, clean) sample per
            __getitem__ (noise added per sample) and DataLoader(batch_size=128,
            shuffle=True), AdamW with its default implementation, same lr schedule.
Both run in this process, alternating (the order flips every repeat), on the same real
MNIST training split. Reported: samples/s per repeat (median), the ratio ours/baseline,
and a breakdown of one batch into data preparation and compute (forward, backward,
optimiser step) to show where the time goes.

    python -m benchmarks.speed.train_throughput [--data-dir ../shared/data] [--steps 120]
        [--epochs E] [--repeats 5] [--device cpu] [--config D_Z,D_H,L]

`--config 785,16,2` times the GPU checklist's small model instead, where launch and host
overheads dominate.

Other processes on the machine distort CPU timings badly (two OpenMP threads with one
core taken by someone else slow every parallel region); the load average is printed at
the start and the end so a disturbed run can be recognised.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

import models
import tasks
from benchmarks.bench_util import cpu_name
from tasks.train import batch_bounds, linear_decay, make_optimizer, train_epoch

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = str(REPO.parent / "shared" / "data") if (REPO.parent / "shared" / "data").is_dir() else None

CONFIG = {"d_z": 1150, "d_h": 115, "L": 10}
BATCH = 128
LR, WD, NOISE = 1e-3, 0.01, 0.25


class NoisyMNIST(Dataset):
    """The usual per-sample dataset: one (noisy, clean) pair of flat images per index."""

    def __init__(self, images: torch.Tensor) -> None:
        self.images = images.flatten(1).float().div(255.0)

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.images[i]
        return (x + NOISE * torch.randn_like(x)).clamp(0.0, 1.0), x


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def parse_config(text: str) -> dict[str, int]:
    d_z, d_h, layers = (int(v) for v in text.split(","))
    return {"d_z": d_z, "d_h": d_h, "L": layers}


class Ours:
    def __init__(self, data, io, device, total_steps, compiled: str | None = None):
        torch.manual_seed(0)
        self.model = models.get_family("hourglass").build(CONFIG, io, seed=0).to(device)
        self.forward = torch.compile(self.model, mode=compiled) if compiled else self.model
        self.opt = make_optimizer(list(self.model.parameters()), LR, WD)
        self.sched = linear_decay(self.opt, total_steps)
        self.gen = torch.Generator(device=device).manual_seed(0)
        self.data, self.device = data, device

    def run(self, steps: int) -> int:
        train_epoch(
            self.forward,
            self.opt,
            self.sched,
            self.data,
            self.gen,
            n_train=self.data.n_train,
            batch_size=BATCH,
            max_steps=steps,
        )
        sync(self.device)
        return sum(b - a for a, b in batch_bounds(self.data.n_train, BATCH)[:steps])


class Baseline:
    def __init__(self, images, io, device, total_steps):
        torch.manual_seed(0)
        self.model = models.get_family("hourglass").build(CONFIG, io, seed=0).to(device)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=LR, weight_decay=WD)
        self.sched = linear_decay(self.opt, total_steps)
        self.loader = DataLoader(NoisyMNIST(images), batch_size=BATCH, shuffle=True)
        self.device = device

    def run(self, steps: int) -> int:
        n = 0
        self.model.train()
        for step, (noisy, clean) in enumerate(self.loader):
            if step == steps:
                break
            noisy, clean = noisy.to(self.device), clean.to(self.device)
            loss = F.mse_loss(self.model(noisy), clean)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.sched.step()
            n += len(noisy)
        sync(self.device)
        return n


def timed(fn, *args) -> tuple[float, int]:
    t0 = time.perf_counter()
    n = fn(*args)
    return time.perf_counter() - t0, n


def breakdown(ours: Ours, base: Baseline, steps: int, device) -> dict[str, float]:
    """Milliseconds per batch of data preparation and of compute, for each side."""
    data, gen = ours.data, ours.gen
    perm = torch.randperm(data.n_train, generator=gen, device=device)
    t0 = time.perf_counter()
    for s in range(steps):
        inputs, targets = data.train_batch(perm[s * BATCH : (s + 1) * BATCH], gen)
    sync(device)
    ours_data = (time.perf_counter() - t0) / steps
    t0 = time.perf_counter()
    for s, _batch in enumerate(base.loader):
        if s + 1 == steps:
            break
    base_data = (time.perf_counter() - t0) / steps

    def compute(model, opt):  # both loops use zero_grad(set_to_none=True) (torch's default)
        for _ in range(2):  # warm-up
            loss = F.mse_loss(model(inputs), targets)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        sync(device)
        fwd = bwd = stp = 0.0
        for _ in range(steps):
            t0 = time.perf_counter()
            loss = F.mse_loss(model(inputs), targets)
            sync(device)
            t1 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            sync(device)
            t2 = time.perf_counter()
            opt.step()
            sync(device)
            t3 = time.perf_counter()
            fwd, bwd, stp = fwd + t1 - t0, bwd + t2 - t1, stp + t3 - t2
        return fwd / steps, bwd / steps, stp / steps

    of, ob, os_ = compute(ours.model, ours.opt)
    bf, bb, bs = compute(base.model, base.opt)
    return {
        "ours_data": ours_data,
        "base_data": base_data,
        "ours_fwd": of,
        "ours_bwd": ob,
        "ours_step": os_,
        "base_fwd": bf,
        "base_bwd": bb,
        "base_step": bs,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--data-dir",
        default=SHARED_DATA,
        help="default: ../shared/data when it is there, else the search order (cache, download)",
    )
    p.add_argument("--steps", type=int, default=120, help="batches per timed block")
    p.add_argument("--epochs", type=float, default=None, help="time this many epochs per block instead")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--device", default="cpu")
    p.add_argument(
        "--compile",
        nargs="?",
        const="default",
        default=None,
        metavar="MODE",
        help="also time ours with the model under torch.compile(mode=MODE) (default, reduce-overhead "
        "for CUDA graphs, ...; what `search run --compile MODE` gives a trial)",
    )
    p.add_argument(
        "--config",
        type=parse_config,
        default=None,
        metavar="D_Z,D_H,L",
        help=f"the hourglass to train (default {CONFIG['d_z']},{CONFIG['d_h']},{CONFIG['L']})",
    )
    args = p.parse_args(argv)
    if args.config:
        CONFIG.update(args.config)

    device = tasks.resolve_device(args.device)
    task = tasks.get_task("mnist-denoise")
    data = tasks.load_data(task, args.data_dir, device)
    steps_per_epoch = len(batch_bounds(data.n_train, BATCH))
    steps = int(args.epochs * steps_per_epoch) if args.epochs else args.steps
    total = steps * (args.repeats + 1)
    ours = Ours(data, task.io(), device, total)
    sides = {"ours": ours}
    if args.compile:
        sides["ours+compile"] = Ours(data, task.io(), device, total, compiled=args.compile)
    base = Baseline(data.x["train"].cpu(), task.io(), device, total)

    print(
        f"machine: {cpu_name()}, {os.cpu_count()} CPUs, "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {tasks.device_label(device)}"
    )
    print(
        f"model: hourglass {CONFIG}, {models.trainable_params(ours.model):,} parameters, batch {BATCH}, "
        f"{steps} steps per block, {args.repeats} repeats (+ a warm-up)"
    )
    print(f"load average at start: {os.getloadavg()[0]:.2f}\n")

    sides["baseline"] = base
    for side in sides.values():
        side.run(min(steps, 10))
    rates: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(args.repeats):
        order = list(sides.items())
        for name, side in order if r % 2 == 0 else order[::-1]:
            dt, n = timed(side.run, steps)
            rates[name].append(n / dt)
    med = {name: statistics.median(v) for name, v in rates.items()}
    o, b = med["ours"], med["baseline"]
    labels = {
        "ours": "ours (tensor batches, fused AdamW)",
        "ours+compile": f"ours, model under torch.compile ({args.compile})",
        "baseline": "baseline (Dataset + DataLoader)",
    }
    print("| trainer | samples/s (median) | per repeat |")
    print("|---|---:|---|")
    for name in sides:
        print(f"| {labels[name]} | {med[name]:,.0f} | {', '.join(f'{v:,.0f}' for v in rates[name])} |")
    print(f"| **ratio ours / baseline** | **{o / b:.2f}x** | |")
    if "ours+compile" in med:
        print(f"| ratio ours+compile / baseline | {med['ours+compile'] / b:.2f}x | |")
    print()

    bd = breakdown(ours, base, min(steps, 30), device)
    ms = lambda k: f"{bd[k] * 1e3:.2f}"  # noqa: E731
    print("| ms per batch of 128 | data preparation | forward | backward | optimiser step | total |")
    print("|---|---:|---:|---:|---:|---:|")
    for side in ("ours", "base"):
        total_ms = sum(bd[f"{side}_{k}"] for k in ("data", "fwd", "bwd", "step")) * 1e3
        label = "ours" if side == "ours" else "baseline"
        print(
            f"| {label} | {ms(side + '_data')} | {ms(side + '_fwd')} | {ms(side + '_bwd')} | "
            f"{ms(side + '_step')} | {total_ms:.2f} |"
        )
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
