"""Seed checks: a second seed for some of a search's front configurations, so that a search
run with one seed per configuration (`--repeats 1`, the default) still measures its seed
noise and every verdict gets an interval.

After a study's `--trials` trials, the loop trains each chosen configuration once more
with the next seed of its own sequence (`run_seeds(..., repeats + 1)[repeats:]`) as a
trial of its own, noted "seed check of trial N", never pruned and never told to the
sampler. The readers (`reports/compare.py`) merge a configuration's trials into one
configuration with all their runs, and pool the seed noise over a family's configurations
(`reports/uncertainty.py`, `pooled_noise`).

Which configurations (`plan_checks`): each family's front (its complete configurations no
other of the family beats at no more parameters), cheapest first and the families in
turns, while the checks' training time (each check assumed to take its trial's time) stays
within `share` of the training time the search has spent so far. Cheapest first gives the
most pairs, so the most degrees of freedom for the pooled noise, for the time.

Shapes: records are `storage.records.TrialRecord`s; `objective` reads a record's mean
value (None: not known).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from core.pareto import pareto_mask
from search.engine.sampling.policies import DEFAULT_SEED_CHECKS
from storage.records import TrialRecord

__all__ = ["DEFAULT_SEED_CHECKS", "SEED_CHECK", "check_note", "checked_trial", "is_check", "plan_checks"]

SEED_CHECK = "seed check of trial"
_CHECK = re.compile(rf"{SEED_CHECK} (\d+)")


def check_note(number: int) -> str:
    return f"{SEED_CHECK} {number}"


def checked_trial(note: str | None) -> int | None:
    """The trial number a seed check's note names; None for any other trial."""
    m = _CHECK.search(note or "")
    return int(m.group(1)) if m else None


def is_check(record: TrialRecord) -> bool:
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


def plan_checks(
    records: Sequence[TrialRecord], objective: Callable[[TrialRecord], float | None], direction: str, share: float
) -> list[TrialRecord]:
    """The trials to check, in order: each family's front cheapest first, families in turns,
    while the planned checks' time stays within `share` of the finished trials' training
    time (checks included, so that a resumed plan keeps its first choices); trials already
    checked (or being checked) are left out."""
    if share <= 0:
        return []
    by_number = {r.number: r for r in records}
    checked = {checked_trial(r.note) for r in records if is_check(r)}
    spent = sum(r.duration_s or 0.0 for r in records if not is_check(r) and r.duration_s is not None)
    allowed = share * spent - sum(r.duration_s or 0.0 for r in records if is_check(r))
    queues = []
    for numbers in front_numbers(records, objective, direction).values():
        front = sorted((by_number[n] for n in numbers), key=lambda r: (r.duration_s or 0.0, r.number))
        queues.append([r for r in front if r.number not in checked])
    plan: list[TrialRecord] = []
    while any(queues):
        for q in queues:
            if not q:
                continue
            r = q.pop(0)
            cost = r.duration_s or 0.0
            if cost <= allowed:
                plan.append(r)
                allowed -= cost
            else:
                q.clear()  # the rest of this front costs at least as much
    return plan
