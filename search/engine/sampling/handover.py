"""A sampler that hands a study over from one Optuna sampler to another at a size.

`--sampler gp` models a family's trials with a Gaussian process while its Optuna study is
small, then hands it to TPE: a GP's proposal costs grow with the cube of the trials it
models (measured on one core, hourglass: 0.30 s per proposal at 50 trials, 0.45 s at
100, 0.81 s at 200, 1.43 s at 300; TPE 0.01-0.04 s), and the benchmarks that show the
GP ahead (docs/benchmarks.md §14, §19) end at 40 trials.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState


class HandOver(BaseSampler):
    """`first` while the study holds fewer than `at` finished trials (complete, pruned or
    failed), then `then`. The choice is made once per trial, when it is asked, so one
    trial is never drawn from both. One sampler serves one study (trials by number)."""

    def __init__(self, first: BaseSampler, then: BaseSampler, at: int) -> None:
        if at < 0:
            raise ValueError(f"at must be >= 0, got {at}")
        self.first, self.then, self.at = first, then, at
        self._then: set[int] = set()  # the numbers of the trials `then` draws

    def _finished(self, study: Study) -> int:
        return len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)))

    def _pick(self, study: Study, trial: FrozenTrial) -> BaseSampler:
        return self.drew(trial.number)

    def drew(self, number: int) -> BaseSampler:
        """The sampler that draws (or drew) trial `number` of this process's study."""
        return self.then if number in self._then else self.first

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        if self._finished(study) >= self.at:
            self._then.add(trial.number)
        self._pick(study, trial).before_trial(study, trial)

    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        return self._pick(study, trial).infer_relative_search_space(study, trial)

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        return self._pick(study, trial).sample_relative(study, trial, search_space)

    def sample_independent(
        self, study: Study, trial: FrozenTrial, param_name: str, param_distribution: BaseDistribution
    ) -> Any:
        return self._pick(study, trial).sample_independent(study, trial, param_name, param_distribution)

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState, values: Sequence[float] | None) -> None:
        self._pick(study, trial).after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        self.first.reseed_rng()
        self.then.reseed_rng()
