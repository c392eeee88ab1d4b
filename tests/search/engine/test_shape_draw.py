"""`--shape-draw`: a family's widths and depth drawn as Optuna parameters over the range
each may take ("random"), or as positions in that range ("modelled", `PositionDraw`).
Under a target size each range moves from trial to trial, and Optuna's GPSampler models
only the parameters whose distribution every trial of its study shares: with "random" it
models the target size and the learning rate only (docs/benchmarks.md §19, "The compute
target with hindsight"); with "modelled" it models the shape too."""

import math

import optuna
import pytest

from search.engine.prepare import prepare
from search.engine.sampling import SIZE_PARAM, make_sampler
from search.engine.sampling.optuna_draw import POSITION_SUFFIX, PositionDraw, at_position
from search.engine.specs import RunSpec
from search.spaces import min_params, smallest_config, suggest_config
from storage.records import TrialRecord
from tests.search.engine.proposing import drive

BUDGET = 30_000


@pytest.fixture(scope="module")
def prep():
    return prepare(RunSpec(spaces=("hourglass",), task="digits-denoise", budget=BUDGET))


def build(prep, trials, sampler="gp", seed=0, **kw):
    return make_sampler(
        sampler, prep.spaces, prep.io, BUDGET, prep.count, direction="maximize", seed=seed, trials=trials, **kw
    )


