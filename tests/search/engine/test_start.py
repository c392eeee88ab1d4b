"""A cheap start: `--start ramp` (each family's random start aims under a rising cap) and
`--corners last` (the budget models as the study's last trials), issue 30's compute target."""

import math

import pytest

from search.engine.prepare import prepare
from search.engine.sampling import SIZE_PARAM, Proposal, make_sampler
from search.engine.sampling.policies import ramp_target, startup_trials
from search.engine.specs import RunSpec
from search.spaces import min_params
from storage.records import TrialRecord
from tests.search.engine.proposing import drive

BUDGET = 30_000
FAMILIES = ("hourglass", "conventional")


@pytest.fixture(scope="module")
def prep():
    return prepare(RunSpec(spaces=FAMILIES, task="digits-denoise", budget=BUDGET))


def build(prep, trials, sampler="tpe", seed=0, **kw):
    return make_sampler(
        sampler, prep.spaces, prep.io, BUDGET, prep.count, direction="maximize", seed=seed, trials=trials, **kw
    )


def target(q):
    return q.optuna["params"][f"{q.family}.{SIZE_PARAM}"]


def record(number, q):
    return TrialRecord(
        number,
        q.family,
        q.config,
        q.params,
        "complete",
        [0],
        {"val_psnr": (10.0 + math.log10(q.params), None, 1)},
        q.optuna,
    )


def size_range(prep, fam):
    lo = math.log10(min_params(prep.spaces[fam], prep.io, lambda c: prep.count(fam, c)))
    return lo, math.log10(BUDGET)


