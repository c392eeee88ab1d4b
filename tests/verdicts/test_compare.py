"""Which shape wins: the statistics of verdicts/compare.py on hand-built data with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from reports.front_volumes import front_volumes
from reports.verdict_tables import verdicts_frame
from tests.reports.frames import make_trials, trial
from verdicts.candidates import candidates, default_levels
from verdicts.compare import compare_at
from verdicts.repeats import recomputed


def frame(rows):
    """rows: (number, family, params, mean, std, runs)."""
    return make_trials([trial(n, f, p, m, psnr_std=s, n_runs=r) for n, f, p, m, s, r in rows])


def verdicts(df, budgets, direction="maximize", families=None, **kw):
    """The selection and seed-noise mechanics on tiny hand-built studies: the "seed" method
    and no thin rule unless a test asks otherwise (tests/verdicts/test_uncertainty.py has
    the search-luck side on synthetic searches)."""
    kw = {"method": "seed", "min_near": 0} | kw
    return compare_at(candidates(df, "psnr", families), budgets, direction, **kw)


def test_a_family_that_dominates_by_a_wide_margin_is_better():
    df = frame(
        [
            (0, "a", 1000, 30.0, 0.1, 3),
            (1, "a", 5000, 32.0, 0.1, 3),
            (2, "b", 1000, 20.0, 0.1, 3),
            (3, "b", 5000, 21.0, 0.1, 3),
        ]
    )
    v1, v2 = verdicts(df, [1000, 5000])
    assert (v1.winner, v1.runner_up, v1.status) == ("a", "b", "better") and v1.margin == pytest.approx(10.0)
    assert 9.0 < v1.margin_low < 10.0 < v1.margin_high < 11.0
    assert v2.margin == pytest.approx(11.0) and v2.status == "better" and "a better by 11" in v2.text
    a = next(r for r in v2.families if r.family == "a")
    assert (a.number, a.params, a.value, a.runs) == (1, 5000.0, 32.0, 3) and a.low < 32.0 < a.high


def test_two_identical_families_are_not_distinguishable():
    rows = [(0, "a", 1000, 25.0, 1.0, 3), (1, "a", 4000, 27.0, 1.0, 3)]
    df = frame(rows + [(n + 2, "b", p, m, s, r) for n, _, p, m, s, r in rows])
    for v in verdicts(df, [1000, 4000]):
        assert v.status == "not distinguishable" and v.margin == 0.0
        assert v.margin_low < 0.0 < v.margin_high
        assert "not distinguishable" in v.text


def test_equivalence_where_the_interval_lies_inside_the_margin():
    """`--margin D`: the answer is "equivalent within ±D" where the difference's interval
    lies inside (-D, D), whichever family leads; a difference beyond D stays "better", and
    an interval wider than the margin stays "not distinguishable"."""
    close = frame([(0, "a", 1000, 25.05, 0.1, 5), (1, "b", 1000, 25.0, 0.1, 5)])
    v = verdicts(close, [1000])[0]
    assert v.status == "not distinguishable"
    (eq,) = verdicts(close, [1000], equivalence=0.5)
    assert eq.status == "equivalent" and -0.5 < eq.margin_low and eq.margin_high < 0.5
    assert "equivalent within ±0.5" in eq.text and "a ahead of b by 0.05" in eq.text
    far = frame([(0, "a", 1000, 30.0, 0.1, 5), (1, "b", 1000, 25.0, 0.1, 5)])
    assert verdicts(far, [1000], equivalence=0.5)[0].status == "better"
    noisy = frame([(0, "a", 1000, 25.05, 3.0, 3), (1, "b", 1000, 25.0, 3.0, 3)])
    assert verdicts(noisy, [1000], equivalence=0.5)[0].status == "not distinguishable"
    # better by less than D: the difference does not matter at this margin
    small = frame([(0, "a", 1000, 25.2, 0.01, 5), (1, "b", 1000, 25.0, 0.01, 5)])
    assert verdicts(small, [1000])[0].status == "better"
    assert verdicts(small, [1000], equivalence=0.5)[0].status == "equivalent"


def test_crossing_fronts_change_the_winner_with_the_budget():
    df = frame(
        [
            (0, "a", 1000, 20.0, 0.1, 4),
            (1, "a", 100_000, 22.0, 0.1, 4),
            (2, "b", 3000, 15.0, 0.1, 4),
            (3, "b", 50_000, 30.0, 0.1, 4),
        ]
    )
    small, middle, large = verdicts(df, [1000, 10_000, 100_000])
    assert small.status == "only one family" and small.winner == "a"
    assert middle.winner == "a" and middle.status == "better"  # b's small model is worse
    assert large.winner == "b" and large.status == "better" and large.margin == pytest.approx(8.0)


def test_minimize_direction():
    df = frame([(0, "a", 1000, 0.20, 0.01, 3), (1, "b", 1000, 0.35, 0.01, 3)])
    (v,) = verdicts(df, [1000], direction="minimize")
    assert v.winner == "a" and v.margin == pytest.approx(0.15) and v.status == "better"


def test_single_runs_give_no_interval():
    df = frame([(0, "a", 1000, 30.0, np.nan, 1), (1, "b", 1000, 20.0, np.nan, 1)])
    (v,) = verdicts(df, [1000])
    assert v.status == "single run" and v.margin_low is None and "single run" in v.text
    assert all(r.low is None and r.high is None for r in v.families)


def test_the_interval_accounts_for_the_selection():
    """Two equal noisy configurations: the best of them is, in expectation, above either
    one's mean, so the interval of the selected value sits above the shared mean."""
    df = frame([(0, "a", 1000, 10.0, 2.0, 3), (1, "a", 2000, 10.0, 2.0, 3)])
    (v,) = verdicts(df, [2000], draws=20_000)
    a = v.families[0]
    assert a.value == 10.0 and (a.low + a.high) / 2 > 10.2


