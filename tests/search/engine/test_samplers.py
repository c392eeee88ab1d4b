"""Samplers on their own: the grid and every registered Optuna sampler (no study loop)."""

import math

import pytest

from core.errors import UserError
from search.engine.prepare import prepare
from search.engine.sampling import SAMPLERS, GridSampler, OptunaSampler, Proposal, Rejection, make_sampler
from search.engine.sampling.policies import DEFAULT_SIZE_SCALE, size_objective
from search.engine.specs import RunSpec
from storage.records import TrialRecord

BUDGET = 30_000
OPTUNA = [name for name in SAMPLERS.names() if name != "grid"]


@pytest.fixture(scope="module")
def prep():
    return prepare(RunSpec(spaces=("hourglass", "conventional"), task="digits-denoise", budget=BUDGET))


def build(prep, sampler, seed=0, budget=BUDGET):
    return make_sampler(sampler, prep.spaces, prep.io, budget, prep.count, direction="maximize", seed=seed, trials=20)


def record(number, p, status="complete", value=None):
    metrics = {"val_psnr": (value, None, 1)} if value is not None else {}
    return TrialRecord(number, p.family, p.config, p.params, status, [0], metrics, getattr(p, "optuna", None))


def test_every_name_builds_its_proposer(prep):
    assert set(SAMPLERS.names()) >= {"tpe", "nsga2", "random", "grid"}
    for name in OPTUNA:
        assert isinstance(build(prep, name), OptunaSampler)
    assert isinstance(build(prep, "grid"), GridSampler)
    with pytest.raises(
        UserError,
        match="unknown sampler 'cma'; known: auto, auto-cond, gp, gp-cond, grid, nsga2, random, tpe, tpe-group",
    ):
        build(prep, "cma")
    with pytest.raises(UserError, match="unknown sampler"):
        RunSpec(spaces=("hourglass",), task="digits-denoise", budget=BUDGET, sampler="cma")


@pytest.mark.parametrize("sampler", OPTUNA)
def test_optuna_proposals_are_within_budget_with_exact_counts(prep, sampler):
    proposer = build(prep, sampler)
    seen = []
    for _ in range(24):
        p = proposer.ask()
        assert isinstance(p, (Proposal, Rejection))
        if isinstance(p, Rejection):
            proposer.reject(p)
            continue
        assert p.family in ("hourglass", "conventional")
        assert p.params == prep.count(p.family, p.config) <= BUDGET
        assert prep.families[p.family].shape_violation(p.config, prep.io) is None
        proposer.tell(p, 10.0 + math.log(p.params), p.params)
        seen.append(p)
    assert len(seen) >= 20 and {p.family for p in seen} == {"hourglass", "conventional"}
    done = [t.values for t in proposer.study.trials if t.values is not None]
    told = [[size_objective(p.params, DEFAULT_SIZE_SCALE), 10.0 + math.log(p.params)] for p in seen]
    # and a revisit of a trained configuration answered with what the first was told (--revisit answer)
    assert len(done) == len(told) + proposer.answered and all(v in told for v in done)


@pytest.mark.parametrize("sampler", OPTUNA)
def test_optuna_replay_teaches_a_fresh_proposer_the_past(prep, sampler):
    first = build(prep, sampler)
    past = []
    for i in range(6):
        p = first.ask()
        first.tell(p, 15.0 + i, p.params)
        past.append(record(i, p, value=15.0 + i))
    past[2] = record(2, past[2], status="failed")
    again = build(prep, sampler)
    again.replay(past, lambda r: r.metrics.get("val_psnr", (None,))[0])
    states = [t.state.name for t in again.study.trials]
    assert states == ["COMPLETE", "COMPLETE", "FAIL", "COMPLETE", "COMPLETE", "COMPLETE"]
    assert again.study.trials[5].values == [size_objective(past[5].params, DEFAULT_SIZE_SCALE), 20.0]
    nxt = again.ask()  # and it goes on proposing
    assert isinstance(nxt, Proposal) and nxt.params <= BUDGET


