"""Optuna's GPSampler, its proposals made with fewer Python and arithmetic steps, and
(where asked) two proposals from one acquisition search.

What a proposal of its own fit proposes does not change (up to rounding:
tests/search/engine/test_gp_sampler.py compares the proposals key by key over a study);
what a proposal costs does
(docs/results/speed.md, "The GP's proposal, lighter"):

- Optuna (5.0, 5.1) makes each proposal inside `with torch.device("cpu")`, so that a
  process whose default device is a GPU still fits the GP on the CPU. That context is a
  torch function mode, Python code that every torch call passes through while it is
  active; a proposal makes about 10^4 small torch calls, and the mode took about a fifth
  of its time. Where the default device already is the CPU the mode changes nothing else,
  so the proposal runs with torch function handling off (`torch._C.DisableTorchFunction`,
  which also turns the mode off). With another default device Optuna's context stays.
- Two of Optuna's functions are swapped for ours while the proposal runs
  (gp_acquisition.py): the acquisition function's arithmetic, and the line searches over
  integer and categorical keys scored in batches.

**Two trials from one fit** (given a `pace`, search/engine/sampling/cost_aware.py
`CostMeter`, while its proposals cost more than the trials' own time): the acquisition
search (Optuna's `optimize_acqf_mixed`) climbs from ten start points and proposes the best
local optimum it reaches. It then keeps a spare for the next trial, chosen by a
pessimistic constant liar (Ginsbourger, Le Riche and Carraro 2010, "Kriging is
well-suited to parallelize optimization"): each GP is told that the proposed point's
outcome is the worst it has seen (its kernel unchanged, one training point more), the
acquisition function is built again on that, and of the search's other local optima,
those that are another configuration at least APART from the proposed point, the one it
scores highest is the spare. The next trial takes the spare without a fit or a search if
nothing but the first one's trial has finished since and the space is the same. So one
fit and one acquisition search serve two trials where the trials are cheaper than a
proposal, and every trial has its own where they are not (Optuna's GPSampler's proposals
then, proposal for proposal). Pairs are made where the acquisition function is log EHVI
or log EI: not with constraints, nor with trials running beside (Optuna's q-variants).
Measured: docs/benchmarks.md §43.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import optuna
import optuna._gp.acqf as optuna_acqf
import optuna._gp.gp as gp
import optuna._gp.optim_mixed as optuna_optim
import torch
from optuna.trial import TrialState

from search.engine.sampling.cost_aware import CostMeter
from search.engine.sampling.gp_acquisition import swapped


def default_device_is_cpu() -> bool:
    """Whether torch creates tensors on the CPU when no device is named."""
    return torch.get_default_device().type == "cpu"


# A spare lies at least this far from the proposed point in the search's normalised space
# (each key's range as [0, 1]): local searches that converge to one optimum end within
# about 1e-8 of each other, so a nearer "other" optimum would train the same model again.
APART = 1e-2


@dataclass(frozen=True)
class Spare:
    """The acquisition search's next-best configuration, made when the study had `finished`
    complete trials over the keys `space`."""

    params: dict[str, Any]
    finished: int
    space: tuple[str, ...]


class GPSampler(optuna.samplers.GPSampler):
    """`optuna.samplers.GPSampler`, whose proposals skip torch's function modes where the
    default device is the CPU, use gp_acquisition.py's functions and, given a `pace`
    (CostMeter), serve two trials from one fit while proposals cost more than trials
    (module doc)."""

    def __init__(self, *args: Any, pace: CostMeter | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pace = pace
        self.spare: Spare | None = None
        self.seconds: list[int] = []  # the numbers of the trials that took a spare
        self._found: dict[str, Any] | None = None  # the spare the last search found

    def pairs(self) -> bool:
        """Whether proposals now come two from a fit: paced, and they cost more than trials."""
        return self.pace is not None and not self.pace.fits()

    def second_of_pair(self, number: int) -> bool:
        """Whether trial `number` took the spare of the trial before it."""
        return number in self.seconds

    def sample_relative(self, study, trial, search_space) -> dict[str, Any]:
        spare = self._take_spare(study, trial, search_space)
        if spare is not None:
            return spare
        t0 = time.perf_counter()
        with swapped():
            if not default_device_is_cpu():
                params = super().sample_relative(study, trial, search_space)
            else:
                with torch._C.DisableTorchFunction():
                    params = super().sample_relative(study, trial, search_space)
        if params and self.pace is not None:  # it modelled the study (not its random start)
            self.pace.proposed(trial.number, time.perf_counter() - t0)
        found, self._found = self._found, None
        if params and found is not None:
            self.spare = Spare(found, self._complete(study), tuple(search_space))
        return params

    def after_trial(self, study, trial, state, values) -> None:
        super().after_trial(study, trial, state, values)
        if self.pace is not None:
            self.pace.finished(trial)

    def _complete(self, study) -> int:
        return len(study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,), use_cache=False))

    def _take_spare(self, study, trial, search_space) -> dict[str, Any] | None:
        spare, self.spare = self.spare, None
        if spare is None or not self.pairs():
            return None
        if tuple(search_space) != spare.space or self._complete(study) > spare.finished + 1:
            return None
        self.seconds.append(trial.number)
        return dict(spare.params)

    def _optimize_acqf(self, acqf, best_params):
        if not self.pairs():
            return super()._optimize_acqf(acqf, best_params)
        search = optuna_optim.local_search_mixed_batched
        optima: list[np.ndarray] = []

        def recorded(*args, **kwargs):
            xs, values = search(*args, **kwargs)
            optima.append(xs.copy())
            return xs, values

        optuna_optim.local_search_mixed_batched = recorded
        try:
            best = super()._optimize_acqf(acqf, best_params)
        finally:
            optuna_optim.local_search_mixed_batched = search
        self._found = self._liar_second(acqf, best, optima[0]) if optima else None
        return best

    def _liar_second(self, acqf, best: np.ndarray, optima: np.ndarray) -> dict[str, Any] | None:
        """The configuration of the local optimum, other than `best`'s and at least APART from
        it, that the acquisition function scores highest once each GP is told the worst it
        has seen at `best` (module doc); None where there is none, or where the acquisition function
        is not log EI or log EHVI without running trials (constraints, trials in parallel)."""
        if type(acqf) is optuna_acqf.LogEHVI:
            gprs = acqf._gpr_list
        elif type(acqf) is optuna_acqf.LogEI:
            gprs = [acqf._gpr]
        else:
            return None
        unnormalize = acqf.search_space.get_unnormalized_param
        first = unnormalize(best)
        candidates = [x for x in optima if unnormalize(x) != first and np.linalg.norm(x - best) >= APART]
        if not candidates:
            return None
        told_gps = [lie(g, torch.from_numpy(best[None])) for g in gprs]
        Y = torch.stack([g._y_train.squeeze(-1) for g in told_gps], dim=-1)  # (n + 1, M) standardized
        if len(told_gps) == 1:
            told = optuna_acqf.LogEI(gpr=told_gps[0], search_space=acqf.search_space, threshold=float(Y[:, 0].max()))
        else:
            told = optuna_acqf.LogEHVI(
                gpr_list=told_gps,
                search_space=acqf.search_space,
                Y_train=Y,
                n_qmc_samples=self._n_qmc_samples_ehvi,
                qmc_seed=len(Y),  # not drawn from the sampler's generator: its proposals stay Optuna's
            )
        scores = told.eval_acqf_no_grad(np.vstack(candidates))
        return unnormalize(candidates[int(np.argmax(scores))])


def lie(g, x: torch.Tensor):
    """GP `g` told that its outcome at the point x (1, D) is the worst it has seen (its least
    standardized value; Optuna's GP maximises): the same kernel, one training point more (a
    pessimistic constant liar)."""
    told = gp.GPRegressor(
        g._is_categorical,
        torch.cat([g._X_train, x]),
        torch.cat([g._y_train.squeeze(-1), g._y_train.min().reshape(1)]),
        g.inverse_squared_lengthscales,
        g.kernel_scale,
        g.noise_var,
    )
    told._cache_matrix()
    return told
