"""`search run --decide B1,B2 [--margin D]`: search until the named budgets' verdicts are
decided, with the least training.

After the default search's share of trials per family (`decide_start`), the study reads its verdicts at the
named budgets as `search compare` reads them (verdicts/compare.py: the study's metric, the
default interval and noise, `--margin D` for equivalence). A budget is decided when its
verdict is "better" or "equivalent". For each undecided budget the next round trains
what its verdict lacks (`steps_for`):

- "too thin" (a family has too few configurations near the budget) or no model there:
  a trial of that family aimed at a size in [B / window, B] (the sampler draws the rest);
- "single run" (no seed noise known yet), or "not distinguishable" where seed noise is
  at least half the interval (the seed-only interval's half-width against the full
  one's): another seed of each of the two leading configurations (a seed check), up to
  MAX_RUNS runs of one configuration;
- "not distinguishable" otherwise (search luck dominates): a trial of each of the two
  leading families aimed near the budget.

A round's jobs run (in flight together where the executor allows), then the verdicts are
read again; the search stops when every named budget is decided or `--trials` trials
have run (seed checks are not trials; at most as many as `--trials`). The state is the
stored trials, so a killed search resumes where it was. `outstanding` says what the
undecided budgets would cost.

Shapes: records are `storage.records.TrialRecord`s; budgets are floats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from search.engine.sampling.policies import startup_trials
from search.engine.seed_checks import checked_trial, is_check
from storage.records import TrialRecord

MAX_RUNS = 5  # runs of one configuration a decision may ask for (then it aims trials near the budget instead)
SEED_SHARE = 0.5  # seed noise "dominates" where its interval is at least this share of the full one


@dataclass(frozen=True)
class Step:
    """One job of a round: `aim` a trial of `family` at a size in [low, high], or run
    `again` (a trial) with one more seed."""

    family: str
    budget: float
    low: float = 0.0
    high: float = 0.0
    again: TrialRecord | None = None
    runs: int = 0  # the runs `again`'s configuration has (its own and its seed checks')


DECIDE_AFTER = 20  # trials per family before the first reading: a family's share of the default two-family search


def decide_start(trials: int, families: int) -> int:
    """The trials before the first reading: DECIDE_AFTER per family (the default search's
    share; at least each family's random start), at most `trials`. Reading earlier decided
    too soon: on the quickstart question one search stopped after 32 trials with
    "hourglass better by 1.19" at 40K, conventional's learning rates never above 0.001 (the
    pooled answer of eight default searches there is -0.015; docs/benchmarks.md §23)."""
    per = max(DECIDE_AFTER, startup_trials(max(1, trials // max(families, 1))))
    return min(trials, families * per)


def frame_of(records: list[TrialRecord], metric: str):
    """The columns `verdicts.candidates.candidates` reads (a pandas frame), from stored trial records."""
    import pandas as pd

    def metric_of(r: TrialRecord, i: int, default):
        got = r.metrics.get(metric)
        return default if got is None or got[i] is None else got[i]

    return pd.DataFrame(
        {
            "number": [r.number for r in records],
            "family": [r.family for r in records],
            "params": [float(r.params) for r in records],
            "status": [r.status for r in records],
            "config": [r.config for r in records],
            "seeds": [list(r.seeds) for r in records],
            metric: [float(metric_of(r, 0, math.nan)) for r in records],
            f"{metric}_std": [float(metric_of(r, 1, math.nan)) for r in records],
            "n_runs": [int(metric_of(r, 2, 0)) for r in records],
        }
    )


def read_verdicts(records, metric, direction, families, budgets, margin, window, settings=None):
    """(verdicts, candidates) at `budgets`, as `search compare` reads the study (whose
    search `settings`, keyed as search_flags.FLAGS, say whether its smallest models are
    fixed: verdicts/candidates.py `smallest_by_design`)."""
    from verdicts.candidates import candidates, smallest_by_design
    from verdicts.compare import compare_at

    fixed = smallest_by_design(settings)
    cands = candidates(frame_of(records, metric), metric, list(families), smallest_fixed=fixed)
    return compare_at(cands, list(budgets), direction, window=window, equivalence=margin), cands


def steps_for(verdict, cands, records: list[TrialRecord], direction: str, window: float) -> list[Step]:
    """What the undecided `verdict` (verdicts.compare.Verdict) lacks, as jobs (module doc)."""
    b = verdict.budget
    aim = [Step(r.family, b, b / window, b) for r in verdict.families if r.value is None or r.thin is not None]
    if verdict.status in ("no model", "only one family", "too thin") or aim:
        return aim or [Step(r.family, b, b / window, b) for r in verdict.families]
    leaders = [r for r in verdict.families if r.family in (verdict.winner, verdict.runner_up)]
    by_number = {r.number: r for r in records}
    if verdict.status == "single run" or seed_dominates(verdict, cands, direction):
        again = [by_number[r.number] for r in leaders if r.number in by_number and r.runs < MAX_RUNS]
        if again:
            return [Step(r.family, b, again=r) for r in again]
    return [Step(r.family, b, b / window, b) for r in leaders]


def plan_round(
    records: list[TrialRecord], metric: str, direction: str, families: list[str], spec, settings=None
) -> list[Step] | None:
    """The next round's steps for `spec.decide`'s undecided budgets (`steps_for`, one more
    seed per configuration a round, seed checks at most `spec.trials` in all: a trial aimed
    near the budget instead); None when every budget is decided. `settings`: the study's
    stored settings, read as `read_verdicts` reads them."""
    from verdicts.uncertainty import DEFAULT_WINDOW
    from verdicts.undecided import DECIDED

    verdicts, cands = read_verdicts(
        records, metric, direction, families, spec.decide, spec.margin, DEFAULT_WINDOW, settings
    )
    undecided = [v for v in verdicts if v.status not in DECIDED]
    if not undecided:
        return None
    checks = sum(is_check(r) for r in records)
    runs: dict[int, int] = {r.number: len(r.seeds) for r in records if not is_check(r)}
    for r in records:
        if is_check(r) and checked_trial(r.note) in runs:
            runs[checked_trial(r.note)] += len(r.seeds)
    seen: set[int] = set()
    out: list[Step] = []
    for v in undecided:
        for s in steps_for(v, cands, records, direction, DEFAULT_WINDOW):
            if s.again is not None and s.again.number in seen:
                continue
            if s.again is not None and checks >= spec.trials:
                s = Step(s.family, s.budget, s.budget / DEFAULT_WINDOW, s.budget)
            if s.again is not None:
                seen.add(s.again.number)
                checks += 1
                s = Step(s.family, s.budget, again=s.again, runs=runs.get(s.again.number, len(s.again.seeds)))
            out.append(s)
    return out


def seed_dominates(verdict, cands, direction: str) -> bool:
    """Whether seed noise makes at least SEED_SHARE of the difference's interval: the
    interval with the configurations fixed (method "seed") against the full one."""
    from verdicts.compare import compare_at

    if verdict.margin_low is None:
        return True
    two = {f: cands[f] for f in (verdict.winner, verdict.runner_up)}
    (seed,) = compare_at(two, [verdict.budget], direction, method="seed", min_near=0)
    if seed.margin_low is None:
        return False
    full = verdict.margin_high - verdict.margin_low
    return full <= 0 or (seed.margin_high - seed.margin_low) >= SEED_SHARE * full


def outstanding(verdict) -> str:
    """An undecided budget's verdict and what deciding it would take (verdicts/undecided.py
    `what_it_takes`)."""
    from core.budget import format_count
    from verdicts.undecided import what_it_takes

    at = f"at {format_count(verdict.budget)}"
    cost = what_it_takes(verdict)
    if cost is None:
        return f"{at}: {verdict.text}"
    return f"{at}: {verdict.text}" + (f" ({cost})" if verdict.status == "too thin" else f"; {cost}")


def check_budgets(budgets: list[float], budget: float, smallest: dict[str, float]) -> None:
    """UserError unless every --decide budget is at most the search budget and at least
    every family's smallest model (a verdict there needs a model of each)."""
    from core.budget import format_count
    from core.errors import UserError

    for b in budgets:
        if not np.isfinite(b) or b > budget:
            raise UserError(f"--decide {format_count(b)} is above the search budget {format_count(budget)}")
        small = {f: s for f, s in smallest.items() if s > b}
        if small:
            fam, s = max(small.items(), key=lambda kv: kv[1])
            raise UserError(
                f"--decide {format_count(b)} is below the smallest {fam} model ({format_count(s)}): "
                "no verdict is possible there"
            )


def decisions_text(verdicts, trials: int, decided: bool, timed_out: bool = False) -> list[str]:
    """What `search run --decide` says at its end: each named budget's verdict, and what
    the undecided ones would cost."""
    from verdicts.undecided import DECIDED

    limit = "the --time-limit" if timed_out else "the --trials limit"
    head = (
        f"--decide: every named budget decided after {trials} trial(s)"
        if decided or all(v.status in DECIDED for v in verdicts)
        else f"--decide: not every named budget decided after {trials} trial(s) ({limit})"
    )
    lines = [head]
    for v in verdicts:
        lines.append("  " + (outstanding(v) if v.status not in DECIDED else f"{_at(v)}: {v.text}"))
    return lines


def _at(verdict) -> str:
    from core.budget import format_count

    return f"at {format_count(verdict.budget)}"
