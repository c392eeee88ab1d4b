"""Han layer vs. a dense nn.Linear of the same width: forward + backward time.

For d in (256, 1024, 4096): one Han layer |H(u) x + b| (models/han_layer.py, O(d) work
and 2d parameters) and one nn.Linear(d, d) followed by |.| (O(d^2) work, d^2 + d
parameters), each timed on a batch of B inputs for forward + backward (gradients of a
sum), median of `--repeats` timings of `--iters` iterations, the two alternating. Reported:
milliseconds per iteration and the ratio Han / Linear (below 1: the Han layer is faster).

    python -m benchmarks.speed.han_layer_speed [--batch 128] [--iters 50] [--repeats 7] [--device cpu]

Run with OMP_NUM_THREADS set; the load average is printed so a disturbed run shows.
"""

from __future__ import annotations

import argparse
import os
import statistics

import torch
from torch import nn

from benchmarks.bench_util import device_sync, timed
from models.han_layer import HanLayer


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--dims", default="256,1024,4096")
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    dev = torch.device(a.device)
    sync = device_sync(dev)
    print(
        f"torch {torch.__version__}, device {dev}, threads {torch.get_num_threads()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, load {os.getloadavg()[0]:.2f}, batch {a.batch}"
    )
    print(f"{'d':>6} {'han ms':>9} {'linear ms':>10} {'han/linear':>11} {'han params':>11} {'linear params':>14}")
    torch.manual_seed(0)
    for d in (int(v) for v in a.dims.split(",")):
        han = HanLayer(d).to(dev)
        lin = nn.Linear(d, d).to(dev)
        x = torch.randn(a.batch, d, device=dev, requires_grad=True)

        def step_han():
            han(x).sum().backward()

        def step_lin():
            lin(x).abs().sum().backward()

        th, tl = [], []
        for r in range(a.repeats):
            pair = [(th, step_han), (tl, step_lin)]
            for out, step in pair if r % 2 == 0 else pair[::-1]:
                out.append(timed(step, a.iters, sync))
        mh, ml = statistics.median(th) * 1e3, statistics.median(tl) * 1e3
        print(f"{d:>6} {mh:>9.3f} {ml:>10.3f} {mh / ml:>11.3f} {2 * d:>11} {d * d + d:>14}")
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
