"""`search compare`: which family wins at each budget, with intervals, printed (the answer:
search/api/readings.py's `compare`, over verdicts/compare.py)."""

from __future__ import annotations

import argparse
import json
import sys

from core.limits import (
    DEFAULT_ESTIMATE,
    DEFAULT_FORM,
    DEFAULT_LEVELS,
    DEFAULT_MIN_NEAR,
    DEFAULT_NOISE,
    ESTIMATES,
    INTERVAL_FORMS,
    NOISE_MODELS,
)
from search.cli.common import print_frame, storage_arg


def add_parser(sub) -> None:
    """`search compare`'s flags."""
    cp = sub.add_parser("compare", help="which family wins at each budget, with confidence intervals")
    cp.add_argument("studies", nargs="+", metavar="STUDY", help="studies of one task and metric")
    cp.add_argument("--families", help="comma list (default: every family of the studies)")
    cp.add_argument(
        "--metric",
        help="compare on this metric of the studies' trials, e.g. frechet or "
        "sample_accuracy (default: the studies' searched metric); its direction is "
        "the metric's own",
    )
    levels = cp.add_mutually_exclusive_group()
    levels.add_argument("--budgets", help="comma list of budgets, e.g. 10K,100K,1M")
    levels.add_argument(
        "--levels",
        type=int,
        help=f"log-spaced budgets from the smallest to the largest model (default {DEFAULT_LEVELS})",
    )
    cp.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    cp.add_argument(
        "--interval",
        choices=("trials", "seed", "subsample"),
        default="trials",
        help="what an interval carries: trials (which configurations a search finds, resampled, and seed "
        "noise; the default), subsample (half of them drawn without replacement, the deviation scaled as "
        "a frontier estimate converges, and seed noise) or seed (seed noise of the configurations found only)",
    )
    cp.add_argument(
        "--interval-form",
        choices=INTERVAL_FORMS,
        default=DEFAULT_FORM,
        help="how an interval is read off the bootstrap draws: percentile (their percentiles, made "
        "symmetric about the estimate for trials; the default) or normal (the estimate plus or minus z "
        "times their standard deviation: narrower where a few resamples that miss the best "
        "configurations set the percentile); the front hypervolumes and pooled replicate searches keep "
        "their own intervals",
    )
    cp.add_argument(
        "--noise",
        choices=NOISE_MODELS,
        default=DEFAULT_NOISE,
        help="a configuration's seed noise: pooled (its family's, over every configuration run twice or "
        "more, seed checks included; the default), near (pooled over the 3 such configurations that "
        "scored nearest it), own (its own runs only: none with one run) or trend (read at its mean from the "
        "regression of the log variance on the mean over every family's configurations run twice or more)",
    )
    cp.add_argument(
        "--estimate",
        choices=ESTIMATES,
        default=DEFAULT_ESTIMATE,
        help="a family's value at a budget: best (its best configuration within the budget; the default) or "
        "fit (the local linear fit of its front against log parameters, from the front's configurations "
        "within a factor 3 either side, kept between the best within the budget and the next front "
        "configuration above it); the trial shown is the best within the budget either way",
    )
    cp.add_argument(
        "--resample-corners",
        action="store_true",
        help="resample each family's smallest model like any other configuration (by default a search "
        "that trained it as a corner, as every search with --corners both, smallest or last does, keeps "
        "it in every bootstrap resample: another search would have it too)",
    )
    cp.add_argument(
        "--min-near",
        type=int,
        default=DEFAULT_MIN_NEAR,
        metavar="N",
        help="configurations a family needs within a factor 3 below a budget, else the answer there "
        f"is 'too thin to tell' (default {DEFAULT_MIN_NEAR}; 0: never)",
    )
    cp.add_argument(
        "--untried",
        action="store_true",
        help="also answer 'too thin to tell' where a family's front trains with a learning rate (a searched "
        "training setting) that it never tried within a factor 3 below the budget: a search that found its "
        "best models at one rate and trained nothing near the budget with it has not searched there "
        "(one search's verdicts; docs/benchmarks.md §32)",
    )
    cp.add_argument(
        "--replicates",
        action="store_true",
        help="the studies are replicate searches of one question: pool them (a name given to "
        "'search run --search-repeats' does this by itself)",
    )
    cp.add_argument(
        "--margin",
        type=float,
        metavar="D",
        help="a difference that does not matter, in the metric's units (e.g. 0.1 dB): a budget whose "
        "difference's interval lies inside ±D is answered 'equivalent within ±D'",
    )
    cp.add_argument("--format", choices=("table", "csv", "json"), default="table")
    storage_arg(cp)
    cp.set_defaults(func=cmd_compare)


