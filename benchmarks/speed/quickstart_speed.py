"""The quickstart's 40-trial search: wall time, front hypervolume and distance from the
FLOPs limit, arm against arm in one command (issue 81). It was the README's command
until 2026-12-06; the README's command now goes on with `--decide` to 80 trials
(benchmarks/verdicts/quickstart_decided.py measures that one).

Each seed runs every arm, in rotating order, as `search run` in a fresh process with its
own SQLite file (nothing else should run on the machine). Arms (`--arms`, by name):

  one-at-a-time  `--workers 1`: trials one after another in the driver process with
                 torch's default threads (the behaviour before worker processes)
  default        the command as the README gives it (today's defaults)
  auto           `--sampler auto` (search/engine/sampling/cost_aware.py)
  tpe            `--sampler tpe`
  optunas-gp     the default with its GP's proposals made by Optuna's own GPSampler, as
                 before search/engine/sampling/gp_sampler.py (benchmarks/speed/with_optunas_gp.py)
  gp-fit-each    the default with a GP fit and acquisition search for every trial, never
                 two trials from one fit (benchmarks/speed/with_gp_fit_each.py)
  search-repeats-4  `--search-repeats 4`: four replicate searches of the question (issue
                 81's "at most 2x one search"); its hypervolume is of the four searches'
                 trials together, so its ratio is not one search's
  pack-4         `--pack 4`: each worker trains four trials as one program (on the CPU
                 without padding: models/ragged_pack.py)

Per seed: the wall seconds of the command, the hypervolume of each arm's complete trials
(log10 parameters, PSNR) at a reference slightly worse than every arm's trials of that
seed, as a ratio to the first arm's; the FLOPs each arm trained (6 x parameters x training
samples x epochs, summed over every run of every trial, seed checks included: the usual
estimate of a dense network's forward and backward pass) and its FLOPs limit: those FLOPs
over the fp32 matmul peak measured here (median of 2048^3 matmuls with torch's default
threads, in the benchmark's process before the arms). Medians over seeds.

    python -m benchmarks.speed.quickstart_speed [--seeds 5] [--arms one-at-a-time,default] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = ["--space", "hourglass,conventional", "--task", "digits-denoise", "--budget", "100K", "--trials", "40"]
ARMS = {
    "one-at-a-time": ["--workers", "1"],
    "default": [],
    "auto": ["--sampler", "auto"],
    "tpe": ["--sampler", "tpe"],
    "optunas-gp": [],
    "gp-fit-each": [],
    "search-repeats-4": ["--search-repeats", "4"],
    "pack-4": ["--pack", "4"],
}
LAUNCHERS = {
    "optunas-gp": "benchmarks.speed.with_optunas_gp",
    "gp-fit-each": "benchmarks.speed.with_gp_fit_each",
}  # arms run as another module than search.cli


def matmul_peak(n: int = 2048, repeats: int = 10) -> float:
    """fp32 matmul FLOP/s here: 2 n^3 over the median time of `repeats` products."""
    import torch

    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t)
    return 2 * n**3 / statistics.median(times)


def train_samples(task: str = "digits-denoise") -> int:
    """Training examples per epoch of `task` (its train split)."""
    from tasks.by_name import get_task
    from tasks.loading import load_data

    return int(load_data(get_task(task), None, "cpu").n_train)


def trained_flops(db: Path, samples: int) -> float:
    """6 x parameters x samples x epochs over every run of every trial in `db`."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT t.params, count(e.id) FROM trials t JOIN runs r ON r.trial_id = t.id "
        "JOIN epochs e ON e.run_id = r.id GROUP BY r.id"
    ).fetchall()
    con.close()
    return float(sum(6.0 * params * samples * epochs for params, epochs in rows))


def points(db: Path):
    """(log10 parameters, psnr) of the complete trials in `db`."""
    import numpy as np

    con = sqlite3.connect(db)
    rows = con.execute("SELECT params, objective FROM trials WHERE status = 'complete'").fetchall()
    con.close()
    return np.array([[np.log10(p), o] for p, o in rows if o is not None], dtype=float).reshape(-1, 2)


