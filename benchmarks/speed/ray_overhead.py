"""Ray executor overhead: the same study of 1-second trials run with the local executor
and with the Ray executor (one trial at a time, so the difference is overhead), in one
process, side by side. Ray's start-up is timed separately. The trial is a stand-in that
sleeps 1 s and returns a metric computed from its config (no training), so what differs
is dispatch, serialisation and result collection.

Run: python -m benchmarks.speed.ray_overhead [--trials 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import cloudpickle
import ray

from benchmarks.bench_util import Quiet
from core.trials import EpochRecord, RunResult, TrialResult, TrialSpec
from search.engine.specs import RunSpec
from search.engine.study import run_study
from search.executors import EXECUTORS, LocalExecutor
from search.executors.ray import RayExecutor
from storage import Store

SLEEP_S = 1.0


def one_second_trial(spec_dict: dict) -> dict:
    spec = TrialSpec.from_dict(spec_dict)
    time.sleep(SLEEP_S)
    c = spec.config
    psnr = 10.0 + (c["d_z"] * c["d_h"] * c["L"]) ** 0.1
    m = {"psnr": psnr, "ssim": 0.9, "val_psnr": psnr, "val_ssim": 0.9}
    runs = [
        RunResult(s, "complete", m, 1, [EpochRecord(1, 0.01, {"psnr": psnr}, SLEEP_S)], SLEEP_S) for s in spec.seeds
    ]
    return TrialResult(spec.number, "complete", runs, SLEEP_S, "cpu").to_dict()


class SleepLocal(LocalExecutor):
    def run(self, spec: TrialSpec) -> TrialResult:
        return TrialResult.from_dict(one_second_trial(spec.to_dict()))


class SleepRay(RayExecutor):
    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._remote = ray.remote(one_second_trial).options(num_cpus=1, max_retries=0)


def timed(executor: str, trials: int, db: str) -> float:
    spec = RunSpec(
        spaces=("hourglass", "conventional"),
        task="mnist-denoise",
        budget=80_000_000,
        trials=trials,
        sampler="random",
        executor=executor,
        study=executor,
        seed_checks=0,  # the trials alone
        executor_options={"max_concurrent": 1, "poll_s": 0.05} if "ray" in executor else {},
    )
    t0 = time.perf_counter()
    out = run_study(spec, Store(db), Quiet())
    dt = time.perf_counter() - t0
    bad = [r.error for r in out.results if r.status != "complete"]
    if out.ran != trials or bad:  # never report timings of trials that did not run
        raise SystemExit(f"{executor}: {out.ran}/{trials} trials ran, failures: {bad[:1]}")
    return dt


def main() -> None:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import this file
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=20)
    a = ap.parse_args()
    EXECUTORS.add("sleep-local", SleepLocal)
    EXECUTORS.add("sleep-ray", SleepRay)
    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False)
    startup = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as d:
        db = f"sqlite:///{d}/b.db"
        timed("sleep-ray", 2, db.replace("b.db", "warm.db"))  # first tasks start the worker processes
        rows = []
        for rep in range(2):  # alternate to spread machine noise over both
            rows.append(("local", timed("sleep-local", a.trials, db.replace("b.db", f"l{rep}.db"))))
            rows.append(("ray", timed("sleep-ray", a.trials, db.replace("b.db", f"r{rep}.db"))))
    ray.shutdown()
    local = min(t for k, t in rows if k == "local") / a.trials
    rayt = min(t for k, t in rows if k == "ray") / a.trials
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; ray {ray.__version__}")
    print(f"Ray start-up (ray.init, local, num_cpus=2): {startup:.1f} s")
    print("| executor | trials | wall s per trial (best of 2) | overhead vs 1 s of work |\n|---|---|---|---|")
    print(f"| local | {a.trials} | {local:.3f} | {100 * (local - SLEEP_S):.1f}% |")
    print(f"| ray (1 at a time) | {a.trials} | {rayt:.3f} | {100 * (rayt - SLEEP_S):.1f}% |")
    print(f"ratio ray / local: {rayt / local:.3f} (Ray's overhead {100 * (rayt / local - 1):.1f}%)")


if __name__ == "__main__":
    main()