def cmd_compare(a: argparse.Namespace) -> int:
    """Print `search.api.readings.compare`'s answer as a table, csv or json."""
    from core.budget import format_count
    from search.api.readings import compare

    c = compare(
        a.storage,
        a.studies,
        families=_list(a.families),
        metric=a.metric,
        budgets=[b for b in a.budgets.split(",") if b.strip()] if a.budgets else None,
        levels=a.levels,
        confidence=a.confidence,
        interval=a.interval,
        min_near=a.min_near,
        replicates=a.replicates,
        margin=a.margin,
        noise=a.noise,
        estimate=a.estimate,
        resample_corners=a.resample_corners,
        form=a.interval_form,
        untried=a.untried,
    )
    if a.format == "json":
        print(json.dumps(c.to_dict(), indent=2))
        return 0
    if a.format == "csv":
        print_frame(c.frame(), "csv")
        return 0
    unit, units = ("params", "parameters") if c.measure == "params" else (c.measure, c.measure)
    width = max(len(f"at most {format_count(v.budget)} {units}") for v in c.verdicts) if c.verdicts else 0
    print(f"{c.metric} ({c.direction}): which family is better at each budget")
    for v in c.verdicts:  # the answer first, one line per budget
        print(f"  {f'at most {format_count(v.budget)} {units}':<{width}}  {v.text}")
    print(f"{c.confidence:.0%} intervals: {c.method} (in full: --format json, 'interval'; search compare --help)")
    print("\nby budget, each family's value and the trial that holds it:")
    for v in c.verdicts:
        print(f"\nat most {format_count(v.budget)} {units}: {v.text}")
        for r in v.families:
            if r.value is None:
                print(f"  {r.family:<24} no model this small")
                continue
            ci = (
                "interval unknown (single run)"
                if r.low is None and r.thin is None
                else "too thin"
                if r.low is None
                else f"[{r.low:.4g}, {r.high:.4g}]"
            )
            study, trial = c.origin(r.number)
            where = f"{study} " if c.pooled else ""
            of = f", mean of {r.searches} searches; best: " if c.pooled else " "
            if not c.pooled and r.best is not None and r.best != r.value:
                of = f" (fit); best {r.best:.4g}: "
            print(
                f"  {r.family:<24} {r.value:.4g} {ci}{of}{where}trial #{trial} "
                f"({format_count(r.params)} {unit}, {r.runs} run(s))"
            )
    if c.volumes:
        print(f"\nfront hypervolume (log10 {unit} x metric, one reference):")
        for f in c.volumes:
            ci = "interval unknown (single runs)" if f.low is None else f"[{f.low:.4g}, {f.high:.4g}]"
            print(f"  {f.family:<24} {f.value:.4g} {ci}")
    d = c.difference
    if d is not None:
        ci = "interval unknown (single runs)" if d.low is None else f"interval {d.low:.4g} .. {d.high:.4g}"
        print(f"  {d.first} - {d.second}: {d.difference:.4g} ({ci})")
    step = c.next_step()
    if step:
        print("\n" + "\n".join(step))
    sys.stdout.flush()
    return 0


def _list(text: str | None) -> list[str] | None:
    """A comma list flag's items (None when the flag is not given or empty)."""
    return [x.strip() for x in text.split(",") if x.strip()] if text else None
