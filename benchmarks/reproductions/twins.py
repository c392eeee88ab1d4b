"""An S-Mixer beside its SW-MLP twin, pair by pair (issue 12; Hayase & Karakida).

Reads a study that trained S-Mixers (S = P) and their SW-MLP twins (`p = "s-mixer"`, 2L
layers), as the `hayase-twins-small` / `hayase-twins` recipes do, and prints one row per
pair (reports/twins.py): both test means over the seeds, the difference S-Mixer - twin
(signed: > 0 means the S-Mixer is better) with its percentile interval, and the summary.

    search run --recipe hayase-twins-small --study twins
    python -m benchmarks.reproductions.twins --study twins [--storage URL] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path


def fmt(x, digits: int = 3) -> str:
    return "" if x is None or x != x else f"{x:.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", required=True)
    ap.add_argument("--storage", default=None, help="SQLAlchemy URL or SQLite file (default as `search`)")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--json", default=None, help="also write the pairs and summary here")
    a = ap.parse_args(argv)

    from core.errors import UserError
    from models.mixer_net import patch_grid
    from reports.twins import twin_pairs
    from storage import Store
    from tasks import get_task

    try:
        store = Store(a.storage)
        rec = store.get_study(a.study)
        io = get_task(rec.task, (rec.settings or {}).get("task_options") or {}).io()
        pairs, s = twin_pairs(
            store.trials_frame(rec.name),
            rec.metric,
            rec.direction,
            lambda patch: patch_grid(io, patch)[1],
            confidence=a.confidence,
        )
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if s.pairs == 0:
        print(f"error: study {rec.name!r} has no complete S-Mixer (S = P) with a complete SW-MLP twin", file=sys.stderr)
        return 2
    print(
        f"study {rec.name!r}, task {rec.task}, {rec.metric} ({rec.direction}), {s.pairs} pairs, "
        f"{int(a.confidence * 100)}% intervals (seed noise)\n"
    )
    print("| patch | C | blocks (twin layers) | lr | Ω | S-Mixer | SW-MLP twin | S-Mixer − twin | verdict |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in pairs.itertuples():
        ci = "" if r.low is None or r.low != r.low else f" [{fmt(r.low)}, {fmt(r.high)}]"
        print(
            f"| {r.patch} | {r.C} | {r.blocks} ({2 * r.blocks}) | {r.lr:g} | {int(r.omega):,} | {fmt(r.mixer)} | "
            f"{fmt(r.twin)} | {r.difference:+.3f}{ci} | {r.verdict} |"
        )
    ci = "" if s.low is None else f" [{s.low:+.3f}, {s.high:+.3f}]"
    print(
        f"\nmean difference over pairs {s.mean_difference:+.3f}{ci}; S-Mixer better in {s.mixer_better}, "
        f"twin better in {s.twin_better}, not distinguishable in {s.pairs - s.mixer_better - s.twin_better}; "
        f"correlation of the two sides {fmt(s.correlation)}"
    )
    if a.json:
        Path(a.json).write_text(
            json.dumps(
                {
                    "study": rec.name,
                    "task": rec.task,
                    "metric": rec.metric,
                    "summary": asdict(s),
                    "pairs": json.loads(pairs.to_json(orient="records")),
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
