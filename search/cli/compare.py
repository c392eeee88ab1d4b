"""`search compare`: which family wins at each budget, with intervals (reports/compare.py)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from core.errors import StorageError, UserError
from reports.uncertainty import DEFAULT_MIN_NEAR
from search.cli.common import open_store, print_frame, storage_arg


def add_parser(sub) -> None:
    """`search compare`'s flags."""
    cp = sub.add_parser("compare", help="which family wins at each budget, with confidence intervals")
    cp.add_argument("studies", nargs="+", metavar="STUDY", help="studies of one task and metric")
    cp.add_argument("--families", help="comma list (default: every family of the studies)")
    cp.add_argument("--metric", help="compare on this metric of the studies' trials, e.g. frechet or "
                                     "sample_accuracy (default: the studies' searched metric); its direction is "
                                     "the metric's own")
    levels = cp.add_mutually_exclusive_group()
    levels.add_argument("--budgets", help="comma list of budgets, e.g. 10K,100K,1M")
    levels.add_argument("--levels", type=int, help="log-spaced budgets from the smallest to the largest model (default 5)")
    cp.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    cp.add_argument("--interval", choices=("trials", "seed"), default="trials",
                    help="what an interval carries: trials (which configurations a search finds, and seed noise; "
                         "the default) or seed (seed noise of the configurations found only)")
    cp.add_argument("--min-near", type=int, default=DEFAULT_MIN_NEAR, metavar="N",
                    help="configurations a family needs within a factor 3 below a budget, else the answer there "
                         f"is 'too thin to tell' (default {DEFAULT_MIN_NEAR}; 0: never)")
    cp.add_argument("--replicates", action="store_true",
                    help="the studies are replicate searches of one question: pool them (a name given to "
                         "'search run --search-repeats' does this by itself)")
    cp.add_argument("--format", choices=("table", "csv", "json"), default="table")
    storage_arg(cp)
    cp.set_defaults(func=cmd_compare)


def compare_json(records, df, verdicts, volumes, reference, difference, confidence: float,
                 interval: str, metric: str | None = None, direction: str | None = None) -> dict[str, Any]:
    rec = records[0]

    def origin(number):
        if number is None:
            return None, None
        row = df.iloc[int(number)]
        return str(row["study"]), int(row["trial"])

    levels = []
    for v in verdicts:
        fams = []
        for r in v.families:
            study, trial = origin(r.number)
            fams.append({"family": r.family, "value": r.value, "low": r.low, "high": r.high, "study": study,
                         "trial": trial, "params": r.params, "config": r.config, "runs": r.runs,
                         "searches": r.searches,
                         "thin": None if r.thin is None else {"kind": r.thin.kind, "near": r.thin.near,
                                                              "needed": r.thin.needed,
                                                              "more_trials": r.thin.more_trials,
                                                              "window": [r.thin.low, r.thin.budget]}})
        levels.append({"budget": v.budget, "families": fams, "winner": v.winner, "runner_up": v.runner_up,
                       "margin": v.margin, "margin_low": v.margin_low, "margin_high": v.margin_high,
                       "status": v.status, "verdict": v.text})
    return {"studies": [r.name for r in records], "task": rec.task, "metric": metric or rec.metric,
            "direction": direction or rec.direction,
            "confidence": confidence, "interval": interval, "levels": levels,
            "fronts": [{"family": f.family, "hypervolume": f.value, "low": f.low, "high": f.high} for f in volumes],
            "hypervolume_reference": None if reference is None else [float(x) for x in reference],
            "front_difference": None if difference is None else {
                "first": difference.first, "second": difference.second, "difference": difference.difference,
                "low": difference.low, "high": difference.high}}


def resolve(store, names: list[str]) -> tuple[list, bool]:
    """The study records of `names`; a name that is no study but the name of replicate
    searches (`search run --search-repeats`) stands for them all. True when the names
    were replicate searches."""
    records, grouped = [], False
    for name in names:
        try:
            records.append(store.get_study(name))
            continue
        except StorageError:
            group = [r for r in (store.get_study(s.name) for s in store.list_studies()
                                 if s.name.startswith(f"{name}-r")) if (r.settings or {}).get("replicate_of") == name]
            if not group:
                raise
        records.extend(sorted(group, key=lambda r: r.settings.get("replicate", 0)))
        grouped = True
    return records, grouped


def chosen_metric(rec, df, name: str | None) -> tuple[str, str]:
    """(metric, direction) to compare on: the studies' searched metric and direction, or
    `--metric NAME`, a metric their trials hold (`storage.frames.metric_columns`), with
    its direction from `core.directions.METRIC_DIRECTIONS`."""
    from core.directions import metric_direction
    from storage.frames import metric_column, metric_columns

    if name is None or name == rec.metric:
        return rec.metric, rec.direction
    have = metric_columns(df)
    if metric_column(name) not in have:
        raise UserError(f"no metric {name!r} in these studies; they have {', '.join(have) or 'none yet'}")
    direction = metric_direction(name)
    if direction is None:
        raise UserError(f"metric {name!r} has no known direction (core/directions.py: METRIC_DIRECTIONS)")
    return metric_column(name), direction