def test_the_same_seed_proposes_the_same_configs(prep):
    a, b = build(prep, "tpe", seed=3), build(prep, "tpe", seed=3)
    assert [a.ask().config for _ in range(5)] == [b.ask().config for _ in range(5)]


def test_the_grid_is_shuffled_by_seed_interleaves_families_and_rejects_over_budget(prep):
    small = build(prep, "grid", budget=12_000)
    out = []
    while (p := small.ask()) is not None:
        out.append(p)
    rejected = [p for p in out if isinstance(p, Rejection)]
    kept = [p for p in out if isinstance(p, Proposal)]
    assert kept and rejected and all(p.params <= 12_000 for p in kept)
    assert all(r.reason == f"over budget: {r.params} > 12000 parameters" for r in rejected)
    assert [p.family for p in out[:2]] == ["hourglass", "conventional"]  # families take turns
    keys = [(p.family, tuple(sorted(p.config.items()))) for p in out]
    assert len(keys) == len(set(keys))  # no point twice
    assert all(prep.families[p.family].shape_violation(p.config, prep.io) is None for p in out)
    other = build(prep, "grid", seed=1, budget=12_000)
    assert [other.ask().config for _ in range(5)] != [p.config for p in out[:5]]


def test_grid_replay_skips_the_points_already_run(prep):
    first = build(prep, "grid")
    past = [record(i, first.ask()) for i in range(4)]
    again = build(prep, "grid")
    again.replay(past, lambda r: None)
    rest = []
    while (p := again.ask()) is not None:
        rest.append((p.family, p.config))
    assert not any((r.family, r.config) in rest for r in past)
    full = build(prep, "grid")
    n_full = sum(1 for _ in iter(full.ask, None))
    assert len(rest) == n_full - 4


@pytest.mark.parametrize("sampler", ["gp", "tpe"])
@pytest.mark.parametrize("scale", ["log", "linear"])
def test_size_scale_tells_the_sampler_the_count_or_its_log_live_and_on_replay(prep, sampler, scale):
    """--size-scale: the study's first objective is log10(params) with "log", the count as
    it is with "linear", for trials told live and for trials replayed on resume."""
    live = make_sampler(
        sampler, prep.spaces, prep.io, BUDGET, prep.count, direction="maximize", seed=0, trials=20, size_scale=scale
    )
    seen = []
    for i in range(4):
        p = live.ask()
        live.tell(p, 12.0 + i, p.params)
        seen.append(p)
    want = [math.log10(p.params) if scale == "log" else float(p.params) for p in seen]
    assert [t.values for t in live.study.trials] == [[w, 12.0 + i] for i, w in enumerate(want)]
    again = make_sampler(
        sampler, prep.spaces, prep.io, BUDGET, prep.count, direction="maximize", seed=0, trials=20, size_scale=scale
    )
    again.replay(
        [record(i, p, value=12.0 + i) for i, p in enumerate(seen)], lambda r: r.metrics.get("val_psnr", (None,))[0]
    )
    assert [t.values for t in again.study.trials] == [t.values for t in live.study.trials]
    assert isinstance(again.ask(), Proposal)


def test_sampler_settings_are_declared_once_and_checked():
    """policies.SamplerSettings holds the Optuna proposer's eight settings with their
    defaults; a value outside its option tuple is refused, and make_sampler takes the
    object or its fields by name, not both."""
    from search.engine.sampling.policies import DEFAULT_SPREAD, SamplerSettings

    assert SamplerSettings().spread == DEFAULT_SPREAD
    with pytest.raises(ValueError, match="corners must be one of"):
        SamplerSettings(corners="middle")
    prep = prepare(RunSpec(spaces=("hourglass",), task="digits-denoise", budget=100_000))
    args = ("tpe", prep.spaces, prep.io, 100_000, prep.count)
    made = make_sampler(*args, direction="maximize", seed=0, trials=10, revisit="train")
    assert made.settings == SamplerSettings(revisit="train")
    with pytest.raises(TypeError, match="not both"):
        make_sampler(*args, direction="maximize", seed=0, trials=10, settings=SamplerSettings(), revisit="train")