@pytest.mark.parametrize("seed", range(5))
def test_swapping_the_families_swaps_the_verdict(seed):
    rng = np.random.default_rng(seed)
    rows = [(i, "ab"[i % 2], float(rng.integers(1000, 100_000)), float(rng.normal(20, 3)), 0.5, 3) for i in range(12)]
    df = frame(rows)
    swapped = frame([(n, {"a": "b", "b": "a"}[f], p, m, s, r) for n, f, p, m, s, r in rows])
    budgets = default_levels(candidates(df, "psnr"), 4)
    for v, w in zip(verdicts(df, budgets, seed=1), verdicts(swapped, budgets, seed=1)):
        flip = {"a": "b", "b": "a", None: None}
        assert (w.winner, w.runner_up, w.status) == (flip[v.winner], flip[v.runner_up], v.status)
        if v.margin is not None:
            assert w.margin == pytest.approx(v.margin)


def test_levels_fronts_and_the_table():
    df = frame([(0, "a", 1000, 30.0, 0.1, 3), (1, "b", 100_000, 20.0, 0.1, 3), (2, "a", 10_000, 31.0, np.nan, 1)])
    cands = candidates(df, "psnr")
    assert default_levels(cands, 3) == [1000.0, 10_000.0, 100_000.0]
    vols, ref = front_volumes(cands, "maximize")
    assert [f.family for f in vols] == ["a", "b"] and vols[0].value > vols[1].value > 0
    assert vols[0].low is None and vols[1].low is not None  # a has a single-run configuration
    table = verdicts_frame(verdicts(df, [1000.0, 100_000.0]), "psnr")
    assert list(table.columns[:3]) == ["budget", "family", "psnr"] and len(table) == 4
    with pytest.raises(ValueError):
        verdicts(df, [1000], confidence=1.5)