def cmd_compare(a: argparse.Namespace) -> int:
    from core.budget import format_count, parse_budget
    from reports.compare import (
        candidates,
        combined_frame,
        compare_at,
        compare_replicates,
        default_levels,
        front_difference,
        front_volumes,
        verdicts_frame,
    )
    from reports.uncertainty import METHOD_TEXT, POOLED_TEXT

    if a.levels is not None and a.levels < 1:
        raise UserError("--levels must be at least 1")
    if not 0 < a.confidence < 1:
        raise UserError(f"--confidence must be between 0 and 1, got {a.confidence:g}")
    if a.min_near < 0:
        raise UserError(f"--min-near must be at least 0, got {a.min_near}")
    budgets = [parse_budget(b) for b in a.budgets.split(",") if b.strip()] if a.budgets else None
    store = open_store(a.storage)
    records, grouped = resolve(store, a.studies)
    pooled = a.replicates or grouped
    if pooled and len(records) < 2:
        raise UserError(f"replicate searches need at least two studies, got {len(records)}")
    frames = [(rec, store.trials_frame(rec.name)) for rec in records]
    df = combined_frame(frames, label_shared=not pooled)
    known = sorted(set(df["family"].astype(str))) if len(df) else []
    families = [f.strip() for f in a.families.split(",") if f.strip()] if a.families else known
    missing = [f for f in families if f not in known]
    if missing:
        raise UserError(f"no family {', '.join(missing)} in these studies; they have {', '.join(known) or 'none'}")
    rec = records[0]
    metric, direction = chosen_metric(rec, df, a.metric)
    if pooled:
        reps = [candidates(df[df["study"] == r.name], metric, families) for r in records]
        cands = candidates(df, metric, families)  # every search's trials, for the levels
    else:
        cands = candidates(df, metric, families)
    levels = budgets or default_levels(cands, a.levels or 5)
    if not levels:
        raise UserError("these studies have no complete trial yet: nothing to compare")
    if pooled:
        verdicts = compare_replicates(reps, [float(b) for b in levels], direction, confidence=a.confidence,
                                      min_near=a.min_near)
        volumes, reference, difference = [], None, None
        interval = f"{POOLED_TEXT} ({len(records)} searches)"
    else:
        verdicts = compare_at(cands, [float(b) for b in levels], direction, confidence=a.confidence,
                              method=a.interval, min_near=a.min_near)
        volumes, reference = front_volumes(cands, direction, confidence=a.confidence, method=a.interval)
        difference = front_difference(volumes, confidence=a.confidence)
        interval = METHOD_TEXT[a.interval]
    if a.format == "json":
        print(json.dumps(compare_json(records, df, verdicts, volumes, reference, difference, a.confidence, interval,
                                      metric, direction), indent=2))
        return 0
    table = verdicts_frame(verdicts, metric)
    if a.format == "csv":
        print_frame(table, "csv")
        return 0
    measure = (rec.settings or {}).get("budget_of", "params")  # what the studies' sizes count
    unit, units = ("params", "parameters") if measure == "params" else (measure, measure)
    print(f"{metric} ({direction}) by budget, {a.confidence:.0%} intervals ({interval}):")
    for v in verdicts:
        print(f"\nat most {format_count(v.budget)} {units}: {v.text}")
        for r in v.families:
            if r.value is None:
                print(f"  {r.family:<24} no model this small")
                continue
            ci = "interval unknown (single run)" if r.low is None and r.thin is None else \
                "too thin" if r.low is None else f"[{r.low:.4g}, {r.high:.4g}]"
            row = df.iloc[r.number]
            where = f"{row['study']} " if pooled else ""
            of = f", mean of {r.searches} searches; best: " if pooled else " "
            print(f"  {r.family:<24} {r.value:.4g} {ci}{of}{where}trial #{row['trial']} "
                  f"({format_count(r.params)} {unit}, {r.runs} run(s))")
    if volumes:
        print(f"\nfront hypervolume (log10 {unit} x metric, one reference):")
        for f in volumes:
            ci = "interval unknown (single runs)" if f.low is None else f"[{f.low:.4g}, {f.high:.4g}]"
            print(f"  {f.family:<24} {f.value:.4g} {ci}")
    if difference is not None:
        ci = "interval unknown (single runs)" if difference.low is None else \
            f"interval {difference.low:.4g} .. {difference.high:.4g}"
        print(f"  {difference.first} - {difference.second}: {difference.difference:.4g} ({ci})")
    sys.stdout.flush()
    return 0
