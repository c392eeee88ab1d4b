"""The Pareto pruner replayed on unpruned studies: false stops per family and grace (issue 11).

    python -m benchmarks.search_quality.pruner_replay --storage URL [--prefix NAME] [--graces 1/3,0.2,0.1] [--rungs [GRACES]] [--checked MIN[:KEEP],...] [--orders study,smallest-first,budget-last] [--best-so-far] [--false-stops] [--trust-first N] [--json OUT]

For every study of the database whose name starts with --prefix and that ran unpruned
(`--pruner none`), each trial's stored first-seed validation curve is replayed through the
study's rule (search/integrations/pruner_replay.py) at each grace. Reported per family, median over the
studies: trials stopped, work kept (params x epochs), front trials stopped (false stops)
and the share of the family's front hypervolume the not-stopped trials keep. No training:
the replay reads the database only. `--rungs` replays `--pruner rungs` (its own first
rung) beside them (issue 25), `--checked` the self-checking `--pruner checked-rungs` at
each least number of trials trained to the end and share of their front a rung must
keep, and every row also gives the family's front work: the least work any rule could
keep and still keep the whole front (its trials trained to the end, every other trial
stopped after one epoch). `--orders` replays every rule also with the same trials in
another order (`smallest-first`: every possible judge of a trial trains before it;
`budget-last`: each family's budget corner last): how much of what a rule leaves is the
order the trials came in (docs/benchmarks.md §14, "What the trial order and the budget
corners cost the pruners"). Every run also prints the work each rule keeps over the whole
study beside the fronts' own work over the whole study (the least any rule that keeps every
family's whole front can keep), the budget corners' share of a study's work, and how well
each judged epoch ranks a family's trials (Spearman's rho against the last epoch).

Why a rule stops front trials (docs/benchmarks.md §14, "Why the rules stop front trials on
generative classification"): `--false-stops` lists every front trial each rule stops, with
its judge (the best earlier trial of its family with no more parameters at that epoch)
and how both curves ended; `--best-so-far` replays every rule also on each curve's best
value so far (rows 'RULE, best so far': an epoch's dip forgiven); with `--rungs` or
`--checked`, a table gives what the checked rungs' trust test reads of each rung on a
family's first `--trust-first` trials (default 12) and on all of them.
"""

from __future__ import annotations

import argparse
import math
import statistics
from fractions import Fraction

from benchmarks.bench_util import fail, write_json
from search.engine.pruners import DEFAULT_KEEP, CheckedRungPruner, grace_epochs, make_pruner, rung_epochs
from search.engine.seed_checks import SEED_CHECK
from search.engine.study import first_seed_curve
from search.integrations.pruner_replay import (
    ORDERS,
    ReplayTrial,
    best_so_far,
    budget_corners,
    false_stops,
    rank_agreement,
    replay_order,
    replay_stops,
    rung_trust,
    summarise,
)
from storage import Store
from storage.frames import metric_column


def study_trials(store: Store, name: str) -> tuple[list[ReplayTrial], str, int]:
    """(complete trials in number order, direction, epochs) of one unpruned study; its seed
    checks (other seeds of trials already there, after the search) are not the search's."""
    record = store.get_study(name)
    frame = store.trials_frame(name)
    checks = frame["note"].fillna("").str.contains(SEED_CHECK, regex=False)
    frame = frame[(frame["status"] == "complete") & ~checks].sort_values("number")
    col = metric_column(record.metric)
    out = []
    for number, family, params, value in zip(frame["number"], frame["family"], frame["params"], frame[col]):
        curve = first_seed_curve(store.epochs(name, int(number)), record.metric)
        out.append(ReplayTrial(str(family), int(params), tuple(curve), float(value)))
    return out, record.direction, max((len(t.curve) for t in out), default=0)


def rules(
    graces: list[float],
    rung_graces: list[float | None],
    direction: str,
    epochs: int,
    checked: list[tuple[int, float]] = (),
):
    """(label, fresh pruner) of each rule replayed: `pareto` at each grace, then `rungs` at
    each of its graces (None: its own first rung, labelled "rungs"), then `checked-rungs`
    at each (least number of trials trained to the end, share of the front to keep)
    (`checked`)."""
    out = [(f"{g:.3g}", make_pruner("pareto", direction, epochs, grace=g)) for g in graces]
    out += [
        ("rungs" if g is None else f"rungs {g:.3g}", make_pruner("rungs", direction, epochs, grace=g))
        for g in rung_graces
    ]
    return out + [
        (f"checked-rungs {m}:{k:g}", CheckedRungPruner(direction, epochs, min_complete=m, keep=k)) for m, k in checked
    ]