@pytest.mark.parametrize(
    "low,high,log,step",
    [
        (4, 2500, True, 1),
        (785, 4500, False, 1),
        (1, 40, False, 1),
        (8, 64, False, 8),
        (0.01, 0.5, True, None),
        (0.0, 1.0, False, None),
    ],
)
def test_at_position_spans_the_range_in_order(low, high, log, step):
    """Position 0 is the range's low end, 1 its high end (on its step grid), values never
    leave the range, rise with the position, stay on the step grid, and a log range puts
    the middle at the geometric mean."""
    us = [i / 200 for i in range(201)]
    vs = [at_position(u, low, high, log, step) for u in us]
    assert vs[0] == low and vs[-1] == (high if step is None else low + ((high - low) // step) * step)
    assert all(low <= v <= high for v in vs) and vs == sorted(vs)
    if step is not None:
        assert all((v - low) % step == 0 for v in vs)
        assert len(set(vs)) > min(20, (high - low) // step)  # no value skipped by a coarse mapping
    mid = at_position(0.5, low, high, log, step)
    want = math.sqrt(low * high) if log else (low + high) / 2
    assert abs(mid - want) <= (step or 0) / 2 + 1e-9 * max(1.0, abs(want))


def test_at_position_refuses_a_position_outside_0_1():
    with pytest.raises(ValueError):
        at_position(1.5, 1, 10, False, 1)
    with pytest.raises(ValueError):
        at_position(0.5, 10, 1, False, 1)


def test_a_position_draw_lands_on_the_target_size(prep):
    """Positions change what is drawn, not where it lands: each model fits the budget and
    lands at or just under its target size, as with the plain draw."""
    space, count = prep.spaces["hourglass"], lambda c: prep.count("hourglass", c)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    lo, hi = math.log10(min_params(space, prep.io, count)), math.log10(BUDGET)
    for target in [10 ** (lo + (hi - lo) * k / 24) for k in range(25)]:
        t = study.ask()
        cfg = suggest_config(space, prep.io, BUDGET, count, PositionDraw(t, "hourglass"), target)
        n = count(cfg)
        assert 0.7 * target <= n <= target * (1 + 1e-9), (target, n, cfg)
        assert {k for k in t.params} == {f"hourglass.{k}{POSITION_SUFFIX}" for k in ("L", "d_z", "d_h")} | {
            "hourglass.lr",
            "hourglass.fixed_w_in",
        }  # choices as they were
        assert all(
            t.distributions[k] == optuna.distributions.FloatDistribution(0.0, 1.0)
            for k in t.params
            if k.endswith(POSITION_SUFFIX)
        )


@pytest.mark.parametrize("shape_draw,modelled", [("random", False), ("modelled", True)])
def test_the_gp_models_the_shape_only_when_drawn_as_positions(prep, shape_draw, modelled):
    """What the GP sampler models is the study's intersection search space: the target size
    and the learning rate with "random" (each width's range moves with the target), and
    every width and depth as well with "modelled"."""
    p = build(prep, 20, shape_draw=shape_draw, corners="none")
    drive(p, 6)
    shared = optuna.search_space.intersection_search_space(p.study.get_trials(deepcopy=False))
    dims = {f"hourglass.{k}{POSITION_SUFFIX}" for k in ("L", "d_z", "d_h")}
    assert {f"hourglass.{SIZE_PARAM}", "hourglass.lr"} <= set(shared)
    assert (dims <= set(shared)) is modelled
    assert not any(f"hourglass.{k}" in shared for k in ("L", "d_z", "d_h"))


@pytest.mark.parametrize("sampler", ["gp", "tpe", "random", "nsga2"])
def test_modelled_corners_are_the_smallest_model_and_one_at_the_budget(prep, sampler):
    """The corners still come first with positions: the smallest model (every position 0;
    its free dimension, lr, drawn like any trial's) and a model at the budget; every later
    proposal fits the budget."""
    qs = drive(build(prep, 12, sampler=sampler, shape_draw="modelled"), 8)
    space, count = prep.spaces["hourglass"], lambda c: prep.count("hourglass", c)
    assert space.free == ("fixed_w_in", "lr")
    sized = lambda c: {k: v for k, v in c.items() if k not in space.free}  # noqa: E731
    assert sized(qs[0].config) == sized(smallest_config(space, prep.io, count))
    assert 0.7 * BUDGET < qs[1].params <= BUDGET
    assert all(q.params <= BUDGET for q in qs)


def test_a_modelled_study_resumes_with_its_positions(prep):
    """A resumed study is taught its past trials' positions (the recorded Optuna draws) and
    proposes from them; the replayed study's GP models the shape."""
    whole = drive(build(prep, 20, shape_draw="modelled", corners="none"), 6)
    resumed = build(prep, 20, shape_draw="modelled", corners="none")
    resumed.replay(
        [
            TrialRecord(
                i,
                q.family,
                q.config,
                q.params,
                "complete",
                [0],
                {"val_psnr": (10.0 + math.log10(q.params), None, 1)},
                q.optuna,
            )
            for i, q in enumerate(whole)
        ],
        lambda r: r.metrics["val_psnr"][0],
    )
    more = drive(resumed, 2)
    shared = optuna.search_space.intersection_search_space(resumed.study.get_trials(deepcopy=False))
    assert f"hourglass.d_z{POSITION_SUFFIX}" in shared
    assert len(resumed.study.trials) == 8 and all(q.params <= BUDGET for q in more)


def test_search_run_stores_its_shape_draw(cli):
    """From the command line: `--shape-draw modelled` is stored with the study and its
    trials' recorded draws hold the positions; without the flag a 3-trial study draws
    at random (below MODELLED_FROM trials) and says so in its settings."""
    from storage import Store

    for study, flags, want in (("pos", ("--shape-draw", "modelled"), "modelled"), ("plain", (), "random")):
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
            study,
            "--trials",
            "3",
            *flags,
        )
        assert code == 0, err
        store = Store("sqlite:///search.db")
        assert store.get_study(study).settings["shape_draw"] == want
        third = store.trials(study)[2]
        assert (f"hourglass.d_h{POSITION_SUFFIX}" in third.optuna["params"]) is (want == "modelled")
        assert ("hourglass.d_h" in third.optuna["params"]) is (want == "random")
        store.close()


def test_search_run_models_the_shape_of_a_comparison_by_default(cli):
    """From the command line: a study of two families models each family's shape without
    the flag, at a count where one family alone would draw at random."""
    from storage import Store

    code, out, err = cli(
        "run",
        "--space",
        "hourglass,conventional",
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
        "pair",
        "--trials",
        "6",
        "--seed-checks",
        "0",  # a check trains a configuration drawn before: it has no draw of its own
    )
    assert code == 0, err
    store = Store("sqlite:///search.db")
    assert store.get_study("pair").settings["shape_draw"] == "modelled"
    drawn = [name for q in store.trials("pair") for name in q.optuna["params"]]
    assert any(name.endswith(POSITION_SUFFIX) and name.startswith("conventional.") for name in drawn)
    assert not any(name in ("hourglass.d_h", "conventional.d_h") for name in drawn)
    store.close()


@pytest.mark.parametrize(
    "families,trials,sampler,given,want",
    [
        (("hourglass",), 40, None, None, "modelled"),  # one family, 40 trials: its GP models the shape
        (("hourglass",), 39, None, None, "random"),
        (("hourglass", "conventional"), 40, None, None, "modelled"),  # several families: at any count
        (("hourglass", "conventional"), 4, None, None, "modelled"),
        (("hourglass", "conventional"), 80, None, None, "modelled"),
        (("hourglass", "conventional"), 40, "tpe", None, "random"),
        (("hourglass",), 100, "tpe", None, "random"),  # measured for the GP only
        (("hourglass",), 100, "grid", None, "random"),
        (("hourglass",), 10, None, "modelled", "modelled"),  # as given
        (("hourglass",), 100, None, "random", "random"),
    ],
)
def test_a_studys_default_shape_draw_follows_its_families_and_their_trials(families, trials, sampler, given, want):
    """`policies.shape_draw_for`: "modelled" for the GP in a study of several families at
    any count (each family's front and the verdicts better, docs/benchmarks.md §19, "Below
    40 trials a family") and in a study of one family given at least MODELLED_FROM trials;
    "random" for one family below that, where it was mixed, and for the other samplers; a
    given --shape-draw as given."""
    spec = RunSpec(
        spaces=families, task="digits-denoise", budget=BUDGET, trials=trials, sampler=sampler, shape_draw=given
    )
    assert spec.shape_draw == want
