"""Orchestration per trial in a large study, ours against bare Optuna's (issue 33 item 4).

A TPE study's cost per trial grows with the trials it has (the sampler reads them all),
so the question is asked at a size: both sides start from the same `--sizes` finished
trials and time the next `--window` trials.

* The past: a study of N instant trials proposed by the product's own proposer (two
  families taking turns on mnist-denoise, the size-covering spread, budget 80M; drawn by
  Optuna's RandomSampler, so that 10,000 of them take seconds, not the hours a TPE
  would), each result from `orchestration_overhead.py`'s `InstantExecutor`, written into
  a SQLite study with the sampler records a resume replays (`big_studies.write_in_bulk`).
* Ours: `run_study` resumes that study with `--sampler tpe` and `--trials N + window`,
  the instant executor: the study loaded, the past replayed into a fresh Optuna study,
  then per trial the budget-aware ask, the exact count, the trial stored as running, its
  result stored, the progress counts, the tell. Reported: the start (loading and
  replaying, once per resume) and the mean per trial over the window (from the start's
  end to the last trial stored).
* Bare Optuna: an in-memory study given the same past (`create_trial` from the same
  records, as `add_trials`), the same TPE settings (`search/engine/sampling/samplers.py`), then
  per trial the family's turn enqueued, `ask`, the family's parameters suggested over
  the widest range each took in its trials (a fixed space, as a bare Optuna user writes
  it), `tell`: the floor that ours sits on.

Rounds alternate ours and bare (a fresh copy of the past for each of ours); medians.

    OMP_NUM_THREADS=1 python -m benchmarks.speed.orchestration_at_size [--sizes 1000,10000] [--window 20] [--rounds 3]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

from benchmarks.bench_util import cpu_name, fail
from benchmarks.speed.big_studies import STUDY, write_in_bulk
from benchmarks.speed.orchestration_overhead import InstantExecutor
from core.trials import TrialSpec
from search.engine.sampling import Rejection
from search.engine.sampling.samplers import _tpe, make_sampler
from search.engine.specs import RunSpec
from search.engine.study import prepare, run_study
from search.executors import EXECUTORS
from storage import Store

FAMILIES = ("hourglass", "conventional")
SEED = 0


def spec_for(n: int) -> RunSpec:
    return RunSpec(
        spaces=FAMILIES,
        task="mnist-denoise",
        budget=80_000_000,
        trials=n,
        sampler="tpe",
        executor="instant",
        study=STUDY,
        seed=SEED,
        seed_checks=0,  # the trials' orchestration only
    )


def past_trials(n: int) -> tuple[list, list[dict[str, Any] | None]]:
    """`n` proposals of the product's proposer (random sampler), with their instant results
    and sampler records: (family, config, params, result or None if rejected), records."""
    prep = prepare(spec_for(n))
    proposer = make_sampler(
        "random", prep.spaces, prep.io, prep.spec.budget, prep.count, direction=prep.task.direction, seed=SEED, trials=n
    )
    executor = InstantExecutor()
    trials, records = [], []
    for number in range(n):
        p = proposer.ask()
        if isinstance(p, Rejection):
            proposer.reject(p)
            trials.append((p.family, p.config, p.params or 0, None))
            records.append(None)
            continue
        result = executor.run(TrialSpec(STUDY, number, p.family, p.config, "mnist-denoise", (0,)))
        proposer.tell(p, result.aggregate()["val_psnr"][0], p.params)
        trials.append((p.family, p.config, p.params, result))
        records.append(p.optuna)
    return trials, records


class Clock:
    """A progress sink that notes when the start ends and when each trial is stored."""

    def __init__(self) -> None:
        self.started: float | None = None
        self.finished: list[float] = []

    def start(self, *a: Any) -> None:
        self.started = time.perf_counter()

    def trial_finished(self, *a: Any) -> None:
        self.finished.append(time.perf_counter())

    def __getattr__(self, name: str):
        return lambda *a, **k: None


def ours(db: str, n: int, window: int) -> tuple[float, float]:
    """(start seconds, ms per trial over the window) of `run_study` resuming the study."""
    store = Store(f"sqlite:///{db}")
    clock = Clock()
    t0 = time.perf_counter()
    out = run_study(spec_for(n + window), store, clock)
    store.close()
    assert out.ran == window and len(clock.finished) == window and clock.started is not None, (
        out.ran,
        len(clock.finished),
    )
    return clock.started - t0, 1000 * (clock.finished[-1] - clock.started) / window


def widest(seen: dict[str, Any], dists: dict[str, Any]) -> dict[str, Any]:
    """Per parameter, the widest of the distributions seen: the fixed search space a bare
    Optuna user writes (ours narrows each range to what fits the budget, given the values
    drawn before it; a one-value range is not sampled at all)."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    out = dict(seen)
    for name, d in dists.items():
        old = out.get(name)
        if old is None:
            out[name] = d
        elif isinstance(d, IntDistribution):
            out[name] = IntDistribution(min(old.low, d.low), max(old.high, d.high), log=d.log, step=d.step)
        elif isinstance(d, FloatDistribution):
            out[name] = FloatDistribution(min(old.low, d.low), max(old.high, d.high), log=d.log, step=d.step)
        else:
            assert isinstance(d, CategoricalDistribution)
            out[name] = CategoricalDistribution(list(dict.fromkeys([*old.choices, *d.choices])))
    return out