def rank_epochs(epochs: int, graces: list[float]) -> list[int]:
    """The epochs whose ranking of the trials the replay reports: the rungs of `rungs`
    (1, 3, 9, 27 of 30) and each grace's first judged epoch, below the last epoch."""
    return sorted({e for e in (*rung_epochs(epochs), *(grace_epochs(epochs, g) for g in graces)) if e < epochs})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--storage", required=True, help="SQLAlchemy URL of the studies")
    ap.add_argument("--prefix", default="", help="only studies whose name starts with this")
    ap.add_argument("--graces", default="1/3,0.2,0.1", help="comma list of grace fractions (a/b allowed)")
    ap.add_argument(
        "--rungs",
        nargs="?",
        const="",
        metavar="GRACES",
        help="also replay --pruner rungs (issue 25): its own first rung, or at each --prune-grace "
        "of a comma list (e.g. own,0.1,1/6; own: its own first rung)",
    )
    ap.add_argument(
        "--checked",
        metavar="MIN[:KEEP],...",
        help="also replay --pruner checked-rungs (issue 25) with each least number of trials trained "
        "to the end before a rung judges and share of their front hypervolume a rung must keep "
        f"(comma list, e.g. 3,5:0.995; KEEP default {DEFAULT_KEEP})",
    )
    ap.add_argument(
        "--orders",
        default="study",
        help=f"comma list of trial orders to replay each rule in ({', '.join(ORDERS)}; default study: "
        "as trained); rows of another order are labelled 'RULE, ORDER'",
    )
    ap.add_argument(
        "--best-so-far",
        action="store_true",
        help="also replay every rule on each curve's best value so far (rows 'RULE, best so far')",
    )
    ap.add_argument(
        "--false-stops",
        action="store_true",
        help="list every front trial each rule stops (study order), with its judge",
    )
    ap.add_argument(
        "--trust-first",
        type=int,
        default=12,
        metavar="N",
        help="with --rungs or --checked: the trust test's reading of each rung on a family's first N "
        "trials, beside all of them (default 12)",
    )
    ap.add_argument("--json", help="also write every study's summaries here")
    a = ap.parse_args()
    try:
        graces = [float(Fraction(g)) for g in a.graces.split(",")]
    except (ValueError, ZeroDivisionError):
        ap.error(f"--graces must be a comma list of fractions such as 1/3,0.2, got {a.graces!r}")
    if not all(0 < g < 1 for g in graces):
        ap.error(f"--graces must lie in (0, 1), as --prune-grace does, got {a.graces!r}")
    rung_graces: list[float | None] = []
    if a.rungs is not None:
        try:
            rung_graces = [None if g == "own" else float(Fraction(g)) for g in (a.rungs or "own").split(",")]
        except (ValueError, ZeroDivisionError):
            ap.error(f"--rungs takes a comma list of fractions such as 0.1,1/6, got {a.rungs!r}")
        if not all(g is None or 0 < g < 1 for g in rung_graces):
            ap.error(f"--rungs graces must lie in (0, 1), as --prune-grace does, got {a.rungs!r}")
    checked: list[tuple[int, float]] = []
    if a.checked:
        try:
            checked = [
                (int(m), float(k) if k else DEFAULT_KEEP)
                for m, _, k in (x.partition(":") for x in a.checked.split(","))
            ]
        except ValueError:
            ap.error(f"--checked takes a comma list of MIN[:KEEP] such as 3,5:0.995, got {a.checked!r}")
        if not all(m >= 1 and 0 <= k <= 1 for m, k in checked):
            ap.error(f"--checked needs MIN at least 1 and KEEP in [0, 1], got {a.checked!r}")
    if a.trust_first < 1:
        ap.error(f"--trust-first must be at least 1, got {a.trust_first}")
    orders = a.orders.split(",")
    if not orders or any(o not in ORDERS for o in orders):
        ap.error(f"--orders takes a comma list of {', '.join(ORDERS)}, got {a.orders!r}")
    store = Store(a.storage)
    names = [
        s.name
        for s in store.list_studies()
        if s.name.startswith(a.prefix)
        and s.n_pruned == 0
        and (store.get_study(s.name).settings or {}).get("pruner") == "none"
    ]
    if not names:
        fail(f"no unpruned study named {a.prefix}* in {a.storage}")
    report: dict[str, dict] = {}
    whole: dict[str, dict[str, float]] = {}  # study -> rule -> work kept over all its families
    corner_share: dict[str, float] = {}  # study -> its budget corners' share of its work (issue 25)
    floor: dict[str, float] = {}  # study -> its fronts' own work: the least any rule keeping every front can keep
    ranks: dict[str, dict[int, dict[str, float]]] = {}  # study -> epoch -> family -> Spearman's rho with the end
    wrong: dict[str, dict[str, list]] = {}  # study -> rule -> its false stops (study order)
    trust: dict[str, dict[int, dict[str, tuple]]] = {}  # study -> rung -> family -> (first N, all)
    for name in names:
        trials, direction, epochs = study_trials(store, name)
        report[name], whole[name] = {}, {}
        full = max(1, sum(t.params * len(t.curve) for t in trials))
        ranks[name] = {e: rank_agreement(trials, e) for e in rank_epochs(epochs, graces)}
        corner_share[name] = sum(trials[i].params * len(trials[i].curve) for i in budget_corners(trials)) / full
        unpruned = summarise(trials, [None] * len(trials), direction)
        floor[name] = (
            sum(
                s.front_work * sum(t.params * len(t.curve) for t in trials if t.family == f)
                for f, s in unpruned.items()
            )
            / full
        )
        wrong[name] = {}
        if rung_graces or checked:
            trust[name] = {}
            for r in rung_epochs(epochs):
                first, every = rung_trust(trials, r, direction, a.trust_first), rung_trust(trials, r, direction)
                trust[name][r] = {f: (first[f], every[f]) for f in every}
        kinds = [(order, False) for order in orders] + ([("study", True)] if a.best_so_far else [])
        for order, best in kinds:
            ordered = [trials[i] for i in replay_order(trials, order)]
            judged = best_so_far(ordered, direction) if best else ordered
            for key, pruner in rules(graces, rung_graces, direction, epochs, checked):
                stops = replay_stops(judged, pruner)
                label = key + ("" if order == "study" else f", {order}") + (", best so far" if best else "")
                report[name][label] = {f: vars(s) for f, s in summarise(ordered, stops, direction).items()}
                whole[name][label] = sum(t.params * (s or len(t.curve)) for t, s in zip(ordered, stops)) / full
                if order == "study" and not best:
                    wrong[name][label] = false_stops(ordered, stops, direction)
    print(
        f"{len(names)} unpruned studies ({a.prefix or 'all'}), replayed at graces {a.graces}"
        f"{' and with rungs' if rung_graces else ''}{f' in the orders {a.orders}' if orders != ['study'] else ''}\n"
    )
    print(
        "| grace | family | stopped (median of trials) | work kept (median) | false stops: front trials stopped "
        "(total over studies) | front hypervolume kept: median (min) | front work (median) |"
        "\n|---|---|---|---|---|---|---|"
    )
    for key in report[names[0]]:
        families = dict.fromkeys(f for n in names for f in report[n][key])
        for f in families:
            rows = [report[n][key][f] for n in names if f in report[n][key]]
            hv = [r["hypervolume_kept"] for r in rows]
            print(
                f"| {key} | {f} | {statistics.median(r['stopped'] for r in rows):g} of "
                f"{statistics.median(r['trials'] for r in rows):g} | "
                f"{statistics.median(r['work_kept'] for r in rows):.2f} | "
                f"{sum(r['front_stopped'] for r in rows)} of {sum(r['front'] for r in rows)} | "
                f"{statistics.median(hv):.3f} ({min(hv):.3f}) | "
                f"{statistics.median(r.get('front_work', 1.0) for r in rows):.2f} |"
            )
    print("\n| rule | work kept by the whole study (all families): median (range) |\n|---|---|")
    for key in report[names[0]]:
        kept = [whole[n][key] for n in names]
        print(f"| {key} | {statistics.median(kept):.2f} ({min(kept):.2f}-{max(kept):.2f}) |")
    fl = list(floor.values())
    print(
        f"| the fronts' own work (every front trial to the end, every other trial one epoch: the least a rule "
        f"keeping every family's whole front can keep) | {statistics.median(fl):.2f} ({min(fl):.2f}-{max(fl):.2f}) |"
    )
    families = list(dict.fromkeys(f for n in names for e in ranks[n] for f in ranks[n][e]))
    epochs_seen = sorted({e for n in names for e in ranks[n]})
    print(
        "\nhow well an epoch ranks a family's trials (Spearman's rho of its values there and at the end, "
        "median (min-max) over the studies):\n| family | "
        + " | ".join(f"epoch {e}" for e in epochs_seen)
        + " |\n|---|"
        + "---|" * len(epochs_seen)
    )
    for f in families:
        cells = []
        for e in epochs_seen:
            rho = [r for n in names if f in ranks[n].get(e, {}) and not math.isnan(r := ranks[n][e][f])]
            cells.append(f"{statistics.median(rho):.2f} ({min(rho):.2f}-{max(rho):.2f})" if rho else "-")
        print(f"| {f} | " + " | ".join(cells) + " |")
    if trust:
        rungs_seen = sorted({r for n in trust for r in trust[n]})
        print(
            f"\nwhat the checked rungs' trust test reads of each rung (`rung_keeps`: the share of the front kept), "
            f"on a family's first {a.trust_first} trials / on all of them, median (min) over the studies:\n"
            "| family | " + " | ".join(f"rung {r}" for r in rungs_seen) + " |\n|---|" + "---|" * len(rungs_seen)
        )
        for f in dict.fromkeys(f for n in trust for r in trust[n] for f in trust[n][r]):
            cells = []
            for r in rungs_seen:
                pairs = [trust[n][r][f] for n in trust if f in trust[n].get(r, {})]
                first = [x for x, _ in pairs if x is not None]
                every = [y for _, y in pairs if y is not None]
                cells.append(
                    " / ".join(f"{statistics.median(v):.3f} ({min(v):.3f})" if v else "-" for v in (first, every))
                )
            print(f"| {f} | " + " | ".join(cells) + " |")
    if a.false_stops:
        print(
            "\nfalse stops: front trials each rule stops (first-seed validation at the stop and at the last epoch, "
            "both as stored unpruned; the judge: the best earlier trial of the family with no more parameters there)"
        )
        for key in wrong[names[0]]:
            print(
                f"\n{key}:\n| study | trial | family | params | stopped at | its value there | its end | judge: trial, "
                "params | judge's value there | judge's end |\n|---|---|---|---|---|---|---|---|---|---|"
            )
            for n in names:
                for w in wrong[n][key]:
                    judge = (
                        "none | - | - | -"
                        if w.judge is None
                        else f"{w.judge}, {w.judge_params:,} | {w.judge_at_stop:.4g} | {w.judge_end:.4g}"
                    )
                    print(
                        f"| {n} | {w.index} | {w.family} | {w.params:,} | {w.stop} | {w.at_stop:.4g} | {w.end:.4g} "
                        f"| {judge} |"
                    )
    shares = list(corner_share.values())
    print(
        f"\nthe budget corners (each family's larger of its first two trials) hold {statistics.median(shares):.2f} "
        f"({min(shares):.2f}-{max(shares):.2f}) of a study's work"
    )
    if a.json:
        write_json(
            a.json,
            {
                n: report[n]
                | {
                    "study work kept": whole[n],
                    "budget corners' work": corner_share[n],
                    "fronts' own work": floor[n],
                    "rank agreement": {str(e): r for e, r in ranks[n].items()},
                }
                | ({"false stops": {k: [vars(w) for w in v] for k, v in wrong[n].items()}} if a.false_stops else {})
                | (
                    {
                        "rung trust": {
                            str(r): {f: {f"first {a.trust_first}": x, "all": y} for f, (x, y) in by.items()}
                            for r, by in trust[n].items()
                        }
                    }
                    if n in trust
                    else {}
                )
                for n in names
            },
        )
        print(f"\nper study: {a.json}")
    store.close()


if __name__ == "__main__":
    main()