def test_the_front_difference_has_an_interval_that_can_exclude_zero():
    from reports.front_volumes import front_difference

    df = frame(
        [
            (0, "a", 1000, 30.0, 0.1, 3),
            (1, "a", 10_000, 32.0, 0.1, 3),
            (2, "b", 1000, 20.0, 0.1, 3),
            (3, "b", 10_000, 21.0, 0.1, 3),
        ]
    )
    d = front_difference(front_volumes(candidates(df, "psnr"), "maximize", method="seed")[0])
    assert (d.first, d.second) == ("a", "b") and d.difference > 0 and 0 < d.low <= d.difference <= d.high
    same = frame([(0, "a", 1000, 30.0, 0.5, 3), (1, "b", 1000, 30.0, 0.5, 3)])
    d = front_difference(front_volumes(candidates(same, "psnr"), "maximize")[0])
    assert d.difference == 0 and d.low < 0 < d.high


def test_an_exact_recomputation_is_one_configuration():
    """A trial with an earlier trial's study, family, config and seeds (a revisit trained
    again) is dropped from the candidates; the same config with other seeds (a seed check)
    adds its runs to the first trial's configuration; in another study or of another family
    it is a configuration of its own, and so is everything in a frame without seeds."""
    cfg = {"d_z": 65, "d_h": 4, "L": 1, "lr": 5e-3}
    rows = [
        trial(0, "a", 1000, 20.0, psnr_std=0.1, n_runs=3, config=cfg),
        trial(1, "a", 5000, 25.0, psnr_std=0.1, n_runs=3),
        trial(2, "a", 1000, 20.0, psnr_std=0.1, n_runs=3, config=dict(cfg)),  # the recomputation
        trial(3, "a", 1000, 20.5, psnr_std=0.1, n_runs=3, config=cfg),  # other seeds
        trial(4, "b", 1000, 20.0, psnr_std=0.1, n_runs=3, config=cfg),
    ]  # another family
    df = make_trials(rows)
    df["seeds"] = [[1, 2, 3], [4, 5, 6], [1, 2, 3], [7, 8, 9], [1, 2, 3]]
    assert recomputed(df).tolist() == [False, False, True, False, False]
    assert recomputed(df.iloc[::-1]).tolist() == [False, False, True, False, False][::-1]  # by number, not row order
    c = candidates(df, "psnr")
    assert c["a"].numbers.tolist() == [0, 1] and c["b"].numbers.tolist() == [4]
    assert c["a"].runs.tolist() == [6, 3] and c["a"].means[0] == pytest.approx(20.25)
    # six runs: within-trial sum of squares 2 * 2 * 0.1^2, between 3 * 0.25^2 * 2
    assert c["a"].stds[0] == pytest.approx(np.sqrt((4 * 0.01 + 6 * 0.0625) / 5))
    in_two = candidates(df.assign(study=["s", "s", "s", "t", "s"]), "psnr")
    assert in_two["a"].numbers.tolist() == [0, 1, 3]
    other = df.assign(study=["s", "s", "t", "s", "s"])  # pooled studies: another study's trial counts
    assert not recomputed(other).any()
    assert not recomputed(df.drop(columns="seeds")).any()
    assert candidates(df.drop(columns="seeds"), "psnr")["a"].numbers.tolist() == [0, 1, 2, 3]


def test_recomputations_do_not_thin_a_level_less():
    """Three copies of one model near a level are one configuration there: with the thin
    rule's two configurations needed, the level is too thin once the copies are merged."""
    cfg = {"d_z": 65, "d_h": 4, "L": 1, "lr": 5e-3}
    rows = [trial(n, "a", 900, 20.0, psnr_std=0.1, n_runs=3, config=cfg) for n in range(3)]
    rows += [trial(3, "b", 900, 10.0, psnr_std=0.1, n_runs=3), trial(4, "b", 950, 10.5, psnr_std=0.1, n_runs=3)]
    df = make_trials(rows)
    df["seeds"] = [[1, 2, 3]] * 3 + [[4, 5, 6], [7, 8, 9]]
    (v,) = verdicts(df, [1000], min_near=2)
    assert v.status == "too thin"
    (v,) = verdicts(df.drop(columns="seeds"), [1000], min_near=2)  # counted three times, it is not
    assert v.status == "better"