def test_startup_trials_and_ramp_target():
    assert [startup_trials(t) for t in (1, 16, 20, 40, 100)] == [4, 4, 5, 10, 10]
    assert ramp_target(3.0, 5.0, 0, 4, 1.0) == pytest.approx(3.5)  # the first cap: a quarter of the range
    assert ramp_target(3.0, 5.0, 3, 4, 1.0) == pytest.approx(5.0)  # the last: the budget
    assert ramp_target(3.0, 5.0, 9, 4, 0.5) == pytest.approx(4.0)  # past the start: the whole range
    assert ramp_target(3.0, 5.0, 1, 4, 0.0) == 3.0
    for bad in [dict(n=0), dict(k=-1), dict(u=1.5), dict(high=2.0)]:
        args = dict(low=3.0, high=5.0, k=0, n=4, u=0.5) | bad
        with pytest.raises(ValueError):
            ramp_target(**args)


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["tpe", "gp"])
def test_ramp_keeps_each_familys_start_under_its_rising_cap(prep, sampler):
    """Each family's k-th proposal of its random start (k counted in its family, its
    smallest corner first) aims at or under lo + (hi - lo) (k + 1) / n; after the start the
    sampler draws over the whole range again."""
    trials = 24  # 12 a family: a start of 4
    p = build(prep, trials, sampler=sampler, start="ramp", corners="smallest")
    qs = drive(p, trials)
    n = startup_trials(trials // 2)
    for fam in FAMILIES:
        lo, hi = size_range(prep, fam)
        mine = [q for q in qs if q.family == fam]
        assert mine[0].params == 10**lo or math.isclose(mine[0].params, 10**lo)  # the smallest corner
        for k, q in enumerate(mine[1:n], start=1):
            assert lo <= target(q) <= lo + (hi - lo) * (k + 1) / n + 1e-12, (fam, k, target(q))

    def start_targets(seed, **kw):
        got = drive(build(prep, trials, sampler=sampler, seed=seed, corners="smallest", **kw), 2 * n)
        return [target(q) for q in got if q.optuna["params"].get(f"{q.family}.{SIZE_PARAM}")]

    # the ramped start aims lower than the spread one: over 3 seeds (one seed's spread draw
    # may happen to aim as low)
    ramped = sum(sum(start_targets(seed, start="ramp")) for seed in range(3))
    firsts = sum(sum(start_targets(seed)) for seed in range(3))
    assert ramped < firsts


def test_ramp_draws_the_same_targets_after_a_resume(prep):
    """The ramp's draw is seeded by the seed, the family and the trial's index in it: a
    study resumed after three trials proposes what the uninterrupted one did next."""
    whole = drive(build(prep, 24, start="ramp", corners="none"), 6)
    resumed = build(prep, 24, start="ramp", corners="none")
    resumed.replay([record(i, q) for i, q in enumerate(whole[:3])], lambda r: r.metrics["val_psnr"][0])
    again = drive(resumed, 3)
    assert [(q.family, target(q)) for q in again] == [(q.family, target(q)) for q in whole[3:]]


@pytest.mark.parametrize("sampler", ["tpe", "gp"])
def test_last_corners_are_the_studys_last_trials(prep, sampler):
    """`--corners last`: the smallest models first, no budget target before the study's
    last trials, and there each family's model at the budget, once."""
    trials = 12
    qs = drive(build(prep, trials, sampler=sampler, corners="last"), trials)
    fams = {fam: size_range(prep, fam) for fam in FAMILIES}
    assert [q.family for q in qs[:2]] == list(FAMILIES)
    for q in qs[:2]:
        assert math.isclose(target(q), fams[q.family][0])  # the smallest first
    at_budget = [i for i, q in enumerate(qs) if math.isclose(target(q), fams[q.family][1])]
    assert at_budget == [trials - 2, trials - 1]
    assert sorted(qs[i].family for i in at_budget) == sorted(FAMILIES)
    assert all(BUDGET * 0.7 < qs[i].params <= BUDGET for i in at_budget)
    assert [q.unpruned for q in qs] == [i in at_budget for i in range(trials)]  # kept from the pruner


def test_last_corners_resume_without_proposing_a_budget_model_twice(prep):
    """A study resumed after one family's budget model was proposed proposes the other's
    only; one resumed before either proposes both."""
    trials = 8
    whole = drive(build(prep, trials, corners="last"), trials)
    for cut in (trials - 1, trials - 2):
        resumed = build(prep, trials, corners="last")
        resumed.replay([record(i, q) for i, q in enumerate(whole[:cut])], lambda r: r.metrics["val_psnr"][0])
        rest = drive(resumed, trials - cut)
        assert [(q.family, target(q)) for q in rest] == [(q.family, target(q)) for q in whole[cut:]]


def test_search_run_stores_its_start_and_corners(cli):
    """From the command line: `--start ramp --corners last` are stored with the study; the
    first trial is the smallest model and, with two trials, the last one the budget's."""
    from storage import Store

    code, out, err = cli(
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "20K",
        "--epochs",
        "1",
        "--max-train-samples",
        "128",
        "--no-report",
        "--study",
        "cheap",
        "--trials",
        "2",
        "--start",
        "ramp",
        "--corners",
        "last",
        "--seed-checks",
        "0",  # two trials and nothing more (whether a check fits depends on the trials' seconds)
    )
    assert code == 0, err
    store = Store("sqlite:///search.db")
    settings = store.get_study("cheap").settings
    assert (settings["start"], settings["corners"]) == ("ramp", "last")
    first, last = store.trials("cheap")
    prep = prepare(RunSpec(spaces=("hourglass",), task="digits-denoise", budget=20_000))
    assert first.params == min_params(prep.spaces["hourglass"], prep.io, lambda c: prep.count("hourglass", c))
    assert 20_000 * 0.7 < last.params <= 20_000
    store.close()


def test_a_budget_model_trained_last_is_not_pruned():
    """With `--corners last` and the Pareto pruner, on a scripted executor where every trial
    is worse than the one before (so the smallest model, first, beats every larger one at
    every epoch): the other trials are stopped, the budget model trained last is not, and
    its note says why."""
    from core.trials import TrainSettings
    from search.engine.study import StudyLoop
    from tests.search.fakes import CurveExecutor, MemoryStore, RecordingProgress

    def curve(spec, epochs=9):
        return [(20.0 - spec.number) * e / epochs for e in range(1, epochs + 1)]

    spec = RunSpec(
        spaces=("hourglass",),
        task="digits-denoise",
        budget=20_000,
        trials=6,
        study="c",
        pruner="pareto",
        corners="last",
        train=TrainSettings(epochs=9),
    )
    store, executor = MemoryStore(), CurveExecutor(curve)
    loop = StudyLoop(spec, store, RecordingProgress(), prepare(spec), executor=executor)
    executor.on_epoch = loop.on_epoch
    loop.run()
    rows = store.trials("c")
    assert [t.status for t in rows] == ["complete"] + ["pruned"] * 4 + ["complete"]
    assert 20_000 * 0.7 < rows[-1].params <= 20_000 and "not pruned" in rows[-1].note
    assert all(t.note is None for t in rows[:-1])


def test_a_retried_budget_model_stays_unpruned():
    """A budget model trained last that fails is retried unpruned, live and after a kill
    (the stored note says so; the resumed study reads it back)."""
    from core.trials import TrainSettings
    from search.engine.retries import resume_job, retry_job
    from search.engine.sampling import UNPRUNED_NOTE

    last = Proposal("hourglass", {"L": 1}, 20_000, None, note=UNPRUNED_NOTE, unpruned=True)
    job = retry_job(7, last, TrainSettings(), 1, "failed", (0,), failed=True)
    assert job.proposal.unpruned and UNPRUNED_NOTE in job.proposal.note
    plain = retry_job(7, Proposal("hourglass", {"L": 1}, 20_000), TrainSettings(), 1, "failed", (0,), failed=True)
    assert not plain.proposal.unpruned and UNPRUNED_NOTE not in plain.proposal.note
    for note, kept in [
        (job.proposal.note, True),
        (UNPRUNED_NOTE, True),
        ("retry 1 of trial 3: failed", False),
        (None, False),
    ]:
        rec = TrialRecord(9, "hourglass", {"L": 1}, 20_000, "interrupted", [0], {}, None, note=note)
        assert resume_job(rec, TrainSettings()).proposal.unpruned is kept
