"""Samplers by name (`--sampler`): where a study's next configuration comes from.

A registry like the executors': each name maps to a factory that builds the study's
`Sampler` (search/engine/sampling/). The Optuna samplers share one `OptunaSampler` and
differ only in the Optuna sampler they build; `grid` is the paper-style grid. Optuna is
imported only when a proposer is built, so the CLI can check a name without it.
A new sampler is one `SAMPLERS.add` here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core.registry import Registry
from search.engine.sampling.policies import SamplerSettings, startup_trials

if TYPE_CHECKING:
    import optuna

    from search.engine.sampling.base import Sampler

SamplerFactory = Callable[..., "Sampler"]  # (spaces, io, budget, count, *, direction, seed, trials)
SAMPLERS: Registry[SamplerFactory] = Registry("sampler")


def _optuna(
    build: Callable[[int, int], optuna.samplers.BaseSampler], stopped_as_complete: bool = False
) -> SamplerFactory:
    """A factory of `OptunaSampler`s whose Optuna sampler is `build(seed, trials)`;
    `stopped_as_complete` for a sampler that reads only complete trials (see OptunaSampler)."""

    def factory(
        spaces, io, budget, count, *, direction: str, seed: int, trials: int, settings: SamplerSettings, **_: Any
    ) -> Sampler:
        from search.engine.sampling.optuna_sampler import OptunaSampler

        return OptunaSampler(
            spaces,
            io,
            budget,
            count,
            make_sampler=build,
            direction=direction,
            seed=seed,
            trials=trials,
            settings=settings,
            stopped_as_complete=stopped_as_complete,
        )

    return factory


def _tpe(seed: int, trials: int) -> optuna.samplers.BaseSampler:
    import optuna

    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup_trials(trials))


def _tpe_group(seed: int, trials: int) -> optuna.samplers.BaseSampler:
    """TPE modelling the parameters jointly, one model per group of trials that share a
    space (Optuna's `multivariate=True, group=True`): for a conditional space, where a key
    exists only for some values of another (search/spaces/space.py `Condition`)."""
    import warnings

    import optuna

    with warnings.catch_warnings():  # Optuna marks both options experimental; not the user's concern
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(
            seed=seed, n_startup_trials=startup_trials(trials), multivariate=True, group=True
        )


def _nsga2(seed: int, trials: int) -> optuna.samplers.BaseSampler:
    import optuna

    return optuna.samplers.NSGAIISampler(seed=seed, population_size=min(50, max(4, trials // 3)))


GP_TRIALS = 200  # a study's finished trials after which `gp` hands it to TPE (search/engine/sampling/handover.py)


# `gp` proposes two trials from one fit while its proposals cost more than this share of
# the trials' own time (gp_sampler.py, "Two trials from one fit"): 40 instant trials of a
# user's family at 1.7x bare Optuna TPE's wall time (a fit a trial: 3.1x), at the same
# front; trials of seconds keep a fit each. docs/results/speed.md, search-quality.md.
PAIR_SHARE: float | None = 1.0  # None: a fit a trial (benchmarks' baseline arm)


def _gp_model(seed: int, trials: int, conditional: bool = False, paced: bool = True) -> optuna.samplers.BaseSampler:
    """Optuna's GPSampler (gp_sampler.py: its proposals without a torch function mode, two
    trials from one fit while proposals cost more than PAIR_SHARE of a trial where `paced`)
    after the same random start as tpe's; for a `conditional` space,
    with TPE (independent, per key) drawing the keys not every trial has, where a plain
    GPSampler draws them at random."""
    from search.engine.sampling.cost_aware import CostMeter
    from search.engine.sampling.gp_sampler import GPSampler

    extra = {"independent_sampler": _tpe(seed + 1, trials)} if conditional else {}
    return GPSampler(
        seed=seed,
        n_startup_trials=startup_trials(trials),
        warn_independent_sampling=False,
        pace=CostMeter(PAIR_SHARE) if paced and PAIR_SHARE is not None else None,
        **extra,
    )


def _gp(seed: int, trials: int) -> optuna.samplers.BaseSampler:
    """Optuna's GPSampler (a Gaussian process, log expected hypervolume improvement with
    several objectives) after the same random start as tpe's, handing the study to tpe's
    TPE at GP_TRIALS finished trials (a GP's proposals grow costly with its trials)."""
    from search.engine.sampling.handover import HandOver

    return HandOver(_gp_model(seed, trials), _tpe(seed, trials), GP_TRIALS)


def _gp_cond(seed: int, trials: int) -> optuna.samplers.BaseSampler:
    """`gp` for a conditional space: the GP models the keys every trial has (Optuna's
    intersection search space) and TPE (independent, per key) draws the conditional ones,
    where a plain GPSampler would draw them at random; handed to TPE at GP_TRIALS."""
    from search.engine.sampling.handover import HandOver

    return HandOver(_gp_model(seed, trials, conditional=True), _tpe(seed, trials), GP_TRIALS)


def _auto(seed: int, trials: int, conditional: bool = False) -> optuna.samplers.BaseSampler:
    """`gp` where its proposals cost little beside the trials, TPE where they do not
    (search/engine/sampling/cost_aware.py: measured as the study runs), then TPE at GP_TRIALS."""
    from search.engine.sampling.cost_aware import CostAware
    from search.engine.sampling.handover import HandOver

    costly = _gp_model(seed, trials, conditional=conditional, paced=False)
    return HandOver(CostAware(costly, _tpe(seed, trials)), _tpe(seed, trials), GP_TRIALS)


def _auto_cond(seed: int, trials: int) -> optuna.samplers.BaseSampler:
    """`auto` for a conditional space: its GP is `gp-cond`'s (TPE draws the conditional keys)."""
    return _auto(seed, trials, conditional=True)


def _random(seed: int, trials: int) -> optuna.samplers.BaseSampler:
    import optuna

    return optuna.samplers.RandomSampler(seed=seed)


def _grid(spaces, io, budget, count, *, seed: int, **_: Any) -> Sampler:
    from search.engine.sampling.grid import GridSampler

    return GridSampler(spaces, io, budget, count, seed=seed)


SAMPLERS.add("tpe", _optuna(_tpe))
SAMPLERS.add("tpe-group", _optuna(_tpe_group))
SAMPLERS.add("nsga2", _optuna(_nsga2))
SAMPLERS.add("gp", _optuna(_gp, stopped_as_complete=True))  # GPSampler reads complete trials only
SAMPLERS.add("gp-cond", _optuna(_gp_cond, stopped_as_complete=True))
SAMPLERS.add("auto", _optuna(_auto, stopped_as_complete=True))
SAMPLERS.add("auto-cond", _optuna(_auto_cond, stopped_as_complete=True))
SAMPLERS.add("random", _optuna(_random))
SAMPLERS.add("grid", _grid)


def make_sampler(
    sampler: str,
    spaces,
    io,
    budget,
    count,
    *,
    direction: str,
    seed: int,
    trials: int,
    settings: SamplerSettings | None = None,
    **options: Any,
) -> Sampler:
    """The proposer of sampler `sampler` (UserError listing the known names if unknown),
    searching with `settings` (policies.SamplerSettings), or with one built from `options`
    (its field names: spread=, share=, ...; the defaults for the rest). The grid ignores
    them (it interleaves the families' points)."""
    if settings is None:
        settings = SamplerSettings(**options)
    elif options:
        raise TypeError(f"give settings= or {', '.join(options)}, not both")
    return SAMPLERS.get(sampler)(
        spaces, io, budget, count, direction=direction, seed=seed, trials=trials, settings=settings
    )
