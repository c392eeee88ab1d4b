"""A sampler whose cost fits the trials: the GP where its proposals are cheap beside the
trials, TPE where they are not (`--sampler auto`, issue 80 item 3).

A GP proposal costs 0.3-0.5 s on one core at 40-100 trials (search/engine/sampling/
handover.py), which is nothing beside a GPU trial of minutes and most of the time of a
trial of milliseconds. `CostAware` measures both as the study runs: each of `costly`'s
proposals (the seconds its `sample_relative` takes, when it models the study) and each
finished trial's own seconds (Optuna's start-to-finish, less the proposal's cost), and
draws a trial from `costly` while the median of its last proposals costs at most `share`
of the median of the last trials, from `cheap` otherwise. Until both are measured it uses
`costly`. The choice is made once per trial, when it is asked.
"""

from __future__ import annotations

import datetime
import statistics
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

# `--sampler auto`: the GP while its proposal costs at most this share of a trial's own time.
# A quarter took the quickstart to 0.48x of one trial at a time but lost hypervolume on its
# worst seeds (0.917); one trial kept the GP's fronts where trials take seconds (quickstart
# 0.996 of `gp`'s hypervolume at 0.85x its wall; two search-efficiency settings level) and
# leaves instant trials to TPE (0.67x bare Optuna TPE's wall). docs/benchmarks.md §35, §37.
AUTO_SHARE = 1.0
WINDOW = 5  # the last proposals and trials whose medians are compared


class CostMeter:
    """A proposer's cost beside the trials' own time, as a study runs: the seconds of each of
    its proposals (`proposed`) and each finished trial's own seconds (`finished`: Optuna's
    start to now, less that trial's proposal). `fits()`: whether the median of the last
    WINDOW proposals costs at most `share` of the median of the last WINDOW trials (True
    until both are measured)."""

    def __init__(self, share: float = AUTO_SHARE, clock: Callable[[], float] = time.perf_counter) -> None:
        if not share > 0:
            raise ValueError(f"share must be > 0, got {share}")
        self.share, self.clock = share, clock
        self._cost: dict[int, float] = {}  # trial number -> seconds of its proposal
        self._costs: deque[float] = deque(maxlen=WINDOW)
        self._trials: deque[float] = deque(maxlen=WINDOW)

    def fits(self) -> bool:
        if not self._costs or not self._trials:
            return True
        return statistics.median(self._costs) <= self.share * statistics.median(self._trials)

    def proposed(self, number: int, seconds: float) -> None:
        self._cost[number] = seconds
        self._costs.append(seconds)

    def finished(self, trial: FrozenTrial) -> None:
        if trial.datetime_start is not None:  # a trial this process ran (not a replayed one)
            seconds = (datetime.datetime.now() - trial.datetime_start).total_seconds()
            self._trials.append(max(0.0, seconds - self._cost.pop(trial.number, 0.0)))


class CostAware(BaseSampler):
    """`costly` while its proposals cost at most `share` of the trials' own time, else `cheap`."""

    def __init__(
        self,
        costly: BaseSampler,
        cheap: BaseSampler,
        share: float = AUTO_SHARE,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.costly, self.cheap = costly, cheap
        self.meter = CostMeter(share, clock)
        self._cheap: set[int] = set()  # the numbers of the trials `cheap` draws

    def uses_costly(self) -> bool:
        """Whether the next trial is drawn by `costly` (both measured, and it is cheap enough)."""
        return self.meter.fits()

    def _pick(self, trial: FrozenTrial) -> BaseSampler:
        return self.drew(trial.number)

    def drew(self, number: int) -> BaseSampler:
        """The sampler that draws (or drew) trial `number` of this process's study."""
        return self.cheap if number in self._cheap else self.costly

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        if not self.uses_costly():
            self._cheap.add(trial.number)
        self._pick(trial).before_trial(study, trial)

    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        return self._pick(trial).infer_relative_search_space(study, trial)

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        sampler = self._pick(trial)
        t0 = self.meter.clock()
        out = sampler.sample_relative(study, trial, search_space)
        if sampler is self.costly and out:  # it modelled the study (not its random start)
            self.meter.proposed(trial.number, self.meter.clock() - t0)
        return out

    def sample_independent(
        self, study: Study, trial: FrozenTrial, param_name: str, param_distribution: BaseDistribution
    ) -> Any:
        return self._pick(trial).sample_independent(study, trial, param_name, param_distribution)

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState, values: Sequence[float] | None) -> None:
        self._pick(trial).after_trial(study, trial, state, values)
        self.meter.finished(trial)

    def reseed_rng(self) -> None:
        self.costly.reseed_rng()
        self.cheap.reseed_rng()
