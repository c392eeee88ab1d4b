"""Orchestration overhead per trial on the three executors (issue 29 item 3): the same
study of short stand-in trials run by `--executor local`, `--executor ray` and
`--executor tune`, side by side in one process, in alternating rounds; medians.

The stand-in replaces one function only, the trainer's entry point `run_guarded`
(search/executors/base.py), with one that sleeps `--sleep` seconds per seed, reports one
epoch through the `on_epoch` it is given and returns a complete `TrialResult` whose
metric is computed from the configuration. Everything around it is the product's own
code, unchanged: the study loop (proposals, budget check, family turns, the Pareto
pruner's epoch hook, the SQLite writes, retries), the local executor, the Ray executor
(its remote function, its epoch board actor), and on the `tune` path `run_tune_study`
with its `Tuner`, the study's `Searcher` and `TrialScheduler`, and the product's
trainable `train_trial` (the trial's spec parsed, `tune.report` of the epoch, the final
report with the whole result, Tune's CSV/JSON/TensorBoard loggers writing each trial's
folder). In the driver the local executor's `run_guarded` is replaced; in every Ray
worker (the Ray executor's tasks, Tune's trainable actors) a runtime_env
`worker_process_setup_hook` replaces the module attributes `train_trial` and
`_run_remote` look `run_guarded` up in, before any trial runs.

Per study: `wall_s` (run_study / run_tune_study, returned), `startup_s` (from the call
until the first trial's result, less that trial's work: the study's fixed start, on Tune
its Tuner, controller and first trainable actor), `per_trial_s` (seconds per trial per
slot once running: from the first wave's last result to the last result, times the
trials in flight, over the trials after the first wave) and
`overhead_ms` (per_trial_s less the trial's work), `teardown_s` (last result to return)
and `over_ideal_pct` (wall against the trials' work alone, `ceil(trials / in flight) x
sleep`: Ray Tune's own figure, about 14% at 1-second trials, is of this kind). Ray's
start (`import ray`, `ray.init`, `import ray.tune`) and each executor's first study
(worker processes starting) are timed separately and not in the rounds.

Run:  OMP_NUM_THREADS=1 python -m benchmarks.speed.tune_overhead [--trials 20] [--rounds 3]
          [--concurrency 1,2] [--out docs/data/tune-overhead.json]
      python -m benchmarks.speed.tune_overhead --quick     # the code path in ~30 s (tests)
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SLEEP_ENV = "SEARCH_BENCH_SLEEP_S"  # the stand-in's seconds of work per seed, read in every worker
EXECUTORS = ("local", "ray", "tune")


def stand_in_run_guarded(spec, on_epoch=None):
    """`run_guarded`'s stand-in: `SEARCH_BENCH_SLEEP_S` seconds per seed, one epoch reported
    to `on_epoch` (the executor's own path: the local loop, Ray's epoch board, tune.report),
    a complete result with a metric from the configuration. No training."""
    import math
    import os
    import time

    from core.trials import EpochRecord, RunResult, TrialResult

    sleep_s = float(os.environ.get(SLEEP_ENV, "1.0"))
    t0 = time.monotonic()
    numbers = [abs(float(v)) for v in spec.config.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    psnr = 10.0 + math.log1p(sum(numbers))
    runs = []
    for repeat, seed in enumerate(spec.seeds):
        time.sleep(sleep_s)
        record = EpochRecord(1, 0.01, {"psnr": psnr, "ssim": 0.9}, sleep_s)
        if on_epoch is not None:
            on_epoch(repeat, record)
        runs.append(
            RunResult(
                int(seed),
                "complete",
                {"psnr": psnr, "ssim": 0.9, "val_psnr": psnr, "val_ssim": 0.9},
                1,
                [record],
                sleep_s,
            )
        )
    return TrialResult(spec.number, "complete", runs, time.monotonic() - t0, "cpu")


def install_stand_in() -> None:
    """Replace `run_guarded` where the executors look it up: search.executors.base (Tune's
    `train_trial` imports it from there when a trial starts), .local and .ray (imported by
    name at module load). Run in the driver and, as Ray's worker_process_setup_hook, in
    every worker before its first task."""
    import search.executors.base as base
    import search.executors.local as local
    import search.executors.ray as ray_executor

    base.run_guarded = stand_in_run_guarded
    local.run_guarded = stand_in_run_guarded
    ray_executor.run_guarded = stand_in_run_guarded


class Clock:
    """A quiet `Progress` (search/engine/study.py) that timestamps the study's events."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.started: list[float] = []
        self.finished: list[float] = []
        self.statuses: list[str] = []

    def start(self, study, total, done, retries) -> None:
        pass

    def trial_started(self, spec, params, note) -> None:
        self.started.append(time.perf_counter())

    def epoch(self, spec, repeat, record) -> None:
        pass

    def trial_finished(self, spec, params, result, finished) -> None:
        self.finished.append(time.perf_counter())
        self.statuses.append(result.status)

    def rejected(self, rejection) -> None:
        pass

    def close(self) -> None:
        pass


