"""Does the README's quickstart question get decided, and in what time (issue 81, item 4)?

For each seed, `search run` with the quickstart's flags, `--trials N` and `--extra` (the
README's command, below, or a candidate), in a fresh process with its own SQLite file, then
`search compare --budgets B --margin D --format json` on its study. Reports per seed the
wall seconds and each budget's verdict and winner; in all: how many of the seeds x budgets
verdicts are "better" or "equivalent", and whether two seeds' "better" answers name
different winners, and the decided verdicts per minute of search (the evidence's rate,
to compare ways of spending time on it: item 4's "which decides most per second"). Seeds
1-6 by default, as in the issue.

    python -m benchmarks.verdicts.quickstart_decided --trials 80 --extra "--decide 20K,40K,60K,100K --margin 0.3" [--seeds 1,2,3,4,5,6]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = ["--space", "hourglass,conventional", "--task", "digits-denoise", "--budget", "100K"]
DECIDED = ("better", "equivalent")


def search(args: list[str], folder: Path) -> tuple[float, str]:
    """(wall seconds, stdout) of `search ARGS` in `folder` (SystemExit if it fails)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("SEARCH_WORKERS", None)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "search.cli", *args], cwd=folder, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"search {' '.join(args)} failed: {p.stderr.strip()[-800:]}")
    return time.perf_counter() - t, p.stdout


def verdicts(payload: str) -> list[dict]:
    """Per budget of `search compare --format json`'s output: budget, status ("better",
    "equivalent", ...), winner (the family ahead) and the verdict's text."""
    levels = json.loads(payload)["levels"]
    return [{"budget": v["budget"], "status": v["status"], "winner": v["winner"], "text": v["verdict"]} for v in levels]


def main() -> None:
    from benchmarks.bench_util import cpu_name
    from core.cpus import usable_cpus

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extra", default="", help="flags added to the quickstart's (quoted)")
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--seeds", default="1,2,3,4,5,6")
    ap.add_argument("--budgets", default="20K,40K,60K,100K")
    ap.add_argument("--margin", default="0.3")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="decided-"))
    command = [*QUICKSTART, "--trials", str(a.trials), *shlex.split(a.extra)]
    runs = []
    for seed in [int(s) for s in a.seeds.split(",")]:
        folder = root / f"seed-{seed}"
        folder.mkdir()
        seconds, _ = search(["run", *command, "--seed", str(seed), "--study", "s", "--no-report"], folder)
        _, out = search(["compare", "s", "--budgets", a.budgets, "--margin", a.margin, "--format", "json"], folder)
        rows = verdicts(out)
        runs.append({"seed": seed, "seconds": round(seconds, 1), "verdicts": rows})
        said = "; ".join(f"{r['budget']:g}: {r['text']}" for r in rows)
        print(f"seed {seed}: {seconds:.1f} s; {said}", flush=True)
    every = [r for run in runs for r in run["verdicts"]]
    decided = sum(r["status"] in DECIDED for r in every)
    winners = {(r["budget"], r["winner"]) for r in every if r["status"] == "better"}
    split = sorted({b for b, _ in winners if sum(1 for bb, _ in winners if bb == b) > 1})
    all_winners = sorted({w for _, w in winners})
    seconds = [r["seconds"] for r in runs]
    report = {
        "benchmark": "quickstart_decided",
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"cpu": cpu_name(), "usable_cores": usable_cpus()},
        "command": ["search", "run", *command],
        "compare": ["--budgets", a.budgets, "--margin", a.margin],
        "runs": runs,
        "decided": decided,
        "verdicts": len(every),
        "median_seconds": statistics.median(seconds),
        "decided_per_minute": round(60 * decided / sum(seconds), 3),
        "better_winners": all_winners,
        "budgets_with_two_winners": split,
    }
    print(
        f"{decided} of {len(every)} verdicts better or equivalent; 'better' names {all_winners or 'no family'}"
        + (f"; different winners at {split}" if split else "")
        + f"; median {report['median_seconds']:.1f} s a search; {report['decided_per_minute']:.2f} decided a minute"
    )
    if a.out:
        a.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
