"""The same study on `--executor tune` and on `--executor local` (issue 29 item 3): the
same command, the same seed, one trial in flight on Tune (`--max-concurrent 1`), each in
its own SQLite database, then compared trial by trial (configuration, parameters,
status, the stored metric, the epochs stored) and front by front (the Pareto front of
parameters against the task's metric, overall and per family, as the pages draw it).

With one trial in flight Tune asks the study's searcher for the next trial only after the
last one was stored, as the local loop does, so the proposals, and with one torch thread
each the trained numbers, should be the same. `--concurrent` adds a third run on Tune
with the cluster's default (as many trials in flight as CPUs): its proposals are asked
before the running trials are told, so the study differs; its front is compared by
hypervolume (log10 parameters against the metric, one reference point for all runs).

Run:  OMP_NUM_THREADS=1 python -m benchmarks.search_quality.tune_front [--trials 20] [--concurrent]
          [--out docs/data/tune-front.json]
      python -m benchmarks.search_quality.tune_front --quick    # 6 trials of 2 epochs on 256 samples (tests)
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_util import write_json

REPO = Path(__file__).resolve().parents[2]

STUDY = "front"


def run_cli(executor: str, folder: Path, a: argparse.Namespace, extra: list[str]) -> dict[str, Any]:
    """`search run ...` in a child process (one torch thread) into folder/<name>.db."""
    name = executor if not extra else f"{executor}-{'-'.join(x.strip('-') for x in extra)}"
    args = [
        "run",
        "--space",
        a.space,
        "--task",
        a.task,
        "--budget",
        a.budget,
        "--trials",
        str(a.trials),
        "--seed",
        str(a.seed),
        "--study",
        STUDY,
        "--storage",
        f"sqlite:///{folder / name}.db",
        "--no-report",
        "--seed-checks",
        "0",  # the trials alone, as this benchmark measures them
        "--executor",
        executor,
        *extra,
    ]
    if a.epochs:
        args += ["--epochs", str(a.epochs)]
    if a.max_train_samples:
        args += ["--max-train-samples", str(a.max_train_samples)]
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "search.cli", *args], cwd=folder, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"search {' '.join(args)}: exit {done.returncode}\n{done.stderr[-3000:]}")
    shown = [x for i, x in enumerate(args) if x != "--storage" and (i == 0 or args[i - 1] != "--storage")]
    return {"name": name, "command": "search " + " ".join(shown), "db": str(folder / f"{name}.db"), "wall_s": wall}


def study_of(db: str, task_name: str) -> dict[str, Any]:
    """The study's trials and fronts, read back from its database."""
    from reports.fronts import front_data
    from storage import Store
    from tasks import get_task

    store = Store(f"sqlite:///{db}")
    records = store.trials(STUDY)
    task = get_task(task_name, {})
    metric, direction = task.metric, task.direction
    fronts = front_data(store.trials_frame(STUDY), metric, direction)
    trials = [
        {
            "number": r.number,
            "family": r.family,
            "config": r.config,
            "params": r.params,
            "status": r.status,
            "metric": (r.metrics.get(metric) or (None,))[0],
            "epochs": len(store.epochs(STUDY, r.number)),
            "attempt": r.attempt,
            "retry_of": r.retry_of,
            "duration_s": r.duration_s,
        }
        for r in records
    ]
    return {
        "metric": metric,
        "direction": direction,
        "trials": trials,
        "front": [int(n) for n in fronts.overall_numbers],
        "family_fronts": {f.family: [int(n) for n in f.front_numbers] for f in fronts.families},
        "statuses": {s: sum(t["status"] == s for t in trials) for s in sorted({t["status"] for t in trials})},
        "training_s": sum(t["duration_s"] or 0.0 for t in trials),
    }


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Trial by trial and front by front: what differs between two studies."""
    ta, tb = a["trials"], b["trials"]
    pairs = list(zip(ta, tb))
    diffs = [
        abs(x["metric"] - y["metric"])
        for x, y in pairs  # the same configuration's metric on both
        if x["config"] == y["config"] and x["metric"] is not None and y["metric"] is not None
    ]
    return {
        "trials": [len(ta), len(tb)],
        "same_configs": len(ta) == len(tb) and all(x["config"] == y["config"] for x, y in pairs),
        "same_params": len(ta) == len(tb) and all(x["params"] == y["params"] for x, y in pairs),
        "same_statuses": len(ta) == len(tb) and all(x["status"] == y["status"] for x, y in pairs),
        "same_epochs_stored": len(ta) == len(tb) and all(x["epochs"] == y["epochs"] for x, y in pairs),
        "first_different_trial": next((x["number"] for x, y in pairs if x["config"] != y["config"]), None),
        "same_config_metric_max_abs_diff": max(diffs) if diffs else None,
        "same_front": a["front"] == b["front"],
        "same_family_fronts": a["family_fronts"] == b["family_fronts"],
    }


def hypervolumes(studies: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Each study's front hypervolume (log10 params minimised, the metric in its direction)
    against one reference point for all (10% worse than the worst of their points)."""
    import numpy as np

    from core.pareto import default_reference, hypervolume_2d

    def points(s):
        return np.array(
            [
                [math.log10(t["params"]), t["metric"]]
                for t in s["trials"]
                if t["status"] == "complete" and t["metric"] is not None
            ],
            dtype=float,
        ).reshape(-1, 2)

    first = next(iter(studies.values()))
    dirs = ["minimize", first["direction"]]
    ref = default_reference(np.concatenate([points(s) for s in studies.values()]), dirs)
    return {k: float(hypervolume_2d(points(s), dirs, ref)) for k, s in studies.items()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--space", default="hourglass")
    ap.add_argument("--task", default="digits-denoise")
    ap.add_argument("--budget", default="100K")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, help="default: the task's")
    ap.add_argument("--max-train-samples", type=int)
    ap.add_argument("--concurrent", action="store_true", help="also Tune with its default trials in flight")
    ap.add_argument("--quick", action="store_true", help="6 trials, 2 epochs, 256 training samples")
    ap.add_argument("--keep", help="keep the databases in this folder (default: a temporary one)")
    ap.add_argument("--out", help="write the comparison as JSON here")
    a = ap.parse_args(argv)
    if a.quick:
        a.trials, a.epochs, a.max_train_samples = 6, 2, 256
    if a.trials < 1:
        print(f"{os.path.basename(sys.argv[0])}: --trials must be at least 1", file=sys.stderr)
        sys.exit(2)
    load = [os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(a.keep).resolve() if a.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        runs = [run_cli("local", folder, a, []), run_cli("tune", folder, a, ["--max-concurrent", "1"])]
        load.append(os.getloadavg())
        if a.concurrent:
            runs.append(run_cli("tune", folder, a, ["--max-concurrent", str(os.cpu_count() or 2)]))
            load.append(os.getloadavg())
        studies = {r["name"]: study_of(r["db"], a.task) for r in runs}
    names = [r["name"] for r in runs]
    result = {
        "benchmark": "tune_front",
        "when_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "load": load},
        "quick": a.quick,
        "runs": [{k: v for k, v in r.items() if k != "db"} for r in runs],
        "studies": studies,
        "local_vs_tune_one_in_flight": compare(studies[names[0]], studies[names[1]]),
        "hypervolume": hypervolumes(studies),
    }
    if a.concurrent:
        result["local_vs_tune_concurrent"] = compare(studies[names[0]], studies[names[2]])
    print_report(result)
    if a.out:
        write_json(a.out, result)
    return result


def print_report(result: dict[str, Any]) -> None:
    print(f"load average (1 min) before/after each run: {', '.join(f'{x[0]:.2f}' for x in result['machine']['load'])}")
    print("| run | command | wall s | trials | statuses | training s | front (trial numbers) | hypervolume |")
    print("|---|---|---|---|---|---|---|---|")
    for r in result["runs"]:
        s = result["studies"][r["name"]]
        st = ", ".join(f"{k} {v}" for k, v in s["statuses"].items())
        print(
            f"| {r['name']} | `{r['command']}` | {r['wall_s']:.1f} | {len(s['trials'])} | {st} "
            f"| {s['training_s']:.1f} | {s['front']} | {result['hypervolume'][r['name']]:.4f} |"
        )
    for key in ("local_vs_tune_one_in_flight", "local_vs_tune_concurrent"):
        if key in result:
            print(f"{key}: " + ", ".join(f"{k} {v}" for k, v in result[key].items()))


if __name__ == "__main__":
    main()
