"""RP-Mixer permutation overhead: forward + backward time against the plain Mixer of the
same shape (same S, C, gamma, L, patch: the same parameters and connections).

The RP-Mixer gathers all S*C entries of each sample with stored index tensors before and
after every mixing MLP (4 gathers per block). Each shape is timed on a batch of random
images, median of `--repeats` timings of `--iters` iterations, the two models alternating;
reported: ms per iteration and the ratio RP / plain.

    python -m benchmarks.speed.rp_mixer_overhead [--batch 128] [--iters 10] [--repeats 5] [--device cpu]
"""

from __future__ import annotations

import argparse
import os
import statistics

import torch

from benchmarks.bench_util import device_sync, timed
from core.io import IOSpec
from models import get_family

SHAPES = [  # (name, input (C, H, W), config)
    ("digits 8x8, S=C=16", (1, 8, 8), {"S": 16, "C": 16, "gamma": 4, "L": 4, "patch": 2}),
    ("MNIST 28x28, S=C=64", (1, 28, 28), {"S": 64, "C": 64, "gamma": 4, "L": 4, "patch": 4}),
    ("CIFAR 32x32, S=C=128", (3, 32, 32), {"S": 128, "C": 128, "gamma": 4, "L": 4, "patch": 4}),
    ("CIFAR 32x32, S=64, C=256", (3, 32, 32), {"S": 64, "C": 256, "gamma": 4, "L": 4, "patch": 4}),
]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    dev = torch.device(a.device)
    sync = device_sync(dev)
    print(
        f"torch {torch.__version__}, device {dev}, threads {torch.get_num_threads()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, load {os.getloadavg()[0]:.2f}, batch {a.batch}"
    )
    print(f"{'shape':<26} {'params':>9} {'mixer ms':>9} {'rp ms':>8} {'rp/mixer':>9}")
    for name, shape, cfg in SHAPES:
        c, h, w = shape
        io = IOSpec(c * h * w, 10, "logits", None, shape)
        torch.manual_seed(0)
        plain = get_family("mixer").build(cfg, io).to(dev)
        rp = get_family("rp-mixer").build(cfg, io, seed=0).to(dev)
        x = torch.rand(a.batch, io.d_in, device=dev)
        tp, tr = [], []
        for r in range(a.repeats):
            pair = [(tp, plain), (tr, rp)]
            for out, model in pair if r % 2 == 0 else pair[::-1]:
                out.append(timed(lambda m=model: m(x).sum().backward(), a.iters, sync))
        mp, mr = statistics.median(tp) * 1e3, statistics.median(tr) * 1e3
        n = get_family("mixer").count_params(cfg, io)
        print(f"{name:<26} {n:>9} {mp:>9.2f} {mr:>8.2f} {mr / mp:>9.3f}")
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
