"""Seed checks: a second seed for some of a search's front configurations, so that a search
run with one seed per configuration (`--repeats 1`, the default) still measures its seed
noise and every verdict gets an interval.

After a study's `--trials` trials, the loop trains each chosen configuration once more
with the next seed of its own sequence (`run_seeds(..., repeats + 1)[repeats:]`) as a
trial of its own, noted "seed check of trial N", never pruned and never told to the
sampler. The readers (`verdicts/compare.py`) merge a configuration's trials into one
configuration with all their runs, and pool the seed noise over a family's configurations
(`verdicts/uncertainty.py`, `pooled_noise`).

Which configurations (`plan_checks`): each family's front (its complete configurations no
other of the family beats at no more parameters), the families in turns, while the checks'
training time (each check assumed to take its trial's time) stays within `share` of the
training time the search has spent so far. In the order `--seed-check-order` names
(CHECK_ORDERS): "cheapest" first gives the most pairs, so the most degrees of freedom for
the pooled noise, for the time; "budgets" first checks the configuration that holds the
family's value at each of the budgets `search compare` reads by default (`level_corners`),
where a badly trained cheap model's noise would otherwise stand in for a good one's, then
the rest of the front cheapest first.

Shapes: records are `storage.records.TrialRecord`s; `objective` reads a record's mean
value (None: not known).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from core.limits import DEFAULT_LEVELS
from core.pareto import pareto_mask
from search.engine.sampling.policies import CHECK_ORDERS, DEFAULT_CHECK_ORDER, DEFAULT_SEED_CHECKS
from storage.records import TrialRecord
from verdicts.candidates import log_levels

__all__ = [
    "CHECK_ORDERS",
    "DEFAULT_CHECK_ORDER",
    "DEFAULT_SEED_CHECKS",
    "SEED_CHECK",
    "check_note",
    "checked_trial",
    "is_check",
    "plan_checks",
]

SEED_CHECK = "seed check of trial"
_CHECK = re.compile(rf"{SEED_CHECK} (\d+)")


def check_note(number: int) -> str:
    """The note a seed check of trial `number` is stored with ("seed check of trial N")."""
    return f"{SEED_CHECK} {number}"


def checked_trial(note: str | None) -> int | None:
    """The trial number a seed check's note names; None for any other trial."""
    m = _CHECK.search(note or "")
    return int(m.group(1)) if m else None


def is_check(record: TrialRecord) -> bool:
    """Whether a stored trial is a seed check (a second seed of another trial's configuration)."""
    return checked_trial(record.note) is not None


def front_numbers(records: Sequence[TrialRecord], objective: Callable[[TrialRecord], float | None], direction: str):
    """Per family, the trial numbers of its front: complete configurations (checks left out)
    that no other of the family beats at no more parameters."""
    out: dict[str, list[int]] = {}
    by_family: dict[str, list[tuple[TrialRecord, float]]] = {}
    for r in records:
        if r.status != "complete" or is_check(r):
            continue
        v = objective(r)
        if v is None or not np.isfinite(v):
            continue
        by_family.setdefault(r.family, []).append((r, float(v)))
    for fam, rows in by_family.items():
        pts = np.array([[r.params, v] for r, v in rows], dtype=float)
        mask = pareto_mask(pts, ["minimize", direction])
        out[fam] = [r.number for (r, _), keep in zip(rows, mask) if keep]
    return out


def level_corners(fronts: dict[str, list[TrialRecord]], levels: Sequence[float]) -> dict[str, list[TrialRecord]]:
    """Per family, the front configurations that hold its value at each level: the largest
    on its front within the level (a front's larger configurations are its better ones),
    smallest level first, each once."""
    out = {}
    for fam, front in fronts.items():
        by_size = sorted(front, key=lambda r: (r.params, r.number))
        picks: list[TrialRecord] = []
        for level in sorted(levels):
            within = [r for r in by_size if r.params <= level]
            if within and within[-1] not in picks:
                picks.append(within[-1])
        out[fam] = picks
    return out


def plan_checks(
    records: Sequence[TrialRecord],
    objective: Callable[[TrialRecord], float | None],
    direction: str,
    share: float,
    order: str = DEFAULT_CHECK_ORDER,
) -> list[TrialRecord]:
    """The trials to check, in order: each family's front in the `order` of CHECK_ORDERS,
    families in turns, while the planned checks' time stays within `share` of the finished
    trials' training time (checks included, so that a resumed plan keeps its first choices);
    trials already checked (or being checked) are left out. "budgets" first takes the
    `level_corners` of `search compare`'s default levels (one that does not fit the time
    left is passed over), then the rest of the front cheapest first."""
    if order not in CHECK_ORDERS:
        raise ValueError(f"unknown seed check order {order!r}; known: {', '.join(CHECK_ORDERS)}")
    if share <= 0:
        return []
    by_number = {r.number: r for r in records}
    checked = {checked_trial(r.note) for r in records if is_check(r)}
    spent = sum(r.duration_s or 0.0 for r in records if not is_check(r) and r.duration_s is not None)
    allowed = share * spent - sum(r.duration_s or 0.0 for r in records if is_check(r))
    fronts = {
        fam: sorted((by_number[n] for n in numbers), key=lambda r: (r.duration_s or 0.0, r.number))
        for fam, numbers in front_numbers(records, objective, direction).items()
    }
    plan: list[TrialRecord] = []
    if order == "budgets":
        sizes = [r.params for r in records if r.status == "complete" and not is_check(r)]
        levels = log_levels(np.array(sizes, dtype=float), DEFAULT_LEVELS)  # as `search compare` reads them
        firsts = [[r for r in picks if r.number not in checked] for picks in level_corners(fronts, levels).values()]
        allowed = _take(firsts, allowed, plan, stop_at_first_misfit=False)
        taken = {r.number for r in plan}
        fronts = {fam: [r for r in front if r.number not in taken] for fam, front in fronts.items()}
    _take([[r for r in front if r.number not in checked] for front in fronts.values()], allowed, plan)
    return plan


def _take(
    queues: list[list[TrialRecord]], allowed: float, plan: list[TrialRecord], stop_at_first_misfit: bool = True
) -> float:
    """Append to `plan` from the queues in turns while each check's time fits in `allowed`
    seconds; returns the seconds left. A check that does not fit ends its queue (a queue in
    cost order: the rest cost at least as much), or is passed over."""
    queues = [list(q) for q in queues]
    while any(queues):
        for q in queues:
            if not q:
                continue
            r = q.pop(0)
            cost = r.duration_s or 0.0
            if cost <= allowed:
                plan.append(r)
                allowed -= cost
            elif stop_at_first_misfit:
                q.clear()
    return allowed
