"""Speed of the U-shaped diffusion backbones at matched parameter count: training steps
per second and sampling images per second of `lmlp` and `mixer-block`, as ratios to `uvit`
(the L-MLP paper reports L-MLP faster than U-ViT in both).

For each target size, every family gets the same depth, patch and mlp_ratio and the D
(a multiple of 8 valid for it) whose parameter count is closest to the target; the
counts are printed. A training step is forward + MSE + backward + AdamW on a batch of
MNIST-shaped noisy images (x_t, t, y) on the device; sampling is the task's 50-step DDIM
with classifier-free guidance (one batched cond+uncond pass per step). Each timing is the
median of `--repeats` rounds, the families alternating inside a round (side by side in
one process, so machine load hits all of them alike).

    python -m benchmarks.speed.diffusion_backbones [--device cpu] [--batch 64] [--steps 5]
        [--repeats 5] [--samples 20] [--targets 0.5M,2M] [--depth 7] [--patch 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
import torch.nn.functional as F

from benchmarks.bench_util import device_sync
from core.budget import parse_budget
from core.errors import UserError
from core.io import IOSpec
from models import get_family
from tasks.diffusion import SCHEDULES, ddim_sample

FAMILIES = ("uvit", "lmlp", "mixer-block")
IO = IOSpec(784, 784, "noise", (1, 28, 28), (1, 28, 28), 10)


def matched_config(family: str, target: int, depth: int, patch: int, mlp_ratio: float) -> tuple[dict, int]:
    """The config of `family` with D (multiple of 8) whose count is closest to target."""
    fam, best = get_family(family), None
    for D in range(16, 2049, 8):
        cfg = {"D": D, "depth": depth, "patch": patch, "mlp_ratio": mlp_ratio}
        try:
            fam.parse(cfg, IO)
            if fam.shape_violation(cfg, IO):
                continue
        except UserError:
            continue
        n = fam.count_params(cfg, IO)
        if best is None or abs(n - target) < abs(best[1] - target):
            best = (cfg, n)
    assert best is not None
    return best


def train_time(model, opt, batch, steps: int, sync) -> float:
    x, t, y, eps = batch
    for i in range(steps + 1):  # the first step warms up
        if i == 1:
            sync()
            t0 = time.perf_counter()
        loss = F.mse_loss(model(x, t, y), eps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    sync()
    return (time.perf_counter() - t0) / steps


def sample_time(model, n: int, device, sync) -> float:
    schedule = SCHEDULES["linear"](1000)
    labels = torch.arange(n, device=device) % 10
    g = torch.Generator(device=device).manual_seed(0)
    model.eval()
    sync()
    t0 = time.perf_counter()
    ddim_sample(
        model, schedule, labels, (n, 1, 28, 28), steps=50, guidance=1.0, null_label=10, generator=g, device=device
    )
    sync()
    model.train()
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--targets", default="0.5M,2M")
    p.add_argument("--depth", type=int, default=7)
    p.add_argument("--patch", type=int, default=4)
    p.add_argument("--mlp-ratio", type=float, default=4)
    a = p.parse_args()
    dev = torch.device(a.device)
    sync = device_sync(dev)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    print(
        f"torch {torch.__version__}, device {dev} ({name}), threads {torch.get_num_threads()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, load {os.getloadavg()[0]:.2f}, "
        f"batch {a.batch}, depth {a.depth}, patch {a.patch}, mlp_ratio {a.mlp_ratio}"
    )
    print(
        f"{'target':>7} {'family':<12} {'D':>4} {'params':>9} {'step ms':>8} {'steps/s':>8} {'x uvit':>7} "
        f"{'img/s':>7} {'x uvit':>7}"
    )
    g = torch.Generator().manual_seed(0)
    batch = (
        torch.randn(a.batch, 1, 28, 28, generator=g),
        torch.randint(0, 1000, (a.batch,), generator=g).float(),
        torch.randint(0, 11, (a.batch,), generator=g),
        torch.randn(a.batch, 1, 28, 28, generator=g),
    )
    batch = tuple(b.to(dev) for b in batch)
    for target in [parse_budget(s) for s in a.targets.split(",")]:
        models, opts, counts, cfgs = {}, {}, {}, {}
        for f in FAMILIES:
            cfgs[f], counts[f] = matched_config(f, target, a.depth, a.patch, a.mlp_ratio)
            models[f] = get_family(f).build(cfgs[f], IO, seed=0).to(dev)
            opts[f] = torch.optim.AdamW(models[f].parameters(), lr=1e-4)
        steps = {f: [] for f in FAMILIES}
        samples = {f: [] for f in FAMILIES}
        for r in range(a.repeats):
            order = FAMILIES if r % 2 == 0 else FAMILIES[::-1]
            for f in order:
                steps[f].append(train_time(models[f], opts[f], batch, a.steps, sync))
            for f in order:
                samples[f].append(sample_time(models[f], a.samples, dev, sync))
        step = {f: statistics.median(v) for f, v in steps.items()}
        ips = {f: a.samples / statistics.median(v) for f, v in samples.items()}
        for f in FAMILIES:
            print(
                f"{target / 1e6:>6.1f}M {f:<12} {cfgs[f]['D']:>4} "
                f"{counts[f]:>9} {step[f] * 1e3:>8.1f} {1 / step[f]:>8.2f} {step['uvit'] / step[f]:>7.2f} "
                f"{ips[f]:>7.1f} {ips[f] / ips['uvit']:>7.2f}"
            )
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
