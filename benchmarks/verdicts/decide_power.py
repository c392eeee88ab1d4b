"""How often `search run --decide` decides, and what it costs against the default search.

Runs a question of `benchmarks/verdicts/verdict_calibration.py` (`--setting`: by default qs, the
README's quickstart question, hourglass against conventional, digits denoising, 100K) with
`--decide BUDGETS --margin D --trials CAP` for a few seeds, one thread each, and
reports per seed the verdict at each named budget, the trials and seed checks it ran and
their training seconds; beside it, the default 40-trial search of the same seed read from
`--baseline DB` (the verdict calibration's studies SETTING-SEED: `benchmarks/verdicts/verdict_calibration.py
--settings qs`), whose training seconds and trained runs (trials and seed checks) it divides
by. The seconds are only comparable when both ran under the same load; the runs always are.

    python -m benchmarks.verdicts.decide_power --dir /tmp/decide --baseline /tmp/cal61/qs.db --seeds 11,12,13
    python -m benchmarks.verdicts.decide_power --setting gc-d --decide 20K,50K,100K --margin 1 --dir /tmp/dgc \
        --baseline /tmp/cal61/gc-d.db --seeds 11,12
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def training_seconds(store, study: str) -> tuple[int, int, float]:
    """(trials, seed checks, their training seconds) of a stored study."""
    from search.engine.seed_checks import is_check

    rows = [r for r in store.trials(study) if r.status != "rejected"]
    checks = sum(is_check(r) for r in rows)
    return len(rows) - checks, checks, sum(r.duration_s or 0.0 for r in rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--setting", default="qs", help="a verdict_calibration setting: its question's flags")
    ap.add_argument("--seeds", default="11,12,13")
    ap.add_argument("--decide", default="40K,60K,100K")
    ap.add_argument("--margin", type=float, default=0.3)
    ap.add_argument("--trials", type=int, default=80, help="the cap (default 80: twice the default search)")
    ap.add_argument("--baseline", help="SQLite file of the default searches, studies qs-SEED")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    from benchmarks.verdicts.verdict_calibration import SETTINGS
    from search.api.run import decide_budgets
    from search.engine.deciding import read_verdicts
    from storage import Store

    if a.setting not in SETTINGS:
        print(f"error: unknown setting {a.setting}; known: {', '.join(SETTINGS)}", file=sys.stderr)
        return 2
    question = SETTINGS[a.setting].flags
    seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
    folder = Path(a.dir)
    folder.mkdir(parents=True, exist_ok=True)
    db = f"sqlite:///{folder / 'decide.db'}"
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
    rows = []
    for seed in seeds:
        study = f"decide-{seed}"
        cmd = [sys.executable, "-m", "search.cli", "run", *question, "--decide", a.decide, "--margin", str(a.margin)]
        cmd += ["--trials", str(a.trials), "--seed", str(seed), "--storage", db, "--study", study, "--no-report"]
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        store = Store(db)
        rec = store.get_study(study)
        budgets = decide_budgets(a.decide)
        verdicts, _ = read_verdicts(
            store.trials(study), rec.metric, rec.direction, rec.families, budgets, a.margin, 3.0, rec.settings
        )
        trials, checks, seconds = training_seconds(store, study)
        row = {"seed": seed, "trials": trials, "checks": checks, "seconds": seconds}
        row["verdicts"] = [v.status for v in verdicts]
        row["winners"] = [v.winner if v.status == "better" else None for v in verdicts]  # for the direction
        row["answers"] = [v.text for v in verdicts]
        if a.baseline:
            base = Store(f"sqlite:///{a.baseline}")
            bt, bc, bs = training_seconds(base, f"{a.setting}-{seed}")
            row |= {"baseline_trials": bt, "baseline_checks": bc, "baseline_seconds": bs, "ratio": seconds / bs}
            row["runs_ratio"] = (trials + checks) / (bt + bc)  # trained runs: unlike seconds, the same under any load
        rows.append(row)
        print(json.dumps(row), flush=True)
    decided = [s in ("better", "equivalent") for r in rows for s in r["verdicts"]]
    print(
        f"decided {sum(decided)} of {len(decided)} budget answers; median compute ratio "
        f"{sorted(r.get('ratio', float('nan')) for r in rows)[len(rows) // 2]:.2f}"
    )
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
