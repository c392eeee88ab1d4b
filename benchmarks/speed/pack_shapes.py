"""Issue 81 item 2: can trials of *different* shapes of one family train as one program
faster than one after another on this CPU, without padding?

A pack of 8 residual MLPs (hourglass or conventional) of different widths and depths,
timed per training step (forward, loss, backward, AdamW step; batch 64, one torch
thread) in four forms:

- `alone`: each member trained by itself with the product's optimiser (torch's AdamW,
  `fused=True`: tasks/optimizers.py), the 8 one after another: the baseline;
- `padded`: the residual families' stacked pack (models/residual_mlp_fused.py, every
  member padded to the pack's largest d_z, d_h and L; tasks/optimizers.py
  `StackedAdamW`): the product's pack of different shapes until 2026-12-06, and still
  on a GPU (tasks/fused_train.py `RAGGED_DEVICES`);
- `ragged`: no padding: each member's own operations (its own weights, its own batch
  norm), all 8 in one program, their losses summed, one backward and one AdamW step over
  one flat buffer of every member's parameters with a learning rate per element (a
  prototype);
- `product`: the product's pack without padding (models/ragged_pack.py `RaggedPack`:
  each member's own module and random stream, one backward of the summed losses;
  tasks/optimizers.py `GroupedAdamW`: torch's fused AdamW, a parameter group a member);
- `stream`: no padding, the members' streams concatenated so that each block's batch
  norm, ReLU and residual add are one operation for every member, the matrix products
  one per member (a second prototype).

The ratio is `alone`'s time over the form's: a pack's throughput in steps per second over
that of the 8 one after another (the issue's target: at least 3x). Shapes: the first
8 trials of each family of the quickstart search (`search run --space
hourglass,conventional --task digits-denoise --budget 100K --trials 24 --sampler tpe`,
2026-12-06); inputs of the digits tasks (d 64) and of the MNIST tasks (d 784, the same
shapes).

    OMP_NUM_THREADS=1 python -m benchmarks.speed.pack_shapes --repeats 5 [--device cuda] --out FILE.json

On a GPU (`--device cuda`) the clock is read after `torch.cuda.synchronize()`; the product
packs there with `padded` (tasks/fused_train.py `RAGGED_DEVICES`), so this is the
measurement that would move a GPU to the form without padding.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from datetime import date

import torch
import torch.nn.functional as F

import models
from benchmarks.bench_util import cpu_name
from models.base import IOSpec
from models.ragged_pack import RaggedPack, capture_rng
from tasks.optimizers import GroupedAdamW, StackedAdamW

SHAPES = {  # (d_z, d_h, L) of the quickstart search's first trials of each family
    "hourglass": [
        (65, 4, 1),
        (108, 11, 35),
        (183, 4, 23),
        (186, 22, 4),
        (66, 8, 1),
        (88, 10, 6),
        (83, 15, 3),
        (131, 14, 1),
    ],
    "conventional": [
        (64, 65, 1),
        (64, 65, 11),
        (64, 68, 5),
        (65, 67, 1),
        (73, 80, 1),
        (66, 70, 3),
        (64, 66, 10),
        (70, 78, 2),
    ],
}
INPUTS = {"digits": 64, "mnist": 784}
BATCH, LR, WD, BETAS = 64, 1e-3, 0.01, (0.9, 0.999)
DEVICE = torch.device("cpu")  # `--device`


def clock() -> float:
    """Seconds, after the device's queued work is done (a GPU runs asynchronously)."""
    if DEVICE.type == "cuda":
        torch.cuda.synchronize(DEVICE)
    return time.perf_counter()


def io_of(d: int) -> IOSpec:
    side = int(round(d**0.5))
    return IOSpec(d_in=d, d_out=d, output="image", image_shape=(1, side, side), input_shape=(1, side, side))


def build(family: str, io: IOSpec) -> list[torch.nn.Module]:
    out = []
    for k, (d_z, d_h, L) in enumerate(SHAPES[family]):
        torch.manual_seed(k)
        out.append(models.get_family(family).build({"d_z": d_z, "d_h": d_h, "L": L}, io, seed=k).to(DEVICE).train())
    return out


