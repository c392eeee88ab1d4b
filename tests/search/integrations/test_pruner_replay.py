"""Replaying the Pareto pruner on an unpruned study's curves (search/integrations/pruner_replay.py):
trial i is judged only by trials before it, stopped trials feed their curve up to the
stop, families judge themselves, and the summary counts false stops on the front."""

import math

import pytest

from core.pareto import hypervolume_2d
from search.engine.pruners import ParetoPruner
from search.integrations.pruner_replay import (
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


def T(family, params, curve):
    return ReplayTrial(family, params, tuple(curve), curve[-1])


def trials():
    return [
        T("f", 10, [0.5, 0.6, 0.7, 0.8]),  # A: first, nothing to judge it by
        T("f", 20, [0.3, 0.4, 0.5, 0.6]),  # B: at epoch 2, 0.4 vs A's 0.6 -> stopped
        T("f", 5, [0.1, 0.2, 0.3, 0.4]),  # C: fewest params, never dominated
        T("g", 30, [0.0, 0.0, 0.0, 0.1]),  # D: another family, judged by none of f
        T("f", 15, [0.5, 0.59, 0.75, 0.9]),  # E: 0.59 vs A's 0.6 at epoch 2 (gap 0.01 > 1%) -> stopped
        T("f", 25, [0.2, 0.3, 0.4, 0.5]),  # F: at epoch 2, 0.3 vs B's stopped curve 0.4, A's 0.6
    ]


def test_stops_follow_the_rule_trial_by_trial():
    stops = replay_stops(trials(), ParetoPruner("maximize", epochs=4, grace=2))
    assert stops == [None, 2, None, None, 2, 2]


def test_grace_and_last_epoch_bound_the_stops():
    # grace 4 = the last epoch: nothing can be stopped (a stop there saves nothing)
    assert replay_stops(trials(), ParetoPruner("maximize", epochs=4, grace=4)) == [None] * 6
    # grace 3: judged from epoch 3 on; E at epoch 3 (0.75 vs A's 0.7) is not dominated
    assert replay_stops(trials(), ParetoPruner("maximize", epochs=4, grace=3)) == [None, 3, None, None, None, 3]


def test_a_stopped_trial_judges_later_ones_with_its_curve_up_to_the_stop():
    seq = [T("f", 10, [0.5, 0.9, 0.9, 0.9]), T("f", 12, [0.6, 0.1, 0.1, 0.1]), T("f", 14, [0.4, 0.4, 0.4, 0.4])]
    # the second stops at epoch 2; at epoch 1 the third (0.4) is beaten by both earlier ones
    assert replay_stops(seq, ParetoPruner("maximize", epochs=4, grace=1)) == [None, 2, 1]


def test_summary_counts_work_false_stops_and_the_front_kept():
    ts = trials()
    stops = replay_stops(ts, ParetoPruner("maximize", epochs=4, grace=2))
    s = summarise(ts, stops, "maximize")
    f, g = s["f"], s["g"]
    assert (f.trials, f.stopped, g.trials, g.stopped) == (5, 3, 1, 0)
    # work: A 10x4 + B 20x2 + C 5x4 + E 15x2 + F 25x2 over all five at 4 epochs
    assert f.work_kept == pytest.approx((40 + 40 + 20 + 30 + 50) / (4 * (10 + 20 + 5 + 15 + 25)))
    # f's front (fewer params, higher value): C (5, 0.4), A (10, 0.8), E (15, 0.9); E was stopped
    assert (f.front, f.front_stopped) == (3, 1)
    # kept hypervolume: the front without E, against the same reference, brute-forced
    pts = [(math.log10(p), v) for p, v in ((10, 0.8), (20, 0.6), (5, 0.4), (15, 0.9), (25, 0.5))]
    ref = (
        max(x for x, _ in pts) + 0.1 * (max(x for x, _ in pts) - min(x for x, _ in pts)),
        min(v for _, v in pts) - 0.1 * (0.9 - 0.4),
    )
    area = lambda keep: hypervolume_2d([pts[i] for i in keep], ["minimize", "maximize"], ref)  # noqa: E731
    assert f.hypervolume_kept == pytest.approx(area([0, 2]) / area(range(5)))
    assert 0 < f.hypervolume_kept < 1 and g.hypervolume_kept == 1.0 and g.work_kept == 1.0
    # the front's own work: C, A, E trained to the end, B and F one epoch each
    assert f.front_work == pytest.approx((5 * 4 + 10 * 4 + 15 * 4 + 20 + 25) / (4 * (10 + 20 + 5 + 15 + 25)))
    assert g.front_work == 1.0  # its one trial is its front


def test_the_rung_rule_replays_too():
    from search.engine.pruners import RungPruner

    # rungs at epochs 1 and 2 of 4 (eta 2); at epoch 1, B (0.3) is beaten by A (0.5): 1 of 2 ahead, quota 1
    assert replay_stops(trials(), RungPruner("maximize", epochs=4, eta=2))[:2] == [None, 1]


def test_minimise_and_bad_input():
    seq = [T("f", 10, [1.0, 0.5, 0.2]), T("f", 20, [1.0, 0.9, 0.8])]
    stops = replay_stops(seq, ParetoPruner("minimize", epochs=3, grace=1))
    assert stops == [None, 2]
    assert summarise(seq, stops, "minimize")["f"].front_stopped == 0  # the larger, worse one is off the front
    with pytest.raises(ValueError, match="2 trials but 1 stops"):
        summarise(seq, [None], "minimize")


def test_replay_orders_put_the_judges_first_or_the_budget_corners_last():
    ts = trials()  # f: 10, 20, 5, 15, 25 parameters (indices 0, 1, 2, 4, 5); g: 30 (index 3)
    assert replay_order(ts, "study") == [0, 1, 2, 3, 4, 5]
    assert replay_order(ts, "smallest-first") == [2, 0, 4, 1, 5, 3]
    # f's first two trials are 10 and 20: its budget corner is the 20 (index 1); g has one trial only
    assert budget_corners(ts) == [1]
    assert budget_corners(ts + [T("g", 3, [0.1, 0.1, 0.1, 0.1])]) == [1, 3]
    assert replay_order(ts, "budget-last") == [0, 2, 3, 4, 5, 1]
    with pytest.raises(ValueError, match="unknown replay order 'x'"):
        replay_order(ts, "x")


def test_smallest_first_lets_every_judge_finish_first():
    """In study order the large, worse trial comes before the small trial that beats it and
    trains to the end; smallest first, it is stopped at the grace epoch."""
    seq = [T("f", 100, [0.2, 0.3, 0.4, 0.5]), T("f", 10, [0.5, 0.6, 0.7, 0.8])]
    pruner = lambda: ParetoPruner("maximize", epochs=4, grace=2)  # noqa: E731
    assert replay_stops(seq, pruner()) == [None, None]
    ordered = [seq[i] for i in replay_order(seq, "smallest-first")]
    assert [t.params for t in ordered] == [10, 100] and replay_stops(ordered, pruner()) == [None, 2]


def test_rank_agreement_is_spearman_between_an_epoch_and_the_end():
    same = [T("f", 10, [0.1, 0.5]), T("f", 20, [0.2, 0.6]), T("f", 30, [0.3, 0.9])]
    flipped = [T("g", 10, [0.3, 0.5]), T("g", 20, [0.2, 0.6]), T("g", 30, [0.1, 0.9])]
    got = rank_agreement(same + flipped, 1)
    assert got["f"] == pytest.approx(1.0) and got["g"] == pytest.approx(-1.0)
    # the last epoch itself is not a judged epoch; too few trials or a constant column: nan
    assert math.isnan(rank_agreement(same, 2)["f"])
    assert math.isnan(rank_agreement(same[:2], 1)["f"])
    assert math.isnan(rank_agreement([T("f", n, [0.5, v]) for n, v in ((1, 0.1), (2, 0.2), (3, 0.3))], 1)["f"])


def test_false_stops_name_each_stopped_front_trial_and_its_judge():
    ts = trials()
    stops = replay_stops(ts, ParetoPruner("maximize", epochs=4, grace=2))
    got = false_stops(ts, stops, "maximize")
    # f's front: C, A, E; only E (index 4, 15 params) is stopped, at epoch 2, by A (0.6 against its 0.59)
    assert len(got) == 1
    w = got[0]
    assert (w.index, w.family, w.params, w.stop, w.at_stop, w.end, w.value) == (4, "f", 15, 2, 0.59, 0.9, 0.9)
    assert (w.judge, w.judge_params, w.judge_at_stop, w.judge_end) == (0, 10, 0.6, 0.8)
    # nothing stopped, nothing listed
    assert false_stops(ts, [None] * len(ts), "maximize") == []
    with pytest.raises(ValueError, match="6 trials but 1 stops"):
        false_stops(ts, [None], "maximize")


def test_a_false_stops_judge_is_one_that_trained_to_the_epoch():
    seq = [T("f", 10, [0.9, 0.9, 0.9]), T("f", 12, [0.5, 0.95, 0.99]), T("f", 20, [0.6, 0.7, 1.0])]
    # trial 1 stopped at epoch 1 (its curve up to there is all a later trial sees): trial 2's
    # stop at epoch 2 has only trial 0 (0.9 there) as its judge
    got = false_stops(seq, [None, 1, 2], "maximize")
    assert [(w.index, w.judge) for w in got] == [(1, 0), (2, 0)]
    assert got[1].judge_at_stop == 0.9 and got[0].judge_end == 0.9


def test_best_so_far_forgives_a_dip():
    dip = [T("f", 10, [0.5, 0.8, 0.8, 0.9]), T("f", 20, [0.5, 0.85, 0.6, 0.95])]
    # its dip at epoch 3 (0.6 against 0.8) stops the larger trial; judged on its best so far (0.85) it goes on
    assert replay_stops(dip, ParetoPruner("maximize", epochs=4, grace=2)) == [None, 3]
    best = best_so_far(dip, "maximize")
    assert best[1].curve == (0.5, 0.85, 0.85, 0.95) and best[1].value == 0.95
    assert replay_stops(best, ParetoPruner("maximize", epochs=4, grace=2)) == [None, None]
    low = best_so_far([T("f", 1, [3.0, 1.0, float("nan"), 2.0])], "minimize")[0]
    assert low.curve == (3.0, 1.0, 1.0, 1.0)
    assert math.isnan(best_so_far([T("f", 1, [float("nan"), 2.0])], "maximize")[0].curve[0])


def test_rung_trust_on_the_first_trials_and_on_all():
    # a family whose first three trials, far apart in size, rank the same at epoch 1 as at
    # the end; the two later ones, near the front, swap: the larger is behind at epoch 1
    # and ends best
    seq = [
        T("f", 10, [0.1, 0.2, 0.3]),
        T("f", 100, [0.5, 0.6, 0.7]),
        T("f", 1000, [0.7, 0.8, 0.9]),
        T("f", 120, [0.55, 0.6, 0.72]),
        T("f", 130, [0.52, 0.7, 0.8]),
    ]
    first = rung_trust(seq, 1, "maximize", first=3)["f"]
    every = rung_trust(seq, 1, "maximize")["f"]
    assert first == 1.0 and every < 1.0
    assert rung_trust(seq, 1, "maximize", first=5) == {"f": every}
