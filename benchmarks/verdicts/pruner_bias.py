"""Does the pruner move the verdicts? (issue 61, item 7)

Reads the same question's replicate searches twice: searched with the default pruner (one
folder of `benchmarks/verdicts/verdict_calibration.py`) and without it (another folder, the searches
run with `--search-flags="--pruner none"`), each read with `search compare`'s code and
defaults. Per setting and budget it reports the pooled difference between the two families
(the mean over the replicate searches of each one's difference) with the pruner and
without, their gap, and that gap against the spread between the unpruned replicates (issue
61's target: within half of it in median over the budgets).

    python -m benchmarks.verdicts.verdict_calibration --dir /tmp/cal --settings qs                    # pruned
    python -m benchmarks.verdicts.verdict_calibration --dir /tmp/cal-np --settings qs --search-flags="--pruner none"
    python -m benchmarks.verdicts.pruner_bias --pruned /tmp/cal --unpruned /tmp/cal-np --settings qs
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from benchmarks.verdicts.verdict_calibration import SETTINGS, evaluate


def bias(setting: str, pruned: Path, unpruned: Path, method: str = "default", confidence: float = 0.95) -> dict:
    """The pooled differences with and without the pruner, per budget, and their gap
    against the unpruned replicates' spread."""
    s = SETTINGS[setting]
    with_p = evaluate(s, pruned, method, confidence)
    without = evaluate(s, unpruned, method, confidence)
    a, b = np.array(with_p["pooled_difference"]), np.array(without["pooled_difference"])
    spread = np.array(without["spread_between_replicates"])
    gap = a - b
    ratio = np.abs(gap) / spread
    return {
        "setting": setting,
        "method": method,
        "replicates": [with_p["replicates"], without["replicates"]],
        "budgets": list(s.budgets),
        "pooled_pruned": a.tolist(),
        "pooled_unpruned": b.tolist(),
        "gap": gap.tolist(),
        "spread_unpruned": spread.tolist(),
        "gap_to_spread": ratio.tolist(),
        "median_gap_to_spread": float(np.nanmedian(ratio)),
        "coverage_of_unpruned": coverage(pruned, s, method, confidence, b),
    }


def coverage(folder: Path, s, method: str, confidence: float, truth: np.ndarray) -> float:
    """The share of the pruned searches' intervals of the difference that hold the unpruned
    pooled answer (issue 61: the calibration's truth comes from unpruned searches)."""
    r = evaluate(s, folder, method, confidence)
    held = []
    diffs = np.array(r["differences"], dtype=float)
    for row in range(diffs.shape[0]):
        for i in range(diffs.shape[1]):
            lo, hi = r["intervals"][row][i]
            if lo is not None:
                held.append(lo <= truth[i] <= hi)
    return float(np.mean(held)) if held else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pruned", required=True, help="folder of the searches with the default pruner")
    ap.add_argument("--unpruned", required=True, help="folder of the same searches run with --pruner none")
    ap.add_argument("--settings", default="qs", help=f"comma list of {', '.join(SETTINGS)}")
    ap.add_argument("--method", default="default", help="verdict_calibration's method (default: search compare's)")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args(argv)
    names = [n.strip() for n in a.settings.split(",") if n.strip()]
    unknown = [n for n in names if n not in SETTINGS]
    if unknown:
        print(f"error: unknown setting(s) {', '.join(unknown)}; known: {', '.join(SETTINGS)}", file=sys.stderr)
        return 2
    results = [bias(n, Path(a.pruned), Path(a.unpruned), a.method) for n in names]
    print("| setting | budget | pooled, pruned | pooled, unpruned | gap | spread (unpruned) | gap / spread |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        for i, b in enumerate(r["budgets"]):
            print(
                f"| {r['setting']} | {b:g} | {r['pooled_pruned'][i]:+.3f} | {r['pooled_unpruned'][i]:+.3f} | "
                f"{r['gap'][i]:+.3f} | {r['spread_unpruned'][i]:.3f} | {r['gap_to_spread'][i]:.2f} |"
            )
        print(
            f"| {r['setting']} | median | | | | | **{r['median_gap_to_spread']:.2f}** "
            f"(coverage of the unpruned answer by pruned intervals: {r['coverage_of_unpruned']:.0%}) |"
        )
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
