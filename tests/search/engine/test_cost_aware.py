"""`--sampler auto` (search/engine/sampling/cost_aware.py): the costly sampler while its
proposals are cheap beside the trials, the cheap one where they are not, measured."""

import time

import optuna
import pytest

from search.engine.sampling.cost_aware import CostAware


class Slow(optuna.samplers.RandomSampler):
    """A model-based sampler's cost: each relative proposal takes `seconds`."""

    def __init__(self, seconds, seed=0):
        super().__init__(seed=seed)
        self.seconds, self.drawn = seconds, []

    def infer_relative_search_space(self, study, trial):
        return {"x": optuna.distributions.FloatDistribution(0, 1)} if study.trials[:-1] else {}

    def sample_relative(self, study, trial, search_space):
        if not search_space:
            return {}
        time.sleep(self.seconds)
        self.drawn.append(trial.number)
        return {"x": 0.5}


class Counted(optuna.samplers.RandomSampler):
    def __init__(self):
        super().__init__(seed=1)
        self.drawn = []

    def before_trial(self, study, trial):
        self.drawn.append(trial.number)


def drive(trial_s, n=12):
    costly, cheap = Slow(0.02), Counted()
    sampler = CostAware(costly, cheap, share=0.25)
    study = optuna.create_study(sampler=sampler)
    for _ in range(n):
        t = study.ask()
        t.suggest_float("x", 0, 1)
        time.sleep(trial_s)
        study.tell(t, 0.0)
    return costly, cheap


def test_instant_trials_go_to_the_cheap_sampler():
    costly, cheap = drive(0.0)
    assert len(costly.drawn) <= 2 and len(cheap.drawn) >= 9  # measured once, then cheap


def test_trials_that_cost_more_keep_the_costly_sampler():
    costly, cheap = drive(0.15)
    assert cheap.drawn == [] and len(costly.drawn) == 11  # every trial after the first


def test_a_share_must_be_positive():
    with pytest.raises(ValueError, match="share must be > 0"):
        CostAware(Slow(0), Counted(), share=0)


def test_drawn_by_names_the_sampler_each_trial_came_from():
    """drawn.drawn_by follows HandOver and CostAware down to the sampler that drew a
    trial: instant trials under `auto` go to TPE after the GP's first measured proposal."""
    from search.engine.sampling.drawn import drawn_by
    from search.engine.sampling.handover import HandOver

    costly, cheap = Slow(0.02), optuna.samplers.TPESampler(seed=0)
    sampler = HandOver(CostAware(costly, cheap, share=1.0), optuna.samplers.RandomSampler(seed=0), at=8)
    study = optuna.create_study(sampler=sampler)
    names = []
    for _ in range(10):
        t = study.ask()
        t.suggest_float("x", 0, 1)
        study.tell(t, 0.0)
        names.append(drawn_by(sampler, t.number))
    assert names[:2] == ["Slow", "Slow"]  # no measure yet, then the first measured proposal
    assert set(names[2:8]) == {"TPE"} and names[8:] == ["random", "random"]  # handed over at 8
