"""Checkerboard: the best HanNet against the best plain ReLU MLP at an equal budget.

Two short searches with the real CLI, each trial trained from `--repeats` seeds:
    search run --space han                    --task checkerboard --budget B ...
    search run --space hourglass,conventional --task checkerboard --budget B ...
(same budget, trials, epochs, learning-rate set; a space file fixes the learning rates to
`--lrs` for both, everything else is the families' default spaces). For each search the
best trial by mean VALIDATION accuracy (the search objective) is reported with its TEST
accuracy mean and sample std over the seeds; the best test accuracy of any trial is shown
too. The database is kept in `--out` for `search report`/`search trials`; running the
script again on it only re-prints the table (the searches resume with nothing to do).

    python -m benchmarks.reproductions.checkerboard_han_vs_mlp [--budget 5K] [--trials 6] [--repeats 3]
        [--epochs 400] [--lrs 1e-3,5e-3] [--out bench-checkerboard]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SEARCHES = {"HanNet": "han", "ReLU MLP": "hourglass,conventional"}


def run_search(spaces: str, a: argparse.Namespace, out: Path) -> float:
    study = f"checkerboard-{spaces.replace(',', '-')}"
    cmd = [
        sys.executable,
        "-m",
        "search.cli",
        "run",
        "--space",
        spaces,
        "--task",
        "checkerboard",
        "--budget",
        a.budget,
        "--trials",
        str(a.trials),
        "--repeats",
        str(a.repeats),
        "--epochs",
        str(a.epochs),
        "--space-file",
        str(out / f"lrs-{spaces.replace(',', '-')}.toml"),
        "--storage",
        f"sqlite:///{out / 'bench.db'}",
        "--study",
        study,
        "--seed",
        str(a.seed),
        "--no-report",
        "--seed-checks",
        "0",  # the trials alone, as this benchmark measures them
    ]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=out, env=dict(os.environ, PYTHONPATH=str(REPO)))
    return time.perf_counter() - t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", default="5K")
    p.add_argument("--trials", type=int, default=6)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--epochs", type=int, default=400)
    p.add_argument("--lrs", default="1e-3,5e-3")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="bench-checkerboard")
    a = p.parse_args()
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    lrs = "[" + ", ".join(str(float(v)) for v in a.lrs.split(",")) + "]"
    for spaces in SEARCHES.values():
        text = "".join(f"[{f}]\nlr = {lrs}\n" for f in spaces.split(","))
        (out / f"lrs-{spaces.replace(',', '-')}.toml").write_text(text)
    print(f"load {os.getloadavg()[0]:.2f}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}", flush=True)
    seconds = {name: run_search(spaces, a, out) for name, spaces in SEARCHES.items()}

    from storage import load_trials

    print(
        f"\ncheckerboard (81x81 grid, 12x12 board, 25% train), budget {a.budget}, {a.trials} trials x "
        f"{a.repeats} seeds, {a.epochs} epochs, lr in {{{a.lrs}}}; load at the end {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'search':<10} {'best (by val) config':<44} {'params':>7} {'test acc':>16} {'best test acc':>14} {'time':>7}"
    )
    for name, spaces in SEARCHES.items():
        df = load_trials(f"checkerboard-{spaces.replace(',', '-')}", f"sqlite:///{out / 'bench.db'}")
        done = df[df.status == "complete"]
        best = done.loc[done.val_accuracy.idxmax()]  # the search's objective: mean validation accuracy
        cfg = " ".join(f"{k}={v}" for k, v in best.config.items() if k != "fixed_w_in")
        print(
            f"{name:<10} {best.family + ' ' + cfg:<44} {int(best.params):>7} "
            f"{best.accuracy:>8.3f} ± {best.accuracy_std:.3f} {done.accuracy.max():>14.3f} {seconds[name]:>6.0f}s"
        )


if __name__ == "__main__":
    main()
