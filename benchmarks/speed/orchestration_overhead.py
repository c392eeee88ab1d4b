"""Orchestration overhead per trial: a study of trivial trials recorded in SQLite.

Everything `search run` does around training is timed: Optuna's ask (budget-aware
sampling), the exact parameter count, storing the trial as running, storing its result
(runs, epochs, metrics) in its own transaction, and Optuna's tell. The "training" is an
instant stand-in executor whose metric is a deterministic function of the config, so the
figure is pure overhead. Run: python -m benchmarks.speed.orchestration_overhead [--trials 200]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import tempfile
import time

import torch

from benchmarks.bench_util import Quiet
from core.trials import EpochRecord, RunResult, TrialResult, TrialSpec
from search.engine.specs import RunSpec
from search.engine.study import run_study
from search.executors import EXECUTORS, LocalExecutor
from storage import Store


class InstantExecutor(LocalExecutor):
    """The local executor with an instant stand-in for training: metric = a smooth
    function of the config."""

    def run(self, spec: TrialSpec) -> TrialResult:
        c = spec.config
        psnr = 10 + 3 * math.log(c["d_z"] * c["d_h"] * c["L"])
        epochs = [EpochRecord(e, 0.01 / e, {"psnr": psnr - 1 / e, "ssim": 0.9}, 0.001 * e) for e in range(1, 4)]
        runs = [
            RunResult(s, "complete", {"psnr": psnr, "ssim": 0.9, "val_psnr": psnr, "val_ssim": 0.9}, 3, epochs, 0.0)
            for s in spec.seeds
        ]
        return TrialResult(spec.number, "complete", runs, 0.0, "cpu")


def one(sampler: str, spread: str, trials: int) -> float:
    """Seconds per trial of one study of `trials` instant trials."""
    with tempfile.TemporaryDirectory() as d:
        store = Store(f"sqlite:///{d}/bench.db")
        spec = RunSpec(
            spaces=("hourglass", "conventional"),
            task="mnist-denoise",
            budget=80_000_000,
            trials=trials,
            sampler=sampler,
            spread=spread,
            executor="instant",
            study="bench",
            seed_checks=0,  # the trials alone
        )
        t0 = time.perf_counter()
        out = run_study(spec, store, Quiet())
        dt = time.perf_counter() - t0
        store.close()
        assert out.ran == trials
        return dt / trials


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--samplers", default="random,tpe,nsga2")
    ap.add_argument("--spreads", default="size", help="comma list of --spread values, run side by side")
    ap.add_argument("--rounds", type=int, default=1, help="alternating rounds (medians are reported)")
    args = ap.parse_args()
    if "instant" not in EXECUTORS:
        EXECUTORS.add("instant", InstantExecutor)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"python {platform.python_version()}, torch {torch.__version__}, load {os.getloadavg()[0]:.2f}"
    )
    samplers, spreads = args.samplers.split(","), args.spreads.split(",")
    ms: dict[tuple[str, str], list[float]] = {(a, b): [] for a in samplers for b in spreads}
    for _ in range(args.rounds):
        for sampler in samplers:
            for spread in spreads:
                ms[sampler, spread].append(1000 * one(sampler, spread, args.trials))
    print("| sampler | spread | trials | ms per trial (rounds) | median |\n|---|---|---|---|---|")
    for (sampler, spread), v in ms.items():
        print(
            f"| {sampler} | {spread} | {args.trials} | {' / '.join(f'{x:.1f}' for x in v)} | "
            f"{statistics.median(v):.1f} |"
        )
    if len(spreads) > 1:
        for sampler in samplers:
            base = statistics.median(ms[sampler, spreads[-1]])
            for spread in spreads[:-1]:
                print(f"{sampler}: {spread} / {spreads[-1]} = {statistics.median(ms[sampler, spread]) / base:.2f}")


if __name__ == "__main__":
    main()