def run_arm(args: list[str], folder: Path, launcher: str = "search.cli") -> float:
    """Wall seconds of `search run ARGS` (as `python -m LAUNCHER run ARGS`) in `folder`
    (SystemExit with its stderr if it fails)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("SEARCH_WORKERS", None)
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", launcher, "run", *args, "--no-report", "--study", "s"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"search run {' '.join(args)} failed: {p.stderr.strip()[-800:]}")
    (folder / "stderr.txt").write_text(p.stderr)
    return seconds


def main() -> None:
    import numpy as np

    from benchmarks.bench_util import cpu_name
    from core.cpus import usable_cpus
    from core.pareto import default_reference, hypervolume_2d

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--arms", default="one-at-a-time,default")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    arms = [x.strip() for x in a.arms.split(",") if x.strip()]
    unknown = sorted(set(arms) - set(ARMS))
    if unknown:
        raise SystemExit(f"unknown arm(s) {unknown}; known: {sorted(ARMS)}")
    peak = matmul_peak()
    samples = train_samples()
    root = Path(tempfile.mkdtemp(prefix="quickstart-"))
    runs: dict[str, list[dict]] = {arm: [] for arm in arms}
    for seed in range(a.seeds):
        order = arms[seed % len(arms) :] + arms[: seed % len(arms)]
        for arm in order:
            folder = root / f"{arm}-{seed}"
            folder.mkdir()
            launcher = LAUNCHERS.get(arm, "search.cli")
            seconds = run_arm([*QUICKSTART, *ARMS[arm], "--seed", str(seed)], folder, launcher)
            flops = trained_flops(folder / "search.db", samples)
            runs[arm].append(
                {"seed": seed, "seconds": round(seconds, 2), "flops": flops, "limit_s": flops / peak, "db": str(folder)}
            )
            print(f"{arm:14s} seed {seed}: {seconds:6.1f} s, {flops:.3g} FLOPs", flush=True)
    base = arms[0]
    for seed in range(a.seeds):
        pts = {arm: points(Path(runs[arm][seed]["db"]) / "search.db") for arm in arms}
        reference = default_reference(np.vstack(list(pts.values())), ["minimize", "maximize"])
        hv = {arm: hypervolume_2d(p, ["minimize", "maximize"], reference) for arm, p in pts.items()}
        for arm in arms:
            runs[arm][seed]["hypervolume_ratio"] = round(hv[arm] / hv[base], 4)
            runs[arm][seed]["wall_ratio"] = round(runs[arm][seed]["seconds"] / runs[base][seed]["seconds"], 3)
            runs[arm][seed]["x_limit"] = round(runs[arm][seed]["seconds"] / runs[arm][seed]["limit_s"], 1)
    summary = {
        arm: {
            k: statistics.median(r[k] for r in rs)
            for k in ("seconds", "wall_ratio", "hypervolume_ratio", "x_limit", "limit_s", "flops")
        }
        for arm, rs in runs.items()
    }
    report = {
        "benchmark": "quickstart_speed",
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"cpu": cpu_name(), "usable_cores": usable_cpus(), "matmul_fp32_flops": peak},
        "command": ["search", "run", *QUICKSTART],
        "arms": {arm: ARMS[arm] for arm in arms},
        "seeds": a.seeds,
        "train_samples": samples,
        "runs": runs,
        "median": summary,
    }
    print(f"fp32 matmul peak here: {peak / 1e9:.0f} GFLOP/s; {samples} training samples per epoch")
    print("| arm | wall s | wall / first arm | hypervolume / first arm | FLOPs | x its FLOPs limit |")
    print("|---|---|---|---|---|---|")
    for arm, s in summary.items():
        print(
            f"| {arm} | {s['seconds']:.1f} | {s['wall_ratio']:.2f} | {s['hypervolume_ratio']:.3f} | "
            f"{s['flops']:.3g} | {s['x_limit']:.0f} |"
        )
    if a.out:
        a.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