def bare(trials: list, records: list, window: int) -> tuple[float, float]:
    """(seconds to give Optuna the past, ms per trial over the window) of a bare Optuna study."""
    import optuna
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution, json_to_distribution
    from optuna.trial import TrialState, create_trial

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    t0 = time.perf_counter()
    past, template, values = [], {}, []
    for (family, _, params, result), rec in zip(trials, records):
        if rec is None:
            continue
        dists = {k: json_to_distribution(v) for k, v in rec["distributions"].items()}
        template[family] = widest(template.get(family, {}), dists)
        v = result.aggregate().get("val_psnr", (None,))[0] if result.status == "complete" else None
        ok = v is not None and math.isfinite(v)
        past.append(
            create_trial(
                params=rec["params"],
                distributions=dists,
                values=[float(params), v] if ok else None,
                state=TrialState.COMPLETE if ok else TrialState.FAIL,
            )
        )
        if ok:
            values.append([float(params), v])
    study = optuna.create_study(
        directions=["minimize", "maximize"], sampler=_tpe(SEED * 100_003 + len(past), len(past) + window)
    )
    study.add_trials(past)
    start = time.perf_counter() - t0
    turns = {f: sum(t[0] == f for t in trials if t[3] is not None) for f in FAMILIES}
    t1 = time.perf_counter()
    for i in range(window):
        family = min(FAMILIES, key=turns.__getitem__)
        study.enqueue_trial({"family": family})
        t = study.ask()
        for name, d in template[family].items():
            if isinstance(d, FloatDistribution):
                t.suggest_float(name, d.low, d.high, log=d.log, step=d.step)
            elif isinstance(d, IntDistribution):
                t.suggest_int(name, d.low, d.high, log=d.log, step=d.step)
            else:
                assert isinstance(d, CategoricalDistribution)
                t.suggest_categorical(name, d.choices)
        turns[family] += 1
        study.tell(t, values[i % len(values)])
    return start, 1000 * (time.perf_counter() - t1) / window


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000", help="comma list of study sizes (trials before the window)")
    ap.add_argument("--window", type=int, default=20, help="trials timed after the past")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (medians are reported)")
    args = ap.parse_args()
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        fail(f"--sizes takes a comma list of whole numbers, got {args.sizes!r}")
    if min(sizes) < 1 or args.window < 1 or args.rounds < 1:
        fail("--sizes, --window and --rounds must be positive")
    if "instant" not in EXECUTORS:
        EXECUTORS.add("instant", InstantExecutor)
    print(
        f"machine: {cpu_name()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f} (1 min average at "
        f"start), python {sys.version.split()[0]}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
        f"window {args.window} trials, {args.rounds} alternating rounds"
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            t = time.perf_counter()
            trials, records = past_trials(n)
            master = f"{tmp}/past-{n}.db"
            store = Store(f"sqlite:///{master}")
            write_in_bulk(store, trials, records)
            store.close()  # the last connection's close checkpoints SQLite's write-ahead log into the file
            made = time.perf_counter() - t
            o, b = [], []
            for r in range(args.rounds):
                db = f"{tmp}/run-{n}-{r}.db"
                shutil.copy(master, db)
                o.append(ours(db, n, args.window))
                b.append(bare(trials, records, args.window))
                os.remove(db)
                print(
                    f"  size {n:,} round {r + 1}: ours {o[-1][1]:.1f} ms/trial (start {o[-1][0]:.2f} s), "
                    f"bare {b[-1][1]:.1f} ms/trial (start {b[-1][0]:.2f} s), load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
            rows.append((n, made, o, b))
    print(
        "\n| trials in the study | ours ms per trial (rounds) | bare Optuna ms per trial (rounds) | ours / bare "
        "| ours start: load + replay (s) | bare: past given (s) |\n|---|---|---|---|---|---|"
    )
    for n, _, o, b in rows:
        mo, mb = statistics.median(x[1] for x in o), statistics.median(x[1] for x in b)
        print(
            f"| {n:,} | {mo:.1f} ({' / '.join(f'{x[1]:.1f}' for x in o)}) | "
            f"{mb:.1f} ({' / '.join(f'{x[1]:.1f}' for x in b)}) | {mo / mb:.2f} | "
            f"{statistics.median(x[0] for x in o):.2f} | {statistics.median(x[0] for x in b):.2f} |"
        )


if __name__ == "__main__":
    main()
