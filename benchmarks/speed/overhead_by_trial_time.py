"""The product's own time per trial against the trial's, for trials of several lengths
(issue 80, item 3: "the default search's overhead at most 5% of the median trial's time
once 5 trials have run").

A user's family and training-function task (benchmarks/search_quality/plugin_quality.py's
synthetic funnel) whose training function sleeps `--seconds` seconds, standing in for a
training of that length (the product's orchestration does not depend on what the trial
computes), searched by `search.run` with its defaults, one trial at a time (a family
registered by a call trains in this process). For each trial after the fifth, the
orchestration is the time from the end of one trial to the start of the next as the
database records them (proposing, counting, storage, progress); each trial's own time is
its recorded duration. Printed per trial length: the median orchestration, the median
trial, their ratio against the 5% target, and the summary line's share outside the
trials; medians over `--seeds` searches.

    python -m benchmarks.speed.overhead_by_trial_time [--seconds 0.1,1,3] [--seeds 3] [--trials 40] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import platform
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import benchmarks.search_quality.plugin_quality as q
from benchmarks.bench_util import cpu_name

TARGET = 0.05  # issue 80: orchestration at most 5% of the median trial's time
FIRST = 5  # trials before the target applies
SLEEP = {"seconds": 0.0}  # the training function's length, set per run


def register() -> str:
    """The synthetic funnel family with a task whose training function sleeps SLEEP seconds."""
    import search
    from models import FAMILIES

    problem = q.synthetic("plain")
    name = "syn-sleep"
    if name in FAMILIES:
        return name

    def train(model, settings, report):
        time.sleep(SLEEP["seconds"])
        n = sum(p.numel() for p in model.parameters())
        value = problem.metric(settings.config, n)
        report(1, {"score": value})
        return {"score": value}

    search.task(f"{name}-task", train, metrics={"score": "maximize"}, inputs=q.IO.d_in, outputs=q.IO.d_out, epochs=1)
    q.register_family(name, problem)
    return name


def _when(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(str(text))


def gaps(db: Path) -> tuple[list[float], list[float]]:
    """(the orchestration between consecutive trials after the FIRST, the trials' durations)
    of the one study in `db`, in seconds."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT started_at, finished_at, duration_s FROM trials ORDER BY number").fetchall()
    between = [(_when(b[0]) - _when(a[1])).total_seconds() for a, b in zip(rows, rows[1:])][FIRST - 1 :]
    return between, [float(r[2]) for r in rows]


def one(seconds: float, seed: int, trials: int, folder: Path) -> dict[str, float]:
    """One default search of `trials` trials of `seconds` each: its figures."""
    import search

    name = register()
    SLEEP["seconds"] = seconds
    db = folder / f"s{seconds}-{seed}.db"
    out = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        search.run(space=name, budget=q.BUDGET, trials=trials, seed=seed, storage=str(db), study=f"s{seed}")
    wall = time.perf_counter() - t0
    between, durations = gaps(db)
    m = re.search(r"([0-9]+)% of it outside the trials", out.getvalue())
    return {
        "wall_s": wall,
        "orchestration_s": statistics.median(between),
        "trial_s": statistics.median(durations),
        "share_outside": int(m.group(1)) / 100 if m else float("nan"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", default="0.1,1,3", help="comma list of trial lengths in seconds")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    try:
        lengths = [float(s) for s in a.seconds.split(",")]
    except ValueError:
        lengths = []
    if not lengths or any(s < 0 for s in lengths) or a.seeds < 1 or a.trials <= FIRST + 1:
        print(f"error: --seconds a comma list of lengths >= 0, --seeds >= 1, --trials > {FIRST + 1}", file=sys.stderr)
        return 2
    result: dict = {
        "machine": f"{cpu_name()}, Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
        "trials": a.trials,
        "seeds": a.seeds,
        "target": TARGET,
        "lengths": {},
    }
    print(
        "| trial length s | orchestration per trial s (median) | trial s (median) | ratio | target 5% | outside the trials (summary) |"
    )
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for seconds in lengths:
            runs = [one(seconds, seed, a.trials, Path(tmp)) for seed in range(a.seeds)]
            row = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            row["ratio"] = row["orchestration_s"] / row["trial_s"] if row["trial_s"] > 0 else float("inf")
            row["runs"] = runs
            result["lengths"][str(seconds)] = row
            print(
                f"| {seconds:g} | {row['orchestration_s']:.3f} | {row['trial_s']:.3f} | {row['ratio']:.1%} | "
                f"{'met' if row['ratio'] <= TARGET else 'not met'} | {row['share_outside']:.0%} |",
                flush=True,
            )
    if a.out:
        Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
