"""Orchestration overhead per trial: a study of trivial trials recorded in SQLite.

Everything `search run` does around training is timed: Optuna's ask (budget-aware
sampling), the exact parameter count, storing the trial as running, storing its result
(runs, epochs, metrics) in its own transaction, and Optuna's tell. The "training" is an
instant stand-in executor whose metric is a deterministic function of the config, so the
figure is pure overhead. Run: python benchmarks/orchestration_overhead.py [--trials 200]
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import tempfile
import time

import torch

from core.trials import EpochRecord, RunResult, TrialResult, TrialSpec
from search.executors import EXECUTORS, LocalExecutor
from search.specs import RunSpec
from search.study import run_study
from storage import Store


class InstantExecutor(LocalExecutor):
    """The local executor with an instant stand-in for training: metric = a smooth
    function of the config."""

    def run(self, spec: TrialSpec) -> TrialResult:
        c = spec.config
        psnr = 10 + 3 * math.log(c["d_z"] * c["d_h"] * c["L"])
        epochs = [EpochRecord(e, 0.01 / e, {"psnr": psnr - 1 / e, "ssim": 0.9}, 0.001 * e) for e in range(1, 4)]
        runs = [RunResult(s, "complete", {"psnr": psnr, "ssim": 0.9, "val_psnr": psnr, "val_ssim": 0.9}, 3, epochs, 0.0)
                for s in spec.seeds]
        return TrialResult(spec.number, "complete", runs, 0.0, "cpu")


class Quiet:
    def __getattr__(self, name):
        return lambda *a, **k: None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=200)
    args = ap.parse_args()
    if "instant" not in EXECUTORS:
        EXECUTORS.add("instant", InstantExecutor)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"python {platform.python_version()}, torch {torch.__version__}")
    print("| sampler | trials | total s | ms per trial |\n|---|---|---|---|")
    for sampler in ("random", "tpe", "nsga2"):
        with tempfile.TemporaryDirectory() as d:
            store = Store(f"sqlite:///{d}/bench.db")
            spec = RunSpec(spaces=("hourglass", "conventional"), task="mnist-denoise", budget=80_000_000,
                           trials=args.trials, sampler=sampler, executor="instant", study="bench")
            t0 = time.perf_counter()
            out = run_study(spec, store, Quiet())
            dt = time.perf_counter() - t0
            assert out.ran == args.trials
            print(f"| {sampler} | {args.trials} | {dt:.2f} | {1000 * dt / args.trials:.1f} |")


if __name__ == "__main__":
    main()
