"""verdicts/undecided.py: what deciding an undecided budget would take, from the verdict's
own interval, and the next step that follows one study's answers."""

import pytest

from verdicts.compare import Verdict
from verdicts.undecided import MOST_EVIDENCE, next_step, undecided, what_it_takes


def verdict(status: str, margin=None, low=None, high=None, budget=40_000.0, equivalence=None) -> Verdict:
    return Verdict(budget, [], "a", "b", margin, low, high, status, equivalence)


def test_the_evidence_factor_is_the_squared_ratio_of_the_half_width_to_the_gap():
    # half-width 0.6 against a gap of 0.2: the half-width must shrink 3 times, so 9x the evidence
    assert what_it_takes(verdict("not distinguishable", 0.2, -0.4, 0.8)) == (
        "about 9.0x the evidence near this budget would decide it"
    )
    # with --margin 1 the interval must fit inside ±1: half-width 0.8 - 0.2 = 0.6 is needed; 1.5 now
    v = verdict("not distinguishable", 0.2, -1.3, 1.7, equivalence=0.8)
    assert what_it_takes(v) == f"about {(1.5 / 0.6) ** 2:.1f}x the evidence near this budget would decide it"


def test_a_difference_tiny_against_its_interval_points_to_a_margin_and_zero_needs_one():
    tiny = what_it_takes(verdict("not distinguishable", 0.01, -1.0, 1.02))
    assert tiny.startswith(f"over {MOST_EVIDENCE:.0f}x") and "--margin D" in tiny
    assert "without --margin" in what_it_takes(verdict("not distinguishable", 0.0, -1.0, 1.0))
    assert what_it_takes(verdict("too thin", 0.3)) is None  # no family says how many trials it lacks


def test_only_budgets_more_search_can_decide_are_listed_with_the_decide_that_does_it():
    vs = [
        verdict("better", 1.0, 0.5, 1.5, budget=10_000.0),
        verdict("only one family", budget=5_000.0),
        verdict("equivalent", 0.0, -0.1, 0.1, budget=20_000.0, equivalence=0.3),
        verdict("not distinguishable", 0.2, -0.4, 0.8, budget=40_000.0),
        verdict("single run", 0.3, budget=100_000.0),
    ]
    assert [v.budget for v in undecided(vs)] == [40_000.0, 100_000.0]
    lines = next_step(vs)
    assert lines[0] == "undecided at 40K,100K:"
    assert lines[1] == "  at 40K: not distinguishable; about 9.0x the evidence near this budget would decide it"
    assert lines[2] == "  at 100K: single run; a second seed of its leading configurations (no seed noise is known yet)"
    assert "--decide 40K,100K" in lines[3]
    assert next_step(vs[:3]) == []
    assert next_step(vs, most=60_000.0)[0] == "undecided at 40K:"  # --decide refuses a budget above the study's


@pytest.mark.parametrize("status", ["better", "equivalent", "only one family", "no model"])
def test_a_decided_or_undecidable_budget_needs_nothing(status):
    assert next_step([verdict(status, 1.0, 0.5, 1.5)]) == []