def run_one(
    executor: str, trials: int, concurrency: int, sleep_s: float, folder: str, name: str, seed: int
) -> dict[str, Any]:
    """One study of `trials` stand-in trials on `executor`; its timings."""
    from core.trials import TrainSettings
    from search.engine.specs import RunSpec
    from search.engine.study import run_study
    from storage import Store

    options: dict[str, Any] = {} if executor == "local" else {"max_concurrent": concurrency}
    spec = RunSpec(
        spaces=("hourglass", "conventional"),
        task="digits-denoise",
        budget=100_000,
        trials=trials,
        executor=executor,
        study=name,
        seed_checks=0,  # the trials alone
        seed=seed,
        train=TrainSettings(epochs=1),
        executor_options=options,
    )
    store = Store(f"sqlite:///{folder}/{name}.db")
    clock = Clock()
    if executor == "tune":
        from search.tune import run_tune_study

        out = run_tune_study(spec, store, clock)
    else:
        out = run_study(spec, store, clock)
    end = time.perf_counter()
    statuses = [r.status for r in store.trials(name)]
    if out.ran != trials or statuses != ["complete"] * trials or len(clock.finished) != trials:
        # never report the timings of trials that did not run
        raise SystemExit(f"{executor}: {out.ran}/{trials} trials ran; statuses {statuses}")
    wall = end - clock.t0
    first, last = clock.finished[0], clock.finished[-1]
    slots = 1 if executor == "local" else concurrency
    # after the first wave of `slots` results, each slot runs (trials - slots) / slots more trials, in
    # step with the others or staggered alike
    per_trial = slots * (last - clock.finished[slots - 1]) / (trials - slots)
    ideal = math.ceil(trials / slots) * sleep_s
    row: dict[str, Any] = {
        "executor": executor,
        "concurrency": slots,
        "trials": trials,
        "seed": seed,
        "wall_s": wall,
        "startup_s": first - clock.t0 - sleep_s,
        "per_trial_s": per_trial,
        "overhead_ms": 1000 * (per_trial - sleep_s),
        "teardown_s": end - last,
        "over_ideal_pct": 100 * (wall - ideal) / ideal,
        "params": [r.params for r in store.trials(name)],
        "submitted_at_s": [t - clock.t0 for t in clock.started],
        "finished_at_s": [t - clock.t0 for t in clock.finished],
    }
    if executor == "tune":  # the trainable's reports, as Tune's CSV logger wrote them (one row each)
        csvs = sorted(Path(folder, f"{name}-tune", name).glob("trial-*/progress.csv"))
        row["tune_trial_folders"] = len(csvs)
        row["tune_reports"] = sum(len(p.read_text().splitlines()) - 1 for p in csvs)
    return row