class FlatAdamW:
    """AdamW over one flat buffer of every member's parameters (each a view of its slice),
    a learning rate and weight decay per element: one handful of operations a step."""

    def __init__(self, groups: list[list[torch.Tensor]], lr: float, wd: float) -> None:
        self.params = [p for ps in groups for p in ps]
        with torch.no_grad():
            self.flat = torch.cat([p.detach().reshape(-1) for p in self.params])
            start = 0
            for p in self.params:
                p.data = self.flat[start : start + p.numel()].view(p.shape)
                start += p.numel()
        self.lr, self.wd = torch.full_like(self.flat, lr), torch.full_like(self.flat, wd)
        self.m, self.v, self.t = torch.zeros_like(self.flat), torch.zeros_like(self.flat), 0

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        grad = torch.cat([p.grad.reshape(-1) for p in self.params])
        self.t += 1
        (b1, b2), c1 = BETAS, 1 - BETAS[0] ** self.t
        c2 = (1 - b2**self.t) ** 0.5
        self.flat.mul_(1 - self.lr * self.wd)
        self.m.lerp_(grad, 1 - b1)
        self.v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        self.flat.addcdiv_(self.m * (self.lr / c1), self.v.sqrt().div_(c2).add_(1e-8), value=-1.0)


def weights(m) -> tuple:
    blocks = [(b.up.weight, b.down.weight, b.norm.running_mean, b.norm.running_var) for b in m.blocks]
    return m.w_in.weight, blocks, m.w_out.weight


def member_loss(w: tuple, x: torch.Tensor) -> torch.Tensor:
    """One member's loss on its batch `x` from its own weights (`weights(m)`): its module's
    forward pass written out, one member at a time (the unpadded `ragged` form)."""
    w_in, blocks, w_out = w
    z = x @ w_in.t()
    for w1, w2, mean, var in blocks:
        normed = F.batch_norm(z, mean, var, training=True, momentum=0.1, eps=1e-5)
        z = torch.addmm(z, torch.relu(normed @ w1.t()), w2.t())
    return F.mse_loss(torch.sigmoid(z @ w_out.t()), x)


def time_alone(family: str, io: IOSpec, x: torch.Tensor) -> float:
    total = 0.0
    for k, m in enumerate(build(family, io)):
        opt = torch.optim.AdamW(m.parameters(), lr=LR, weight_decay=WD, betas=BETAS, fused=True)
        start = clock()
        for s in range(x.shape[1]):
            loss = F.mse_loss(m(x[k, s]), x[k, s])
            opt.zero_grad()
            loss.backward()
            opt.step()
        total += clock() - start
    return total