def test_a_value_resting_on_one_configuration_far_above_the_rest_is_too_thin_with_max_gap():
    """`max_gap` (in seed-noise stds): family a's best within 5K (32.0) is 4 dB above its
    next (28.0) with noise 0.1, 40 stds; b's steps are 1 std apart. With max_gap 20 a's
    value there rests on one configuration: "too thin", naming the trial and the fall; at
    1K a has a single configuration ("it is the only one"). Without the rule (the default)
    both budgets get an interval."""
    rows = [(0, "a", 1000, 28.0, 0.1, 3), (1, "a", 4000, 32.0, 0.1, 3)]
    rows += [(2 + i, "b", p, 27.0 + 0.1 * i, 0.1, 3) for i, p in enumerate((900, 1500, 2500, 3500, 4500))]
    df = frame(rows)
    kw = {"estimate": "best"}
    plain = verdicts(df, [1000, 5000], **kw)
    assert [v.status for v in plain] == ["better", "better"]
    small, large = verdicts(df, [1000, 5000], max_gap=20.0, **kw)
    assert large.status == "too thin" and "a's value rests on one configuration (trial #1;" in large.text
    assert "falls by 4" in large.text
    a = next(r for r in large.families if r.family == "a")
    assert a.thin.kind == "one" and a.thin.gap == pytest.approx(4.0) and a.low is None
    assert small.status == "too thin" and "it is the only one" in small.text
    assert verdicts(df, [5000], max_gap=50.0, **kw)[0].status == "better"  # 40 stds is within 50


@pytest.mark.parametrize(
    "settings, fixed",
    [
        ({"spread": "size", "corners": "both"}, True),
        ({"spread": "size", "corners": "smallest"}, True),
        ({"spread": "size", "corners": "last"}, True),  # the smallest first, the budget model last
        ({"spread": "size", "corners": "none"}, False),
        ({"spread": "none", "corners": "both"}, False),  # no size targets: no corners visited
        ({"sampler": "grid", "spread": "size", "corners": "both"}, False),  # a grid trains what it lists
        ({}, False),  # a study of an older version, or one written by hand
        (None, False),
    ],
)
def test_the_smallest_model_is_fixed_where_the_search_trains_it_by_design(settings, fixed):
    from verdicts.candidates import smallest_by_design

    assert smallest_by_design(settings) is fixed


def test_candidates_fix_the_configurations_of_each_familys_smallest_trial():
    df = make_trials(
        [
            trial(0, "a", 100, 10.0),
            trial(1, "a", 100, 12.0, config={"lr": 5e-3}),
            trial(2, "a", 300, 13.0),
            trial(3, "a", 500, 14.0),
            trial(4, "b", 50, status="pruned"),
            trial(5, "b", 200, 11.0),
        ]
    )
    c = candidates(df, "psnr", smallest_fixed=True)
    assert list(c["a"].fixed) == [True, True, False, False]  # both learning rates of the 100-parameter model
    assert list(c["b"].fixed) == [False]  # b's smallest trial (50) was pruned: nothing of it is fixed
    assert candidates(df, "psnr")["a"].fixed is None


def test_the_normal_form_narrows_an_interval_that_a_few_resamples_set():
    """A family whose best configuration within the budget stands well above its next:
    the resamples that miss it ((7/8)^8, about a third of them, with 8 configurations) set
    the symmetric percentile's reach; the normal form reads the draws' standard deviation,
    is narrower, and is still centred on the estimate."""
    rows = [(i, "a", 1000 + 100 * i, 20.0 + 0.05 * i, 0.05, 2) for i in range(7)] + [(7, "a", 2000, 21.0, 0.05, 2)]
    rows += [(8 + i, "b", 1000 + 100 * i, 20.2 + 0.05 * i, 0.05, 2) for i in range(8)]
    df = frame(rows)
    (sym,) = verdicts(df, [2000], method="trials")
    (normal,) = verdicts(df, [2000], method="trials", form="normal")
    assert sym.margin == normal.margin == pytest.approx(21.0 - 20.55)
    assert normal.margin_high - normal.margin_low < sym.margin_high - sym.margin_low
    assert (normal.margin_low + normal.margin_high) / 2 == pytest.approx(normal.margin)
