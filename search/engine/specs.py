"""A parsed `search run` command (`RunSpec`), built from its options by
search/engine/from_options.py.

The trial-level specs and results every layer shares live in `core.trials`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from core.errors import UserError
from core.trials import TrainSettings, check_compile, check_ema
from search.artifacts.location import DEFAULT_KEEP, check_keep
from search.engine.pruners import DEFAULT_PRUNER
from search.engine.sampling import SAMPLERS
from search.engine.sampling.policies import (
    CHECK_ORDERS,
    CORNERS,
    DEFAULT_CHECK_ORDER,
    DEFAULT_CORNERS,
    DEFAULT_REVISIT,
    DEFAULT_SEED_CHECKS,
    DEFAULT_SHAPE_DRAW,
    DEFAULT_SHARE,
    DEFAULT_SIZE_SCALE,
    DEFAULT_SPREAD,
    DEFAULT_START,
    LAST_CORNERS,
    REVISITS,
    SCOPES,
    SHAPE_DRAWS,
    SHARES,
    SIZE_SCALES,
    SPREADS,
    STARTS,
    SamplerSettings,
    has_turns,
    sampler_for,
    scope_for,
    shape_draw_for,
    unmet_need,
)

# What a budget may count (`--budget-of`): every family's own parameter convention, or
# the connections per layer of the Mixer and SW-MLP families (models.Family.count_as).
BUDGET_MEASURES = ("params", "omega")


@dataclass(frozen=True)
class RunSpec:
    """A parsed `search run` command."""

    spaces: tuple[str, ...]  # families searched together in one study
    task: str
    budget: int
    trials: int = 20  # finished (complete/failed/diverged) trials to reach
    repeats: int = 1  # seeds per configuration
    sampler: str | None = (
        None  # a name in search.engine.sampling.SAMPLERS; None: policies.sampler_for (always set after init)
    )
    spread: str = DEFAULT_SPREAD  # search.engine.sampling.policies.SPREADS: aim proposals at sizes, or not
    share: str = DEFAULT_SHARE  # search.engine.sampling.policies.SHARES: families take turns, or the sampler chooses
    scope: str | None = (
        None  # search.engine.sampling.policies.SCOPES: one Optuna study, or one per family; None: the default
    )
    corners: str = DEFAULT_CORNERS  # search.engine.sampling.policies.CORNERS: what a new study visits first
    size_scale: str = DEFAULT_SIZE_SCALE  # search.engine.sampling.policies.SIZE_SCALES: params as the sampler sees them
    start: str = DEFAULT_START  # search.engine.sampling.policies.STARTS: the target sizes of each family's random start
    revisit: str = (
        DEFAULT_REVISIT  # search.engine.sampling.policies.REVISITS: what a proposal of a trained configuration gets
    )
    shape_draw: str | None = (
        None  # policies.SHAPE_DRAWS: widths and depth as the sampler sees them; None: shape_draw_for
    )
    pruner: str = DEFAULT_PRUNER  # a name in search.engine.pruners.PRUNERS
    prune_grace: float | None = None  # the pruner's first judged epoch, a fraction of the epochs; None: its own
    seed_checks: float = DEFAULT_SEED_CHECKS  # share of the training time for seed checks (repeats 1 only)
    seed_check_order: str = DEFAULT_CHECK_ORDER  # policies.CHECK_ORDERS: which front configurations are checked first
    decide: tuple[float, ...] = ()  # budgets to search until decided (search/engine/deciding.py)
    margin: float | None = None  # a difference that does not matter: "equivalent within ±margin" decides too
    time_limit: float | None = None  # seconds of this run after which no trial or seed check starts (--time-limit)
    budget_of: str = "params"  # BUDGET_MEASURES: what the budget counts
    study: str | None = None  # default: derived from task and families
    storage: str | None = None  # SQLAlchemy URL; None -> the default SQLite file
    data_dir: str | None = None
    seed: int = 0
    executor: str = "local"
    space_file: str | None = None
    train: TrainSettings = field(default_factory=TrainSettings)
    task_options: dict[str, Any] = field(default_factory=dict)  # e.g. {"noise": 0.5}
    retries: int = 1  # re-runs of a failed or interrupted trial
    oom_retry: bool = False  # an out-of-memory trial runs once more with half the batch
    executor_options: dict[str, Any] = field(default_factory=dict)  # e.g. ray address, gpus per trial
    recipe: str | None = None  # the recipe the settings came from (`search run --recipe`)
    recipe_version: str | None = None  # its file's hash (search.recipes.Recipe.version)
    replicate_of: str | None = None  # with `--search-repeats K`: the name the K replicate searches share
    replicate: int | None = None  # this search's index among them, 1..K
    keep: str = DEFAULT_KEEP  # search.artifacts.KEEP: whose weights stay in the store (pareto, all, none)
    artifacts: str | None = None  # the artifact store's URL; None: a folder beside the SQLite database
    routed: str | None = None  # why `sampler` or `shape_draw` is not the default (prepare's `route_sampler`)
    shape_draw_given: bool | None = None  # whether `shape_draw` was given (None: not yet known)

    def __post_init__(self) -> None:

        if not self.spaces:
            raise UserError("--space needs at least one family")
        if len(set(self.spaces)) != len(self.spaces):
            raise UserError("--space lists a family twice")
        if self.trials < 1 or self.repeats < 1:
            raise UserError("--trials and --repeats must be at least 1")
        if self.retries < 0:
            raise UserError("--retries must be at least 0")
        object.__setattr__(self, "sampler", sampler_for(self.sampler, self.share, len(self.spaces)))
        SAMPLERS.get(self.sampler)  # unknown names fail with the known ones
        from search.engine.pruners import PRUNERS

        PRUNERS.get(self.pruner)  # unknown names fail with the known ones
        if self.prune_grace is not None and (
            isinstance(self.prune_grace, bool)
            or not isinstance(self.prune_grace, (int, float))
            or not 0 < self.prune_grace < 1
        ):
            raise UserError(f"--prune-grace must be a fraction of the epochs between 0 and 1, got {self.prune_grace!r}")
        if (
            isinstance(self.seed_checks, bool)
            or not isinstance(self.seed_checks, (int, float))
            or not 0 <= self.seed_checks <= 1
        ):
            raise UserError(
                f"--seed-checks must be a share of the training time between 0 and 1, got {self.seed_checks!r}"
            )
        if self.seed_check_order not in CHECK_ORDERS:
            raise UserError(f"unknown --seed-check-order {self.seed_check_order!r}; known: {', '.join(CHECK_ORDERS)}")
        if self.margin is not None and (
            isinstance(self.margin, bool)
            or not isinstance(self.margin, (int, float))
            or not 0 < self.margin < float("inf")
        ):
            raise UserError(f"--margin must be a difference above 0 in the metric's units, got {self.margin!r}")
        if self.time_limit is not None:
            from core.durations import parse_duration

            object.__setattr__(self, "time_limit", parse_duration(self.time_limit))
        if self.margin is not None and not self.decide:
            raise UserError("--margin is for --decide here; 'search compare --margin D' reads any study with a margin")
        if self.decide and len(self.spaces) < 2:
            raise UserError("--decide needs two families or more: a verdict says which family is better")
        if self.spread not in SPREADS:
            raise UserError(f"unknown --spread {self.spread!r}; known: {', '.join(SPREADS)}")
        if self.budget_of not in BUDGET_MEASURES:
            raise UserError(f"unknown --budget-of {self.budget_of!r}; known: {', '.join(BUDGET_MEASURES)}")
        if self.share not in SHARES:
            raise UserError(f"unknown --share {self.share!r}; known: {', '.join(SHARES)}")
        if self.scope is not None and self.scope not in SCOPES:
            raise UserError(f"unknown --sampler-scope {self.scope!r}; known: {', '.join(SCOPES)}")
        if self.scope == "family" and not has_turns(self.share):
            raise UserError(
                "--sampler-scope family gives each family its own sampler under the turns; "
                "it needs --share equal or uncertain, not free"
            )
        if self.corners not in CORNERS:
            raise UserError(f"unknown --corners {self.corners!r}; known: {', '.join(CORNERS)}")
        if self.corners != DEFAULT_CORNERS and self._unmet("corners") is not None:
            raise UserError(
                "--corners sets the sizes an Optuna sampler visits first; it needs --spread size and "
                "a sampler other than grid"
            )
        if self.start not in STARTS:
            raise UserError(f"unknown --start {self.start!r}; known: {', '.join(STARTS)}")
        if self.start != DEFAULT_START and self._unmet("start") is not None:
            raise UserError(
                "--start sets the target sizes of an Optuna sampler's random start; it needs --spread size "
                "and a sampler other than grid"
            )
        if self.start != DEFAULT_START and len(self.spaces) > 1 and not has_turns(self.share):
            raise UserError(
                "--start ramp draws each family's start in its turns; with several families it needs "
                "--share equal or uncertain, not free"
            )
        if self.corners in LAST_CORNERS and len(self.spaces) > 1 and not has_turns(self.share):
            raise UserError(
                "--corners last gives each family its budget model in the last turns; with several "
                "families it needs --share equal or uncertain, not free"
            )
        if self.revisit not in REVISITS:
            raise UserError(f"unknown --revisit {self.revisit!r}; known: {', '.join(REVISITS)}")
        if self.revisit != DEFAULT_REVISIT and self._unmet("revisit") is not None:
            raise UserError("--revisit is for an Optuna sampler's proposals; the grid never proposes a point twice")
        if self.shape_draw is not None and self.shape_draw not in SHAPE_DRAWS:
            raise UserError(f"unknown --shape-draw {self.shape_draw!r}; known: {', '.join(SHAPE_DRAWS)}")
        if self.shape_draw == "modelled" and self._unmet("shape_draw") is not None:
            raise UserError("--shape-draw sets how an Optuna sampler draws widths and depth; the grid has no draw")
        if self.shape_draw_given is None:  # kept through `replace`: whether the user chose it
            object.__setattr__(self, "shape_draw_given", self.shape_draw is not None)
        object.__setattr__(
            self, "shape_draw", shape_draw_for(self.shape_draw, self.sampler, self.trials, len(self.spaces))
        )
        if self.size_scale not in SIZE_SCALES:
            raise UserError(f"unknown --size-scale {self.size_scale!r}; known: {', '.join(SIZE_SCALES)}")
        if self.size_scale != DEFAULT_SIZE_SCALE and self._unmet("size_scale") is not None:
            raise UserError("--size-scale sets how an Optuna sampler sees the parameter count; the grid has no model")
        for name in ("epochs", "batch_size", "max_train_samples", "tokens"):
            v = getattr(self.train, name)
            if v is not None and v < 1:
                raise UserError(f"--{name.replace('_', '-')} must be at least 1")
        if self.train.optimizer is not None:
            from tasks.optimizers import OPTIMIZERS

            OPTIMIZERS.get(self.train.optimizer)  # unknown names fail with the known ones
        if self.train.lr is not None and not 0 < self.train.lr < math.inf:
            raise UserError(f"--lr must be a positive number, got {self.train.lr}")
        check_ema(self.train.ema, self.train.ema_warmup)
        check_compile(self.train.compile)
        check_keep(self.keep)
        if self.artifacts is not None and self.keep == "none":
            raise UserError("--artifacts names where weights are kept, but --keep none keeps none")

    def _unmet(self, key: str) -> str | None:
        """What the search setting `key` lacks in this study (policies.unmet_need: the one
        table of what each setting needs, which `search run`'s summary line reads too)."""
        return unmet_need(key, self.sampler, self.spread, len(self.spaces))

    @property
    def sampler_scope(self) -> str:
        """`scope`, or the default for the sampler and the share when not given."""
        return scope_for(self.sampler, self.share, self.scope)

    @property
    def study_name(self) -> str:
        return self.study or f"{self.task}-{'-'.join(self.spaces)}"

    def sampler_settings(self) -> SamplerSettings:
        """How the study's Optuna proposer searches (policies.SamplerSettings), resolved:
        the scope and shape draw as this study takes them."""
        return SamplerSettings(
            spread=self.spread,
            share=self.share,
            scope=self.sampler_scope,
            corners=self.corners,
            size_scale=self.size_scale,
            start=self.start,
            revisit=self.revisit,
            shape_draw=self.shape_draw or DEFAULT_SHAPE_DRAW,
        )


def replicate_specs(spec: RunSpec, searches: int) -> list[RunSpec]:
    """`search run --search-repeats K`: K independent searches of one question, studies
    NAME-r1 .. NAME-rK with seeds seed .. seed + K - 1, each recording NAME as the group it
    belongs to (`search compare NAME` pools them). K = 1 is the spec itself."""
    if isinstance(searches, bool) or not isinstance(searches, int) or searches < 1:
        raise UserError(f"--search-repeats must be at least 1, got {searches!r}")
    if searches == 1:
        return [spec]
    base = spec.study_name
    return [
        replace(spec, study=f"{base}-r{k}", seed=spec.seed + k - 1, replicate_of=base, replicate=k)
        for k in range(1, searches + 1)
    ]
