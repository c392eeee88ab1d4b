"""`search predict`: each family's front read at budgets larger than the search's, from a
saturating power law with bootstrap intervals (reports/scaling.py), and the configuration
to train there: the front's shape trends read at the budget, rounded into the family's
space within it (search/spaces/extrapolate.py)."""
from __future__ import annotations

import argparse
import json
import math
from typing import Any

from core.errors import UserError
from search.cli.common import open_store, print_frame, storage_arg


def add_parser(sub) -> None:
    """`search predict`'s flags."""
    p = sub.add_parser("predict", help="each family's front at budgets larger than the search's, with intervals")
    p.add_argument("studies", nargs="+", metavar="STUDY", help="studies of one task and metric")
    p.add_argument("--at", required=True, help="comma list of budgets above the studies', e.g. 1M,10M,1B")
    p.add_argument("--families", help="comma list (default: every family of the studies)")
    p.add_argument("--confidence", type=float, default=0.9, help="interval level (default 0.9)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    storage_arg(p)
    p.set_defaults(func=cmd_predict)


def _num(x) -> Any:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else float(x)


def cmd_predict(a: argparse.Namespace) -> int:
    from core.budget import format_count, parse_targets
    from reports.compare import combined_frame
    from reports.scaling import (
        ERROR_SCALES,
        error_scale,
        predict_study,
        predictions_frame,
    )

    if not 0 < a.confidence < 1:
        raise UserError(f"--confidence must be between 0 and 1, got {a.confidence:g}")
    if not any(b.strip() for b in a.at.split(",")):
        raise UserError("--at needs at least one budget")
    store = open_store(a.storage)
    records = [store.get_study(name) for name in a.studies]
    rec = records[0]
    try:
        scale = error_scale(rec.metric, rec.direction)
    except ValueError:
        raise UserError(f"cannot predict {rec.metric}: no error scale for it (known: loss-like minimised "
                        f"metrics, {', '.join(ERROR_SCALES)})") from None
    budget = max(r.budget for r in records)
    targets = parse_targets(a.at, budget, "--at")
    df = combined_frame([(r, store.trials_frame(r.name)) for r in records])
    known = sorted(set(df["family"].astype(str))) if len(df) else []
    families = [f.strip() for f in a.families.split(",") if f.strip()] if a.families else known
    missing = [f for f in families if f not in known]
    if missing:
        raise UserError(f"no family {', '.join(missing)} in these studies; they have {', '.join(known) or 'none'}")
    if len(families) < 2:
        raise UserError(f"predict compares families: {', '.join(r.name for r in records)} "
                        f"{'has' if len(records) == 1 else 'have'} {len(families)} ({', '.join(families) or 'none'})")
    preds, races = predict_study(df, rec.metric, rec.direction, targets, families, confidence=a.confidence)
    if all(p.front_points < 3 for p in preds):
        raise UserError("too few complete trials to fit any family's front (a fit needs 4 front points spanning "
                        "a factor 10 in parameters)")
    from search.spaces.extrapolate import study_proposals

    proposals = {(p.family, p.target): p for p in study_proposals(records, df, targets, families)}
    measure = (rec.settings or {}).get("budget_of") or "params"
    unit = "parameters" if measure == "params" else measure
    frame = predictions_frame(preds, races, targets, rec.metric)
    if a.format == "csv":
        got = [proposals[(f, float(t))] for f, t in zip(frame["family"], frame["budget"])]
        frame = frame.assign(config=[json.dumps(p.config) if p.config else "" for p in got],
                             config_params=[p.count for p in got], config_notes=["; ".join(p.notes) for p in got])
        print_frame(frame, "csv")
        return 0
    if a.format == "json":
        out = {"studies": [r.name for r in records], "metric": rec.metric, "direction": rec.direction,
               "error_scale": scale.name, "confidence": a.confidence, "search_budget": budget,
               "law": "error(N) = E + A * N^(-alpha)", "measure": measure,
               "families": [{"family": p.family, "front_points": p.front_points, "span": p.span, "trust": p.trust,
                             "E": _num(p.law.E) if p.law else None, "A": _num(p.law.A) if p.law else None,
                             "alpha": _num(p.law.alpha) if p.law else None} for p in preds],
               "targets": [{"budget": r.target,
                            "families": [{"family": p.family, "value": _num(p.values[i]), "low": _num(p.low[i]),
                                          "high": _num(p.high[i]), "p_best": _num(r.p_win.get(p.family)),
                                          "configuration": _configuration(proposals[(p.family, r.target)])}
                                         for p in preds],
                            "leader": r.leader, "runner_up": r.runner_up, "margin": _num(r.margin),
                            "margin_low": _num(r.low), "margin_high": _num(r.high)}
                           for i, r in enumerate(races)]}
        print(json.dumps(out, indent=2))
        return 0
    print(f"{rec.metric} ({rec.direction}) predicted by error(N) = E + A * N^(-alpha) on {scale.name}, fitted "
          f"to each family's front (searched up to {format_count(budget)}); {a.confidence:.0%} intervals: "
          "bootstrap over the configurations and seed noise, the law refitted in every draw")
    for p in preds:
        law = "" if p.law is None else f"E={p.law.E:.4g} A={p.law.A:.4g} alpha={p.law.alpha:.3g}, "
        note = f"  NOT TRUSTED: {p.trust}" if p.trust else ""
        print(f"  {p.family:<24} {law}{p.front_points} front points over a factor {p.span:.3g}{note}")
    for i, r in enumerate(races):
        print(f"\nat {format_count(r.target)} parameters:")
        for p in preds:
            if p.trust:
                print(f"  {p.family:<24} no prediction ({p.trust})")
                continue
            print(f"  {p.family:<24} {p.values[i]:.4g} [{p.low[i]:.4g}, {p.high[i]:.4g}]  "
                  f"best in {r.p_win.get(p.family, float('nan')):.0%} of draws")
        if r.runner_up is not None:
            ci = "" if r.low is None else f" (interval {r.low:.4g} .. {r.high:.4g})"
            print(f"  {r.leader} ahead of {r.runner_up} by {r.margin:.4g}{ci}")
        for p in preds:
            print(f"  {p.family:<24} {_configuration_line(proposals[(p.family, r.target)], unit)}")
    return 0


def _configuration(p) -> dict[str, Any]:
    """A `Proposal` (search/spaces/extrapolate.py) as JSON: the config, its exact count."""
    return {"config": p.config, "params": p.count, "width_factor": _num(p.factor),
            "trends": {t.key: round(t.slope, 4) for t in p.trends if t.kind == "power"}, "notes": list(p.notes)}


def _configuration_line(p, unit: str) -> str:
    """The table's line for a `Proposal`."""
    from core.budget import format_count

    if p.config is None:
        return f"no configuration to train at {format_count(p.target)}: {'; '.join(p.notes)}"
    trends = ", ".join(t.describe() for t in p.trends if t.kind == "power") or "no shape trend fitted"
    notes = f"; {'; '.join(p.notes)}" if p.notes else ""
    return (f"configuration to train at {format_count(p.target)}: {json.dumps(p.config)} ({p.count:,} {unit}; "
            f"{trends}{notes})")
