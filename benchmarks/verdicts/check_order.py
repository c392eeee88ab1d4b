"""Seed checks in another order, on the same searches: do the verdicts' intervals follow the
evidence better when a one-seed search checks the configurations that hold its families'
values at the compared budgets (`--seed-check-order budgets`) rather than its fronts'
cheapest (`cheapest`, the default)? Issue 61, item 3; docs/benchmarks.md §29.

For each setting, the default searches that benchmarks/verdicts/verdict_calibration.py ran into
DIR/SETTING.db (their checks in the default order) are copied to DIR/ORDER/SETTING.db with
their seed checks deleted, and each study is resumed with `--seed-check-order ORDER`: its
trials are the same rows, so only which configurations got a second seed differs. Both are
then read with verdict_calibration's own `evaluate` (`search compare`'s code and defaults)
side by side, with what the checks cost: their training seconds against the trials'.

    python -m benchmarks.verdicts.check_order --dir /tmp/cal61 --settings qs,cls-d --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchmarks.verdicts.verdict_calibration import SETTINGS, Setting, evaluate, finished, pct

REPO = Path(__file__).resolve().parents[2]


def strip_checks(db: Path) -> int:
    """Delete every seed check (a trial whose note names the trial it checks:
    search/engine/seed_checks.py `checked_trial`, retried checks too) with its metrics, runs,
    epochs, artifacts and retrainings; returns how many trials went."""
    from search.engine.seed_checks import checked_trial

    con = sqlite3.connect(db)
    try:
        ids = [i for i, note in con.execute("SELECT id, note FROM trials") if checked_trial(note) is not None]
        marks = ",".join("?" * len(ids))
        runs = f"SELECT id FROM runs WHERE trial_id IN ({marks})"
        for table, where, args in (
            ("epochs", f"run_id IN ({runs})", ids),
            ("run_artifacts", f"run_id IN ({runs})", ids),
            ("runs", f"trial_id IN ({marks})", ids),
            ("trial_metrics", f"trial_id IN ({marks})", ids),
            ("retrainings", f"trial_id IN ({marks})", ids),
            ("trials", f"id IN ({marks})", ids),
        ):
            con.execute(f"DELETE FROM {table} WHERE {where}", args)
        con.commit()
        return len(ids)
    finally:
        con.close()


def recheck(setting: Setting, source: Path, folder: Path, order: str) -> None:
    """DIR/ORDER/SETTING.db: the source's searches with their checks in `order` (each study
    resumed once; a study whose checks in `order` are there already is left alone)."""
    from storage import Store

    db = folder / f"{setting.name}.db"
    folder.mkdir(parents=True, exist_ok=True)
    if not db.exists():
        shutil.copyfile(source / f"{setting.name}.db", db)
        print(f"{setting.name}: {strip_checks(db)} seed checks removed from the copy", file=sys.stderr, flush=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
    for seed in finished(Store(f"sqlite:///{db}"), setting):
        study = f"{setting.name}-{seed}"
        print(f"checking {study} in the order {order}", file=sys.stderr, flush=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "search.cli",
                "run",
                *setting.flags,
                *("--trials", str(setting.trials), "--repeats", str(setting.repeats), "--seed", str(seed)),
                *("--storage", f"sqlite:///{db}", "--study", study, "--no-report"),
                *("--seed-check-order", order),
            ],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )


def check_costs(db: Path, setting: Setting) -> dict:
    """Per study: how many seed checks, and their training seconds against the trials'
    (medians over the setting's studies)."""
    from search.engine.seed_checks import is_check
    from storage import Store

    store = Store(f"sqlite:///{db}")
    try:
        stored = {r.name for r in store.list_studies()}
        checks, share = [], []
        for name in (f"{setting.name}-{s}" for s in setting.seeds):
            if name not in stored:
                continue
            rows = store.trials(name)
            seconds = {kind: sum(r.duration_s or 0.0 for r in rows if is_check(r) == kind) for kind in (True, False)}
            checks.append(sum(is_check(r) for r in rows))
            share.append(seconds[True] / max(seconds[False], 1e-9))
    finally:
        store.close()
    return {"checks_median": float(np.median(checks)), "check_seconds_share_median": float(np.median(share))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="verdict_calibration.py's folder of the default searches")
    ap.add_argument("--settings", default="qs,cls-d", help=f"comma list of {', '.join(SETTINGS)}")
    ap.add_argument("--order", default="budgets", help="the order to check again in (CHECK_ORDERS)")
    ap.add_argument("--methods", default="default", help="verdict_calibration.py's methods to read both with")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args(argv)
    from search.engine.sampling.policies import CHECK_ORDERS, DEFAULT_CHECK_ORDER

    if a.order not in CHECK_ORDERS or a.order == DEFAULT_CHECK_ORDER:
        others = [o for o in CHECK_ORDERS if o != DEFAULT_CHECK_ORDER]
        print(f"error: --order must be one of {', '.join(others)}, got {a.order!r}", file=sys.stderr)
        return 2
    names = [s.strip() for s in a.settings.split(",") if s.strip()]
    source = Path(a.dir)
    missing = [n for n in names if n not in SETTINGS or not (source / f"{n}.db").exists()]
    if missing:
        print(f"error: no calibration searches in {source} for {', '.join(missing)}", file=sys.stderr)
        return 2
    results = []
    for name in names:
        setting = SETTINGS[name]
        recheck(setting, source, source / a.order, a.order)
        for order, folder in ((DEFAULT_CHECK_ORDER, source), (a.order, source / a.order)):
            costs = check_costs(folder / f"{name}.db", setting)
            for m in a.methods.split(","):
                results.append({**evaluate(setting, folder, m, a.confidence), "order": order, **costs})
    print(
        "| setting | order | method | coverage | A/A n.d. | too thin | median half-width | "
        "half-width / spread (median, max) | checks (median) | check seconds / trials' |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        ratio = r.get("width_to_spread", [float("nan")] * 2)
        print(
            f"| {r['setting']} | {r['order']} | {r['method']} | {pct(r['coverage'])} | "
            f"{pct(r['aa_not_distinguishable'])} | {pct(r['thin'])} | {r['median_half_width']:.3g} | "
            f"{ratio[0]:.2g}, {ratio[1]:.2g} | {r['checks_median']:g} | {r['check_seconds_share_median']:.2f} |"
        )
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
