"""`--keep pareto`'s reading after each result, in a large study (issue 33 item 4).

After every stored result the keeper finds the trials of the result's family off both of
its Pareto fronts (by trial and by configuration, `search/artifacts/keep.py
Keeper.off_front`); it reads the family's trials from the store each time, so its cost
grows with the study. This times that step alone on the past `orchestration_at_size.py`
writes (N trials of two families proposed by the product's proposer, instant results, in
SQLite): the median and minimum over `--repeats` calls, per size.

    OMP_NUM_THREADS=1 python -m benchmarks.speed.keeper_at_size [--sizes 1000,10000] [--repeats 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from benchmarks.bench_util import cpu_name, fail
from benchmarks.speed.big_studies import write_in_bulk
from benchmarks.speed.orchestration_at_size import STUDY, past_trials
from benchmarks.speed.orchestration_overhead import InstantExecutor
from search.artifacts.keep import Keeper
from search.executors import EXECUTORS
from storage import Store


def time_keeper(n: int, repeats: int) -> dict:
    """Milliseconds of `off_front` for the first family, over `repeats` calls on a study of
    `n` past trials, and how many of its trials it finds off the fronts."""
    trials, records = past_trials(n)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/past.db")
        write_in_bulk(store, trials, records)
        keeper = Keeper("pareto", store, STUDY, "maximize")
        times, off = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            off = keeper.off_front("hourglass")
            times.append(1000 * (time.perf_counter() - t))
        store.close()
    return {"trials": n, "median_ms": statistics.median(times), "min_ms": min(times), "off_front": len(off)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000", help="comma list of study sizes")
    ap.add_argument("--repeats", type=int, default=15, help="calls timed per size")
    a = ap.parse_args(argv)
    try:
        sizes = [int(s) for s in a.sizes.split(",")]
    except ValueError:
        fail(f"--sizes takes a comma list of whole numbers, got {a.sizes!r}")
    if min(sizes) < 1 or a.repeats < 1:
        fail("--sizes and --repeats must be positive")
    if "instant" not in EXECUTORS:
        EXECUTORS.add("instant", InstantExecutor)
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, {a.repeats} calls per size")
    print("| trials in the study | off_front ms, median (min) | the family's trials off its fronts |")
    print("|---|---|---|")
    for n in sizes:
        r = time_keeper(n, a.repeats)
        print(f"| {n:,} | {r['median_ms']:.1f} ({r['min_ms']:.1f}) | {r['off_front']:,} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
