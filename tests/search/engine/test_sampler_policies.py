"""The Optuna proposer's policies, each on its own (search/engine/sampling/: size_axis.py,
turns.py, corners.py, targets.py, revisits.py), without a space or a sampler to drive."""

import math

import optuna
import pytest
from optuna.trial import TrialState

from search.engine.sampling.corners import Corners
from search.engine.sampling.policies import RANDOM_AFTER_REVISITS, startup_trials
from search.engine.sampling.revisits import Revisits
from search.engine.sampling.size_axis import SIZE_PARAM, SizeAxis, target_trial, waiting
from search.engine.sampling.targets import Targets
from search.engine.sampling.turns import Turns

FAMILIES = ("a", "b", "c")
BUDGET = 100_000


def axis(spread="size", **smallest):
    """Each family's smallest model 100 parameters unless given (one over the budget is unsized)."""
    return SizeAxis({f: smallest.get(f, 100) for f in FAMILIES}, BUDGET, spread)


def study():
    return optuna.create_study(directions=["minimize", "maximize"], sampler=optuna.samplers.RandomSampler(seed=0))


def test_the_size_axis_runs_from_the_smallest_model_to_the_budget():
    ax = axis(c=2 * BUDGET)
    assert ax.range("a") == (2.0, 5.0) and ax.sized("a") and not ax.sized("c")
    assert ax.at_budget("a", 5.0) and not ax.at_budget("a", 4.9) and not ax.at_budget("a", None)
    assert not ax.at_budget("z", 5.0)  # a family the study does not search
    assert not SizeAxis({}, BUDGET, "none").at_budget("a", 5.0)
    assert target_trial("a", 3.0, named=True) == {f"a.{SIZE_PARAM}": 3.0, "family": "a"}
    assert target_trial("a", 3.0, named=False) == {f"a.{SIZE_PARAM}": 3.0}


def test_equal_turns_give_the_family_with_the_fewest_trials_ties_in_order():
    turns = Turns(FAMILIES, "equal", "maximize")
    got = []
    for _ in range(7):
        got.append(turns.next())
        turns.spend(got[-1])
    assert got == ["a", "b", "c", "a", "b", "c", "a"] and turns.proposed() == 7
    turns.give_back("a")  # an answered revisit: no trial, its turn not spent
    assert turns.counts == {"a": 2, "b": 2, "c": 2} and turns.next() == "a"
    turns.spend("a")
    turns.spend("c")
    assert turns.next() == "b"
    assert turns.taken and turns.searches("b") and not turns.searches("z")
    assert not Turns(FAMILIES, "free", "maximize").taken


def test_a_finished_trial_is_a_hit_when_nothing_smaller_is_as_good():
    turns = Turns(("a", "b"), "uncertain", "maximize")
    for params, value in [(100, 10.0), (200, 12.0), (300, 11.0), (50, 9.0), (400, None), (500, math.nan)]:
        turns.finished("a", params, value)
    assert turns.hits["a"] == [True, True, False, True, False, False]
    assert turns.points["a"] == [(100.0, 10.0), (200.0, 12.0), (300.0, 11.0), (50.0, 9.0)]
    turns.finished("z", 100, 1.0)  # a family this study does not search: ignored
    assert "z" not in turns.hits
    low = Turns(("a",), "uncertain", "minimize")
    low.finished("a", 100, 1.0)
    low.finished("a", 200, 2.0)  # larger and worse (lower is better): not on the front
    assert low.hits["a"] == [True, False]
    # uncertain: equal turns until each family has a few finished trials, then the moving front
    for fam in ("a", "b"):
        for _ in range(4):
            turns.spend(fam)
    for k in range(4):
        turns.finished("b", 100 * (k + 1), 5.0 + k)  # each larger b is better: all join its front
    assert turns.hits["b"] == [True] * 4 and turns.next() == "b"  # a's last 4: one hit


def test_corners_enqueue_the_smallest_models_then_the_budget_models():
    ax = axis(c=2 * BUDGET)  # c has no model under the budget: no corners
    s = study()
    Corners("both", FAMILIES, ax, trials=20).enqueue(s, FAMILIES, lambda f: {f"{f}.width": 4}, named=True)
    queued = [t.system_attrs["fixed_params"] for t in s.get_trials(deepcopy=False, states=(TrialState.WAITING,))]
    assert queued == [
        {f"a.{SIZE_PARAM}": 2.0, "a.width": 4, "family": "a"},
        {f"b.{SIZE_PARAM}": 2.0, "b.width": 4, "family": "b"},
        {f"a.{SIZE_PARAM}": 5.0, "family": "a"},
        {f"b.{SIZE_PARAM}": 5.0, "family": "b"},
    ]
    assert waiting(s) and not waiting(study())
    for corners, n in (("smallest", 2), ("last", 2), ("none", 0)):
        s = study()
        Corners(corners, FAMILIES, ax, trials=20).enqueue(s, ["a", "b"], lambda f: {}, named=False)
        assert len(s.get_trials(deepcopy=False)) == n, corners
    s = study()
    Corners("both", FAMILIES, axis("none"), trials=20).enqueue(s, FAMILIES, lambda f: {}, named=False)
    assert not waiting(s)  # spread "none": no family is sized


