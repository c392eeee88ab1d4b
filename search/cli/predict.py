"""`search predict`: each family's front read at budgets larger than the search's, from a
saturating power law with bootstrap intervals (reports/scaling.py), and the configuration
to train there: the front's shape trends read at the budget, rounded into the family's
space within it (search/spaces/extrapolate.py). The answer is search/api/predictions.py's
`predict`; this module prints it."""

from __future__ import annotations

import argparse
import json

from search.cli.common import print_frame, storage_arg


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


def cmd_predict(a: argparse.Namespace) -> int:
    """Print `search.api.predictions.predict`'s answer as a table, csv or json."""
    from core.budget import format_count
    from search.api.predictions import predict

    families = [f.strip() for f in a.families.split(",") if f.strip()] if a.families else None
    pr = predict(a.storage, a.studies, at=a.at, families=families, confidence=a.confidence)
    if a.format == "csv":
        print_frame(pr.frame(), "csv")
        return 0
    if a.format == "json":
        print(json.dumps(pr.to_dict(), indent=2))
        return 0
    unit = "parameters" if pr.measure == "params" else pr.measure
    print(
        f"{pr.metric} ({pr.direction}) predicted by error(N) = E + A * N^(-alpha) on {pr.scale.name}, fitted "
        f"to each family's front (searched up to {format_count(pr.search_budget)}); {pr.confidence:.0%} "
        "intervals: bootstrap over the configurations and seed noise, the law refitted in every draw"
    )
    for p in pr.families:
        law = "" if p.law is None else f"E={p.law.E:.4g} A={p.law.A:.4g} alpha={p.law.alpha:.3g}, "
        note = f"  NOT TRUSTED: {p.trust}" if p.trust else ""
        print(f"  {p.family:<24} {law}{p.front_points} front points over a factor {p.span:.3g}{note}")
    for i, r in enumerate(pr.races):
        print(f"\nat {format_count(r.target)} parameters:")
        for p in pr.families:
            if p.trust:
                print(f"  {p.family:<24} no prediction ({p.trust})")
                continue
            print(
                f"  {p.family:<24} {p.values[i]:.4g} [{p.low[i]:.4g}, {p.high[i]:.4g}]  "
                f"best in {r.p_win.get(p.family, float('nan')):.0%} of draws"
            )
        if r.runner_up is not None:
            ci = "" if r.low is None else f" (interval {r.low:.4g} .. {r.high:.4g})"
            print(f"  {r.leader} ahead of {r.runner_up} by {r.margin:.4g}{ci}")
        for p in pr.families:
            print(f"  {p.family:<24} {_configuration_line(pr.proposal(p.family, r.target), unit)}")
    return 0


def _configuration_line(p, unit: str) -> str:
    """The table's line for a `Proposal`."""
    from core.budget import format_count

    if p.config is None:
        return f"no configuration to train at {format_count(p.target)}: {'; '.join(p.notes)}"
    trends = ", ".join(t.describe() for t in p.trends if t.kind == "power") or "no shape trend fitted"
    notes = f"; {'; '.join(p.notes)}" if p.notes else ""
    return (
        f"configuration to train at {format_count(p.target)}: {json.dumps(p.config)} ({p.count:,} {unit}; "
        f"{trends}{notes})"
    )