def time_padded(family: str, io: IOSpec, x: torch.Tensor) -> float:
    members = build(family, io)
    fused = models.get_family(family).fuse(members, [], io).train()
    k = len(members)
    opt = StackedAdamW(fused.stacked(), torch.full((k,), LR, device=DEVICE), torch.full((k,), WD, device=DEVICE), BETAS)
    start = clock()
    for s in range(x.shape[1]):
        loss = ((fused(x[:, s]) - x[:, s]) ** 2).mean(dim=(1, 2)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step(torch.ones(k, device=DEVICE))
    return clock() - start


def time_ragged(family: str, io: IOSpec, x: torch.Tensor) -> float:
    members = build(family, io)
    opt = FlatAdamW([list(m.parameters()) for m in members], LR, WD)
    w = [weights(m) for m in members]
    start = clock()
    for s in range(x.shape[1]):
        total = sum(member_loss(wk, x[k, s]) for k, wk in enumerate(w))
        opt.zero_grad()
        total.backward()
        opt.step()
    return clock() - start


def time_product(family: str, io: IOSpec, x: torch.Tensor) -> float:
    members = build(family, io)
    k = len(members)
    pack = RaggedPack(members, [capture_rng(DEVICE)] * k).train()
    opt = GroupedAdamW(pack.member_parameters(), [LR] * k, [WD] * k, BETAS)
    live = list(range(k))
    start = clock()
    for s in range(x.shape[1]):
        loss = ((pack(x[:, s]) - x[:, s]) ** 2).mean(dim=(1, 2)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step_members(1.0, live)
    return clock() - start


def time_stream(family: str, io: IOSpec, x: torch.Tensor) -> float:
    members = build(family, io)
    order = sorted(range(len(members)), key=lambda k: -len(members[k].blocks))  # deepest first
    ms = [members[k] for k in order]
    opt = FlatAdamW([list(m.parameters()) for m in ms], LR, WD)
    d_z = [m.w_out.weight.shape[1] for m in ms]
    d_h = [m.blocks[0].up.out_features for m in ms]
    depth = [len(m.blocks) for m in ms]
    zo, ho = [0, *itertools.accumulate(d_z)], [0, *itertools.accumulate(d_h)]
    live = [sum(1 for L in depth if L > i) for i in range(max(depth))]  # members with a block i
    means = [torch.zeros(zo[p], device=DEVICE) for p in live]
    variances = [torch.ones(zo[p], device=DEVICE) for p in live]
    w = [weights(m) for m in ms]
    start = clock()
    for s in range(x.shape[1]):
        xs = [x[k, s] for k in order]
        z = torch.cat([xs[j] @ w[j][0].t() for j in range(len(ms))], dim=1)
        for i, p in enumerate(live):
            width = zo[p]
            part = z if width == z.shape[1] else z[:, :width]
            normed = F.batch_norm(part, means[i], variances[i], training=True, momentum=0.1, eps=1e-5)
            h = torch.relu(torch.cat([normed[:, zo[j] : zo[j + 1]] @ w[j][1][i][0].t() for j in range(p)], dim=1))
            u = torch.cat([h[:, ho[j] : ho[j + 1]] @ w[j][1][i][1].t() for j in range(p)], dim=1)
            z = z + u if width == z.shape[1] else torch.cat([part + u, z[:, width:]], dim=1)
        y = torch.sigmoid(torch.cat([z[:, zo[j] : zo[j + 1]] @ w[j][2].t() for j in range(len(ms))], dim=1))
        loss = ((y - torch.cat(xs, dim=1)) ** 2).mean() * len(ms)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return clock() - start


FORMS = {
    "alone": time_alone,
    "padded": time_padded,
    "ragged": time_ragged,
    "product": time_product,
    "stream": time_stream,
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=5, help="timings of each form, forms rotated (default 5)")
    p.add_argument("--steps", type=int, default=40, help="training steps a timing runs (default 40)")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda[:N]: where the packs train")
    p.add_argument("--out", help="write the figures to this JSON file")
    a = p.parse_args()
    global DEVICE
    DEVICE = torch.device(a.device)
    torch.set_num_threads(1)
    rows = []
    for inputs, d in INPUTS.items():
        io = io_of(d)
        x = torch.rand(8, a.steps, BATCH, d, generator=torch.Generator().manual_seed(0)).to(DEVICE)
        for family in SHAPES:
            for form in FORMS.values():  # warm-up, untimed: first calls, kernels, allocator
                form(family, io, x[:, :2])
            times: dict[str, list[float]] = {f: [] for f in FORMS}
            for r in range(a.repeats):
                for f in list(FORMS)[r % len(FORMS) :] + list(FORMS)[: r % len(FORMS)]:  # rotated
                    times[f].append(FORMS[f](family, io, x) / a.steps * 1000)
            base = statistics.median(times["alone"])
            for f, ts in times.items():
                row = dict(inputs=inputs, family=family, form=f, ms_per_step=ts, median_ms=statistics.median(ts))
                row["throughput_vs_alone"] = base / row["median_ms"]
                rows.append(row)
                print(
                    f"{inputs:6s} {family:12s} {f:7s} {row['median_ms']:7.2f} ms a pack step "
                    f"(min {min(ts):.2f}, max {max(ts):.2f}); throughput {row['throughput_vs_alone']:.2f}x alone",
                    flush=True,
                )
    if a.out:
        gpu = f", {torch.cuda.get_device_name(DEVICE)}" if DEVICE.type == "cuda" else ""
        report = dict(
            benchmark="pack_shapes",
            date=date.today().isoformat(),
            machine=f"{cpu_name()}{gpu}, torch {torch.__version__}, 1 thread",
            command="OMP_NUM_THREADS=1 python -m benchmarks.speed.pack_shapes "
            f"--repeats {a.repeats} --steps {a.steps} --device {a.device}",
            shapes=SHAPES,
            rows=rows,
        )
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