def test_last_corners_are_due_exactly_when_the_proposals_left_equal_the_families_missing_one():
    trials = 10
    corners = Corners("last", FAMILIES, axis(), trials)
    # 3 missing: due from 3 proposals left until none is
    assert [corners.due(p) for p in (0, 6, 7, 8, 9, 10)] == [[], [], list(FAMILIES), list(FAMILIES), list(FAMILIES), []]
    assert corners.proposed("a", 4.0, 7) is False and corners.cornered == set()  # not at the budget
    assert corners.proposed("a", 5.0, 7) is True and corners.cornered == {"a"}  # due: trained unpruned
    assert corners.due(7) == []  # 3 left, 2 missing: not yet
    assert corners.due(8) == ["b", "c"]
    corners.replayed("b", 5.0)
    assert corners.due(9) == ["c"] and corners.cornered == {"a", "b"}
    # a budget model proposed before it is due is no last trial, but it counts as proposed
    early = Corners("last", FAMILIES, axis(), trials)
    assert early.proposed("c", 5.0, 1) is False and early.due(8) == ["a", "b"]
    # other corners: nothing is ever due
    both = Corners("both", FAMILIES, axis(), trials)
    assert both.due(9) == [] and both.proposed("a", 5.0, 9) is False and both.cornered == {"a"}


def test_a_ramped_target_stays_under_its_rising_cap():
    trials, ax = 24, axis()  # 8 trials a family: a start of 4
    targets = Targets("ramp", 7, FAMILIES, ax, trials)
    n = startup_trials(trials // len(FAMILIES))
    assert targets.start_trials() == n == 4
    lo, hi = ax.range("b")
    for k in range(n):
        t = targets.planned("b", k, due=False)
        assert lo <= t <= lo + (hi - lo) * (k + 1) / n + 1e-12, (k, t)
        assert t == Targets("ramp", 7, FAMILIES, ax, trials).planned(
            "b", k, due=False
        )  # seeded: a resume draws it again
    assert targets.planned("b", n, due=False) is None  # past the start the sampler draws
    assert targets.planned("b", n, due=True) == hi  # a budget model due comes first
    assert targets.planned("b", 0, due=True) == hi
    spread = Targets("spread", 7, FAMILIES, ax, trials)
    assert spread.planned("b", 0, due=False) is None and spread.planned("b", 0, due=True) == hi
    assert len({Targets("ramp", seed, FAMILIES, ax, trials).planned("a", 3, due=False) for seed in range(5)}) == 5


def test_aims_are_served_in_order_within_the_size_range():
    ax = axis()
    targets = Targets("spread", 0, FAMILIES, ax, trials=20)
    assert targets.next_aim() is None
    targets.aim("b", 1000.0, 5000.0)
    targets.aim("a", 0.5, 10 * BUDGET)
    assert targets.next_aim() == ("b", 1000.0, 5000.0)
    for k in range(5):
        assert 3.0 <= targets.aimed("b", 1000.0, 5000.0, k) <= math.log10(5000.0)
        assert 2.0 <= targets.aimed("a", 0.5, 10 * BUDGET, k) <= 5.0  # clipped to its own range
    assert targets.aimed("b", 1000.0, 5000.0, 3) == targets.aimed("b", 1000.0, 5000.0, 3)
    assert targets.next_aim() == ("a", 0.5, 10 * BUDGET) and targets.next_aim() is None


def test_a_revisit_of_a_known_configuration_is_answered_and_counted():
    revisits = Revisits("answer", 0, FAMILIES, axis())
    assert revisits.answers and not Revisits("train", 0, FAMILIES, axis()).answers
    cfg = {"width": 8, "lr": 0.01}
    assert revisits.answer("a", cfg) is None  # new: trained, running from now on
    assert revisits.answer("a", dict(reversed(cfg.items()))) == (None, TrialState.FAIL)  # still training
    told = ([2.0, 11.5], TrialState.COMPLETE)
    revisits.told("a", cfg, told, known=True)
    assert revisits.running == set()
    assert revisits.answer("a", cfg) == told and revisits.answer("b", cfg) is None  # another family's is new
    assert [revisits.answered_one(k) for k in range(1, RANDOM_AFTER_REVISITS + 2)] == [
        k >= RANDOM_AFTER_REVISITS for k in range(1, RANDOM_AFTER_REVISITS + 2)
    ]
    assert revisits.answered == RANDOM_AFTER_REVISITS + 1
    # a failed trial has no result to answer with: its configuration is trained again
    revisits.told("b", cfg, (None, TrialState.FAIL), known=False)
    assert revisits.answer("b", cfg) is None
    # a replayed one is known; a random target lies in the family's range, seeded by the answers
    revisits.replayed("c", cfg, ([2.0, 9.0], TrialState.PRUNED))
    assert revisits.answer("c", cfg) == ([2.0, 9.0], TrialState.PRUNED)
    first = revisits.random_target("c")
    assert 2.0 <= first <= 5.0 and first == revisits.random_target("c")
    revisits.answered_one(1)
    assert revisits.random_target("c") != first


@pytest.mark.parametrize("share", ["equal", "uncertain"])
def test_turns_start_equal_under_either_share(share):
    turns = Turns(FAMILIES, share, "maximize")
    got = []
    for _ in range(6):
        got.append(turns.next())
        turns.spend(got[-1])
    assert got == list(FAMILIES) * 2