def summarise(rows: list[dict[str, Any]], sleep_s: float) -> list[dict[str, Any]]:
    out = []
    keys = sorted({(r["executor"], r["concurrency"]) for r in rows}, key=lambda k: (k[1], EXECUTORS.index(k[0])))
    for executor, conc in keys:
        mine = [r for r in rows if (r["executor"], r["concurrency"]) == (executor, conc)]
        med = {
            k: statistics.median(r[k] for r in mine)
            for k in ("wall_s", "startup_s", "per_trial_s", "overhead_ms", "teardown_s", "over_ideal_pct")
        }
        out.append(
            {
                "executor": executor,
                "concurrency": conc,
                "rounds": len(mine),
                **med,
                "overhead_pct": 100 * (med["per_trial_s"] - sleep_s) / sleep_s,
                "overhead_ms_range": [min(r["overhead_ms"] for r in mine), max(r["overhead_ms"] for r in mine)],
                "wall_s_range": [min(r["wall_s"] for r in mine), max(r["wall_s"] for r in mine)],
            }
        )
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sleep", type=float, default=1.0, help="seconds of stand-in work per trial")
    ap.add_argument("--concurrency", default="1,2", help="trials in flight on ray and tune (local: always 1)")
    ap.add_argument("--quick", action="store_true", help="3 trials of 0.25 s, one round, one in flight")
    ap.add_argument("--out", help="write the figures as JSON here")
    a = ap.parse_args(argv)
    if a.quick:
        a.trials, a.rounds, a.sleep, a.concurrency = 3, 1, 0.25, "1"
    try:
        concurrency = sorted({int(c) for c in a.concurrency.split(",")})
    except ValueError:
        concurrency = []
    if (
        a.rounds < 1
        or a.sleep <= 0
        or not concurrency
        or min(concurrency) < 1
        or max(concurrency) > (os.cpu_count() or 1)
        or a.trials < 2 * max(concurrency)
    ):
        print(
            f"{os.path.basename(sys.argv[0])}: need --rounds >= 1, --sleep > 0, --concurrency between 1 and the "
            f"CPUs ({os.cpu_count()}) and --trials at least twice the largest concurrency",
            file=sys.stderr,
        )
        sys.exit(2)
    os.environ[SLEEP_ENV] = repr(a.sleep)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    load_before = os.getloadavg()
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import this file
    install_stand_in()
    startup: dict[str, float] = {}
    t = time.perf_counter()
    import ray

    startup["import_ray_s"] = time.perf_counter() - t
    t = time.perf_counter()
    ray.init(
        num_cpus=os.cpu_count() or 2,
        num_gpus=0,
        include_dashboard=False,
        configure_logging=False,
        runtime_env={
            "env_vars": {SLEEP_ENV: repr(a.sleep), "OMP_NUM_THREADS": "1"},
            "worker_process_setup_hook": install_stand_in,
        },
    )
    startup["ray_init_s"] = time.perf_counter() - t
    t = time.perf_counter()
    import ray.tune  # noqa: F401  (Tune's import, which the tune path pays once per driver)

    startup["import_tune_s"] = time.perf_counter() - t
    rows: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            for executor in EXECUTORS:  # the first study of each starts its worker processes: timed, not counted
                t = time.perf_counter()
                run_one(executor, 2, 1, a.sleep, folder, f"warm-{executor}", 0)
                startup[f"first_study_{executor}_s"] = time.perf_counter() - t
            n = 0
            for rnd in range(a.rounds):
                order = EXECUTORS[rnd % 3 :] + EXECUTORS[: rnd % 3]  # each executor first in turn
                for conc in concurrency:
                    for executor in order:
                        if executor == "local" and conc != 1:
                            continue
                        n += 1
                        row = run_one(executor, a.trials, conc, a.sleep, folder, f"s{n}-{executor}-{conc}", rnd)
                        row["round"] = rnd
                        rows.append(row)
                        print(
                            f"round {rnd} {executor} x{conc}: {row['wall_s']:.2f} s, {row['per_trial_s']:.3f} s "
                            f"per trial, start {row['startup_s']:.2f} s",
                            file=sys.stderr,
                            flush=True,
                        )
    finally:
        ray.shutdown()
    load_after = os.getloadavg()
    # the same proposals on every executor of a round at one trial in flight (same seed)
    same = all(
        len({tuple(r["params"]) for r in rows if r["round"] == rnd and r["concurrency"] == 1}) == 1
        for rnd in range(a.rounds)
    )
    for r in rows:
        del r["params"]
    summary = summarise(rows, a.sleep)
    import torch

    from benchmarks.bench_util import cpu_name, write_json

    result = {
        "benchmark": "tune_overhead",
        "when_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine": {
            "cpu": cpu_name(),
            "cpus": os.cpu_count(),
            "load_before": load_before,
            "load_after": load_after,
            "ray": ray.__version__,
            "torch": torch.__version__,
            "python": sys.version.split()[0],
        },
        "settings": {
            "trials": a.trials,
            "rounds": a.rounds,
            "sleep_s": a.sleep,
            "concurrency": concurrency,
            "study": "hourglass,conventional on digits-denoise, budget 100K, 1 epoch (stand-in)",
            "quick": a.quick,
        },
        "startup": startup,
        "same_proposals_at_one_in_flight": same,
        "rows": rows,
        "summary": summary,
    }
    print_tables(result)
    if a.out:
        write_json(a.out, result)
    return result


def print_tables(result: dict[str, Any]) -> None:
    m, s, st = result["machine"], result["settings"], result["startup"]
    print(
        f"machine: {m['cpu']}, {m['cpus']} CPUs, load average {m['load_before'][0]:.2f} before, "
        f"{m['load_after'][0]:.2f} after; ray {m['ray']}, torch {m['torch']}"
    )
    print(f"{s['trials']} trials of {s['sleep_s']:g} s per study, {s['rounds']} rounds, medians")
    print(
        f"Ray: import {st['import_ray_s']:.1f} s, ray.init {st['ray_init_s']:.1f} s, import ray.tune "
        f"{st['import_tune_s']:.1f} s; first study of 2 trials (workers start): "
        + ", ".join(f"{e} {st[f'first_study_{e}_s']:.1f} s" for e in EXECUTORS)
    )
    print(
        "| executor | in flight | per trial s | overhead per trial ms (range) | overhead % | study start s "
        "| end s | study wall s | wall over the work alone |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in result["summary"]:
        lo, hi = r["overhead_ms_range"]
        print(
            f"| {r['executor']} | {r['concurrency']} | {r['per_trial_s']:.3f} | {r['overhead_ms']:.0f} "
            f"({lo:.0f}-{hi:.0f}) | {r['overhead_pct']:.1f}% | {r['startup_s']:.2f} | {r['teardown_s']:.2f} "
            f"| {r['wall_s']:.1f} | {r['over_ideal_pct']:.1f}% |"
        )
    print(f"same proposals on every executor at one in flight: {result['same_proposals_at_one_in_flight']}")


if __name__ == "__main__":
    main()
