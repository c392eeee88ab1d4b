"""What an undecided verdict would take to decide, and the next step a reader is told:
`search compare` (search/api/readings.py `Comparison.next_step`), the study page's "Which
shape wins" and `search run --decide`'s end (search/engine/deciding.py) say it alike.
Pure functions of verdicts/compare.py's `Verdict`s."""

from __future__ import annotations

from collections.abc import Sequence

from core.budget import format_count
from verdicts.compare import Verdict

DECIDED = ("better", "equivalent")  # the statuses that answer a budget
UNDECIDABLE = ("only one family", "no model")  # below one family's smallest model: no search decides these

# beyond this factor of the evidence a difference is too small against its interval to be
# worth deciding as "better": an equivalence margin answers it
MOST_EVIDENCE = 100.0


def what_it_takes(verdict: Verdict) -> str | None:
    """About what deciding an undecided budget would take: the trials its thin families
    need, or (an interval too wide) the factor by which its evidence must grow, from the
    half-width shrinking as one over the square root of the configurations and seeds;
    None where nothing can be said (no interval yet)."""
    if verdict.status == "too thin":
        more = [
            f"{r.thin.more_trials} more trials of {r.family}" for r in verdict.families if r.thin and r.thin.more_trials
        ]
        return f"about {', '.join(more)}" if more else None
    if verdict.status == "single run":
        return "a second seed of its leading configurations (no seed noise is known yet)"
    if verdict.margin_low is None or verdict.margin_high is None or verdict.margin is None:
        return None
    half = (verdict.margin_high - verdict.margin_low) / 2
    gap = abs(verdict.margin)
    if verdict.equivalence is not None and gap < verdict.equivalence:
        need = verdict.equivalence - gap  # the half-width that would make it "equivalent"
    else:
        need = gap  # the half-width that would make it "better"
    if need <= 0:
        return "no amount of evidence decides a difference of 0 without --margin"
    factor = (half / need) ** 2
    if factor > MOST_EVIDENCE and verdict.equivalence is None:
        return (
            f"over {MOST_EVIDENCE:.0f}x the evidence near this budget would decide it as better: "
            "--margin D answers whether it is equivalent within ±D"
        )
    return f"about {factor:.1f}x the evidence near this budget would decide it"


def undecided(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts more search could still decide."""
    return [v for v in verdicts if v.status not in DECIDED and v.status not in UNDECIDABLE]


def next_step(verdicts: Sequence[Verdict], most: float | None = None) -> list[str]:
    """The lines that follow one study's undecided answers: each undecided budget (at most
    `most`, the study's budget: `--decide` refuses one above it) with what deciding it
    would take, and the `search run --decide` that searches on for it; empty when every
    budget is decided or undecidable."""
    todo = [v for v in undecided(verdicts) if most is None or v.budget <= most]
    if not todo:
        return []
    at = ",".join(format_count(v.budget) for v in todo)
    return [
        f"undecided at {at}:",
        *(f"  at {format_count(v.budget)}: {v.status}; {what_it_takes(v) or 'more trials near it'}" for v in todo),
        f"to decide them, run this study's `search run` command again with --decide {at} and a larger "
        "--trials: it searches near those budgets and stops once each is better, or equivalent "
        "within ±D with --margin D",
    ]
