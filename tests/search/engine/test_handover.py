"""`HandOver`: one Optuna sampler until a study holds `at` finished trials, then another."""

import optuna
import pytest

from search.engine.sampling.handover import HandOver
from search.engine.sampling.samplers import GP_TRIALS, _gp


def objective(t):
    x = t.suggest_float("x", 0.0, 1.0)
    n = t.suggest_int("n", 1, 8)
    return x, (x - 0.3) ** 2 + 0.1 * n


def run(sampler, trials):
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    study.optimize(objective, n_trials=trials)
    return [t.params for t in study.trials]


class Counting(optuna.samplers.RandomSampler):
    def __init__(self, seed):
        super().__init__(seed=seed)
        self.asked = []

    def before_trial(self, study, trial):
        self.asked.append(trial.number)


def test_first_until_at_then_the_other():
    first, then = Counting(0), Counting(1)
    run(HandOver(first, then, at=5), 9)
    assert first.asked == [0, 1, 2, 3, 4] and then.asked == [5, 6, 7, 8]


def test_before_the_handover_it_is_the_first_sampler_exactly():
    gp = lambda: optuna.samplers.GPSampler(seed=3, n_startup_trials=4)  # noqa: E731
    assert run(HandOver(gp(), optuna.samplers.RandomSampler(seed=0), at=100), 8) == run(gp(), 8)


def test_the_gp_sampler_hands_over_to_tpe():
    sampler = _gp(0, 40)
    assert isinstance(sampler, HandOver) and sampler.at == GP_TRIALS
    assert isinstance(sampler.first, optuna.samplers.GPSampler)
    assert isinstance(sampler.then, optuna.samplers.TPESampler)
    with pytest.raises(ValueError):
        HandOver(sampler.first, sampler.then, at=-1)
