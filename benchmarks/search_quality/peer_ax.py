"""Ax as a peer of the product's search (issue 30): what a user of its `Client` writes.

Follows Ax's `Client` API (ax-platform 1.3, `ax.Client` and its docstrings), driven
ask-tell (`get_next_trials`, `complete_trial`): `configure_experiment` with the product's
ranges (`RangeParameterConfig`, log scale and steps kept; `ChoiceParameterConfig`, the
family a hierarchical choice whose `dependent_parameters` are each family's own),
`configure_optimization` with `objective="-params, val_metric"` (parameters minimised, the
validation metric in its direction) and `outcome_constraints=["params <= BUDGET"]`, then the default generation
strategy (`configure_generation_strategy`: a centre point and Sobol, then BoTorch's
qLogNEHVI), seeded. Ax turns a constraint on an objective that bounds it in its own
direction into that objective's threshold, so the budget is the hypervolume's reference
for parameters.

The budget: the exact count is data Ax can use, so an over-budget config is completed
with `raw_data={"params": count}` and no metric (the Client keeps partial data for its
models) and never trained. A config that breaks a shape rule has no model to count: it is
abandoned (`mark_trial_abandoned`, never suggested again). Ax allows no parameter
constraint on a log-scale parameter, so shape rules such as d_h < d_z cannot be stated to
it without changing the ranges' scale. A trial that fails in training is marked failed.

Ax is not a dependency of the product: `pip install -e '.[peers]'`.
"""

from __future__ import annotations

import logging
import math
import warnings

from ax import ChoiceParameterConfig, Client, RangeParameterConfig
from ax.utils.common.logger import set_stderr_log_level

from benchmarks.search_quality.peer_space import PeerSpace
from search.engine.sampling import Proposal, Rejection, Sampler
from search.spaces import Dim

METRIC = "val_metric"  # the task's validation metric, by one name for every task


def parameter(name: str, dim: Dim) -> RangeParameterConfig | ChoiceParameterConfig:
    """Ax's config of one searched dim: its range (log scale, step) or its choices."""
    if dim.kind == "choice":
        kind = {bool: "bool", int: "int", float: "float", str: "str"}[type(dim.choices[0])]
        return ChoiceParameterConfig(
            name, values=list(dim.choices), parameter_type=kind, is_ordered=kind in ("int", "float")
        )
    cast = int if dim.kind == "int" else float
    return RangeParameterConfig(
        name,
        bounds=(cast(dim.low), cast(dim.high)),
        parameter_type=dim.kind,
        step_size=dim.step if dim.step > 1 else None,
        scaling="log" if dim.log else "linear",
    )


def objective(direction: str) -> str:
    """Ax's objective string: parameters minimised, the metric in `direction`."""
    return f"-params, {'-' if direction == 'minimize' else ''}{METRIC}"


class AxPeer(Sampler):
    """One Ax experiment over a `PeerSpace`; proposals carry their Ax trial index."""

    def __init__(
        self, space: PeerSpace, *, direction: str, seed: int, initialization_budget: int | None = None
    ) -> None:
        super().__init__(space.spaces, space.io, space.budget, space.count)
        self.space = space
        set_stderr_log_level(logging.ERROR)  # Ax logs every trial; errors only
        warnings.filterwarnings("ignore", module=r"(ax|botorch|gpytorch|linear_operator)\b")
        fams = space.families
        params = [parameter(n, d) for f in fams for n, d in space.params(f)]
        if len(fams) > 1:
            params.insert(
                0,
                ChoiceParameterConfig(
                    "family",
                    values=fams,
                    parameter_type="str",
                    is_ordered=False,
                    dependent_parameters={f: [n for n, _ in space.params(f)] for f in fams},
                ),
            )
        self.client = Client(random_seed=seed)
        self.client.configure_experiment(parameters=params, name="peer")
        self.client.configure_optimization(
            objective=objective(direction), outcome_constraints=[f"params <= {space.budget}"]
        )
        self.client.configure_generation_strategy(
            initialization_budget=initialization_budget, initialization_random_seed=seed
        )

    def ask(self) -> Proposal | Rejection:
        ((index, values),) = self.client.get_next_trials(max_trials=1).items()
        fams = self.space.families
        family = str(values["family"]) if len(fams) > 1 else fams[0]
        verdict = self.space.judge(family, self.space.config(family, dict(values)))
        if isinstance(verdict, Rejection):
            if verdict.params is None:
                self.client.mark_trial_abandoned(index)
            else:
                self.client.complete_trial(index, raw_data={"params": float(verdict.params)})
        else:
            verdict.handle = index
        return verdict

    def tell(self, proposal: Proposal, objective: float | None, params: int, pruned: bool = False) -> None:
        if objective is not None and math.isfinite(objective) and not pruned:
            self.client.complete_trial(proposal.handle, raw_data={"params": float(params), METRIC: float(objective)})
        else:
            self.client.mark_trial_failed(proposal.handle, failed_reason="pruned" if pruned else "failed in training")
