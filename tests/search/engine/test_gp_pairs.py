"""search/engine/sampling/gp_sampler.py, two trials from one fit: while proposals cost more
than trials, the GP's acquisition search serves the trial it proposes for and keeps a
pessimistic constant liar's second point for the next one; otherwise every trial has its
own fit, as Optuna's GPSampler."""

import datetime

import optuna
import pytest
import torch

from search.api.progress import drawn_clause
from search.engine.sampling.cost_aware import CostMeter
from search.engine.sampling.drawn import PAIRED, drawn_by
from search.engine.sampling.gp_sampler import GPSampler, lie


class Pace:
    """A CostMeter's verdict fixed: proposals cost more than trials (`dear`) or not."""

    def __init__(self, dear: bool) -> None:
        self.dear = dear

    def fits(self) -> bool:
        return not self.dear

    def proposed(self, number, seconds) -> None:
        pass

    def finished(self, trial) -> None:
        pass


def objective(t):
    depth = t.suggest_int("depth", 1, 40)
    width = t.suggest_int("width", 4, 200, log=True)
    lr = t.suggest_float("lr", 1e-4, 1e-1, log=True)
    size = depth * width * width
    return float(size), (lr - 0.01) ** 2 + 1.0 / (1 + size)


def single(t):
    return sum(objective(t)[1:])


def searches(monkeypatch) -> list[int]:
    """Counts the acquisition searches (Optuna's GPSampler._optimize_acqf calls) into a list."""
    calls = []
    real = optuna.samplers.GPSampler._optimize_acqf

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(optuna.samplers.GPSampler, "_optimize_acqf", counted)
    return calls


def run(sampler, trials=16, directions=("minimize", "minimize"), fn=objective):
    study = optuna.create_study(directions=list(directions), sampler=sampler)
    study.optimize(fn, n_trials=trials)
    return study


@pytest.mark.parametrize("directions,fn", [(("minimize", "minimize"), objective), (("minimize",), single)])
def test_dear_proposals_serve_two_trials_from_one_search(monkeypatch, directions, fn):
    calls = searches(monkeypatch)
    sampler = GPSampler(seed=3, n_startup_trials=6, pace=Pace(dear=True))
    study = run(sampler, trials=16, directions=directions, fn=fn)
    modelled = 16 - 6
    assert sampler.seconds  # some trials took the spare of the one before
    assert len(calls) + len(sampler.seconds) == modelled
    assert len(calls) <= modelled // 2 + 1  # about a search for two trials
    params = [t.params for t in study.trials]
    for n in sampler.seconds:
        assert n - 1 not in sampler.seconds  # a spare follows a search, never another spare
        assert params[n] != params[n - 1]  # the second point is another configuration
        assert (
            abs(params[n]["lr"] - params[n - 1]["lr"]) > 1e-6
            or params[n]["width"] != params[n - 1]["width"]
            or params[n]["depth"] != params[n - 1]["depth"]
        )


def test_cheap_proposals_are_optunas_own(monkeypatch):
    ours = run(GPSampler(seed=5, n_startup_trials=6, pace=Pace(dear=False)), trials=12)
    theirs = run(optuna.samplers.GPSampler(seed=5, n_startup_trials=6), trials=12)
    for mine, optunas in zip(ours.trials, theirs.trials, strict=True):
        assert mine.params.keys() == optunas.params.keys()
        for key, value in optunas.params.items():
            assert mine.params[key] == pytest.approx(value, rel=1e-6), key


def test_a_spare_waits_for_one_finished_trial_only():
    sampler = GPSampler(seed=3, n_startup_trials=6, pace=Pace(dear=True))
    study = run(sampler, trials=7)  # the seventh is the first modelled: a spare kept
    assert sampler.spare is not None
    study.add_trial(
        optuna.trial.create_trial(
            params=study.trials[0].params, distributions=study.trials[0].distributions, values=[1.0, 1.0]
        )
    )
    study.optimize(objective, n_trials=1)  # two trials finished since the spare: a new search
    assert sampler.seconds == []


def finished_after(seconds, number):
    """A FrozenTrial of this process that started `seconds` ago."""
    t = optuna.trial.create_trial(value=0.0)
    t.number = number
    t.datetime_start = datetime.datetime.now() - datetime.timedelta(seconds=seconds)
    return t


@pytest.mark.parametrize("trial_s,pairs", [(0.5, False), (0.01, True)])
def test_the_meter_pairs_only_where_proposals_cost_more_than_trials(trial_s, pairs):
    meter = CostMeter(1.0)
    assert meter.fits()  # nothing measured: a fit a trial
    for n in range(6):
        meter.proposed(n, 0.1)
        meter.finished(finished_after(trial_s + 0.1, n))  # its own time: less its proposal
    assert meter.fits() is not pairs
    sampler = GPSampler(seed=3, n_startup_trials=6, pace=meter)
    assert sampler.pairs() is pairs


def test_instant_trials_pair_from_the_second_search_on():
    sampler = GPSampler(seed=3, n_startup_trials=6, pace=CostMeter(1.0))
    run(sampler, trials=14)  # a GP proposal costs more than these trials
    assert sampler.seconds


def test_the_liar_tells_the_worst_outcome_at_the_first_point():
    sampler = GPSampler(seed=3, n_startup_trials=6, pace=Pace(dear=True))
    captured = {}
    real = GPSampler._liar_second

    def spy(self, acqf, best, optima):
        captured["gpr"], captured["x"] = acqf._gpr_list[0], torch.from_numpy(best[None])
        return real(self, acqf, best, optima)

    GPSampler._liar_second = spy
    try:
        run(sampler, trials=8)
    finally:
        GPSampler._liar_second = real
    g, x = captured["gpr"], captured["x"]
    told = lie(g, x)
    with torch.no_grad():
        (m0, v0), (m1, v1) = g.posterior(x), told.posterior(x)
    worst = float(g._y_train.min())
    assert abs(float(m1) - worst) < abs(float(m0) - worst)  # pulled to the worst outcome seen
    assert float(v1) < float(v0)
    assert len(told._X_train) == len(g._X_train) + 1


def test_the_summary_names_pairs():
    sampler = GPSampler(seed=3, n_startup_trials=6, pace=Pace(dear=True))
    run(sampler, trials=12)
    n = sampler.seconds[0]
    assert drawn_by(sampler, n) == PAIRED and drawn_by(sampler, n - 1) == "the GP"
    assert drawn_clause({"the GP": 20, PAIRED: 6}) == ", the GP proposed 26 (12 of them two from one fit)"
    assert drawn_clause({"the GP": 20, PAIRED: 6, "TPE": 3}) == (
        ", the GP proposed 26 (12 of them two from one fit), TPE 3"
    )
    assert drawn_clause({"the GP": 20}) == ""
