"""What keeping the trained weights costs (issue 34): the write per trial, and the store.

    python -m benchmarks.speed.weights_overhead [--trials 40] [--seeds 3] [--epochs 1] [--budget 60K] [--json OUT]

For each study seed the same study (digits-denoise, hourglass,conventional, no data to
fetch, `--pruner none`) runs three times side by side in this one process, the order of
the three rotating from seed to seed: `--keep none`, `--keep all` and `--keep pareto`.
The same seed gives the same trials in each (the proposals do not depend on the weights),
so trial n of one is trial n of the others.

Reported, medians over every trial of every seed:
- the write: the time `write_weights` takes for each run (encoding the state as
  safetensors, writing it to the folder store; timed inside the process that trains), in
  ms and as a share of that trial's time;
- the trial's time with `--keep all` against the same trial with `--keep none` (paired:
  the difference also holds what the write does not show, e.g. handing the state over);
- the store after the study: files and bytes in the artifact folder under `--keep pareto`
  against `--keep all` (and the database files, for scale).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import search.artifacts.weights as weights_module
from search.cli.main import main
from storage import Store

MODES = ("none", "all", "pareto")


def folder_size(path: Path) -> tuple[int, int]:
    """(files, bytes) under `path` (0, 0 when it is missing)."""
    files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else []
    return len(files), sum(p.stat().st_size for p in files)


def run_study(work: Path, mode: str, seed: int, args: argparse.Namespace, writes: dict) -> dict:
    """One study; returns {trial number: duration_s} and the store's size."""
    name = f"w-{mode}-s{seed}"
    db = work / f"{name}.db"
    argv = [
        "run",
        "--space",
        "hourglass,conventional",
        "--task",
        "digits-denoise",
        "--budget",
        args.budget,
        "--trials",
        str(args.trials),
        "--epochs",
        str(args.epochs),
        "--seed",
        str(seed),
        "--pruner",
        "none",
        "--study",
        name,
        "--storage",
        f"sqlite:///{db}",
        "--keep",
        mode,
        "--no-report",
        "--seed-checks",
        "0",  # the trials alone, as this benchmark measures them
    ]
    if mode != "none":
        argv += ["--artifacts", str(work / f"{name}-artifacts")]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    if code != 0:
        raise SystemExit(f"search run failed ({code}): {' '.join(argv)}")
    with Store(f"sqlite:///{db}") as store:
        trials = {t.number: t.duration_s for t in store.trials(name) if t.status == "complete"}
    files, size = folder_size(work / f"{name}-artifacts")
    db_bytes = sum(p.stat().st_size for p in work.glob(f"{name}.db*"))  # with SQLite's -wal file
    return {
        "name": name,
        "trials": trials,
        "files": files,
        "bytes": size,
        "db_bytes": db_bytes,
        "writes": {n: w for (study, n), w in writes.items() if study == name},
    }


def median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def measure(args: argparse.Namespace, work: Path) -> dict:
    writes: dict[tuple[str, int], float] = {}  # (study, trial) -> seconds spent in write_weights
    original = weights_module.write_weights

    def timed_write(url, spec, seed, state):
        t0 = time.perf_counter()
        try:
            return original(url, spec, seed, state)
        finally:
            key = (spec.study, spec.number)
            writes[key] = writes.get(key, 0.0) + time.perf_counter() - t0

    weights_module.write_weights = timed_write  # the sink looks it up at each call
    runs: dict[str, list[dict]] = {m: [] for m in MODES}
    try:
        for i, seed in enumerate(range(args.seeds)):
            order = MODES[i % 3 :] + MODES[: i % 3]  # rotate: no mode always first (warm caches) or last
            for mode in order:
                runs[mode].append(run_study(work, mode, seed, args, writes))
    finally:
        weights_module.write_weights = original

    write_ms, write_share, paired_ms, paired_share, none_s, all_s = [], [], [], [], [], []
    for kept_all, none in zip(runs["all"], runs["none"]):
        for n, duration in kept_all["trials"].items():
            w = kept_all["writes"].get(n)
            if w is not None and duration:
                write_ms.append(1000 * w)
                write_share.append(w / duration)
            if n in none["trials"] and none["trials"][n]:
                paired_ms.append(1000 * (duration - none["trials"][n]))
                paired_share.append(duration / none["trials"][n] - 1)
                none_s.append(none["trials"][n])
                all_s.append(duration)
    store = {
        m: {
            "files": [r["files"] for r in runs[m]],
            "bytes": [r["bytes"] for r in runs[m]],
            "db_bytes": [r["db_bytes"] for r in runs[m]],
        }
        for m in MODES
    }
    return {
        "settings": {
            "trials": args.trials,
            "seeds": args.seeds,
            "epochs": args.epochs,
            "budget": args.budget,
            "task": "digits-denoise",
            "space": "hourglass,conventional",
        },
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        },
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "write": {
            "ms_median": median(write_ms),
            "share_median": median(write_share),
            "writes": len(write_ms),
            "ms_max": max(write_ms) if write_ms else None,
        },
        "paired": {
            "trial_s_none_median": median(none_s),
            "trial_s_all_median": median(all_s),
            "extra_ms_median": median(paired_ms),
            "extra_share_median": median(paired_share),
            "pairs": len(paired_ms),
        },
        "store": store,
    }


def table(report: dict) -> str:
    w, p, s = report["write"], report["paired"], report["store"]

    def mb(xs: list[int]) -> str:
        return " / ".join(f"{x / 1e6:.2f}" for x in xs)

    lines = [
        "| measure | median |",
        "|---|---|",
        f"| `write_weights` per trial (ms) | {w['ms_median']:.2f} (max {w['ms_max']:.1f}, {w['writes']} writes) |",
        f"| its share of the trial's time | {100 * w['share_median']:.2f}% |",
        f"| trial time, `--keep none` (s) | {p['trial_s_none_median']:.3f} |",
        f"| trial time, `--keep all` (s) | {p['trial_s_all_median']:.3f} |",
        f"| same trial, all minus none (ms) | {p['extra_ms_median']:.1f} ({100 * p['extra_share_median']:+.1f}%, "
        f"{p['pairs']} pairs) |",
        "",
        "| `--keep` | files per study | artifact folder (MB) per study | database (MB, with -wal) |",
        "|---|---|---|---|",
    ]
    for mode in MODES:
        lines.append(
            f"| {mode} | {' / '.join(map(str, s[mode]['files']))} | {mb(s[mode]['bytes'])} | "
            f"{mb(s[mode]['db_bytes'])} |"
        )
    return "\n".join(lines)


def main_cli() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=40, help="trials per study (default 40)")
    p.add_argument("--seeds", type=int, default=3, help="study seeds, each run under the three --keep (default 3)")
    p.add_argument("--epochs", type=int, default=1, help="epochs per trial (default 1)")
    p.add_argument("--budget", default="60K", help="the studies' budget (default 60K)")
    p.add_argument("--work", help="folder for the databases and stores (default: a temporary one)")
    p.add_argument("--json", help="write the report here")
    args = p.parse_args()
    if args.trials < 1 or args.seeds < 1 or args.epochs < 1:
        print("error: --trials, --seeds and --epochs must be at least 1", file=sys.stderr)
        return 2
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        report = measure(args, work)
    print(table(report))
    print(
        f"\n{report['settings']}; {report['machine']['cpus']} CPUs, load {report['machine']['load']}; {report['date']}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main_cli())
