"""Everything a `search run` asks for, resolved and checked before the database is touched
(`prepare` -> `Prepared`): the task, the families and their spaces, the budget against each
family's smallest model, the executor's options, the user's own families and task. Bad
input is a UserError here, so that it leaves the database as it was."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from core.budget import format_count
from core.errors import UserError, one_line
from core.io import IOSpec
from core.trials import TrialSpec
from models import FAMILIES, Family, get_family
from search.engine.sampling.policies import CONDITIONAL_SAMPLERS, FREE_RANGES_DRAW_WHY
from search.engine.search_flags import search_settings
from search.engine.specs import RunSpec
from search.executors import check_executor
from search.plugins import worker_sources
from search.plugins.checks import check_own
from search.spaces import Space, build_spaces, classify, min_params
from tasks import TASKS, get_task
from tasks.base import Task


@dataclass
class Prepared:
    spec: RunSpec
    task: Task
    io: IOSpec
    families: dict[str, Family]
    spaces: dict[str, Space]
    plugins: tuple[str, ...] = ()  # what a worker imports to know the user's families and task

    def count(self, family: str, config: dict[str, Any]) -> int:
        """The config's size in the study's budget measure (`--budget-of`; default its
        family's parameter count)."""
        return self.families[family].count_as(self.spec.budget_of, config, self.io)

    def task_spec(self, study: str) -> TrialSpec:
        """A trial of this search's task with no configuration (number -1): what workers
        load the task's data and the plugins by before the first trial (`Executor.warm`)."""
        s = self.spec
        family = next(iter(self.families))
        return TrialSpec(study, -1, family, {}, s.task, (0,), s.train, s.data_dir, s.task_options, plugins=self.plugins)

    @property
    def convention(self) -> str:
        """What the budget and the stored sizes count (the pages' axis label)."""
        if self.spec.budget_of != "params":
            return next(iter({f.budget_measures[self.spec.budget_of] for f in self.families.values()}))
        return " / ".join(sorted({f.param_convention for f in self.families.values()}))

    @property
    def objective_key(self) -> str:
        """The metric the sampler optimises: the validation value (test stays unseen)."""
        return f"val_{self.task.metric}"


def prepare(spec: RunSpec) -> Prepared:
    """Resolve and validate names, spaces and the budget; touches no database."""
    task = get_task(spec.task, spec.task_options)
    check_executor(spec.executor, spec.executor_options)  # unknown executors and bad options fail before any write
    if spec.train.optimizer is not None and task.trainer != "supervised":
        raise UserError(f"--optimizer is for supervised tasks; {spec.task!r} trains with its own recipe")
    if (spec.train.ema or spec.train.ema_warmup) and task.trainer != "supervised":
        raise UserError(f"--ema is for supervised tasks; {spec.task!r} trains with its own recipe")
    io = task.io()
    families = {name: get_family(name) for name in spec.spaces}
    origins = [FAMILIES.origin(n) for n in families] + [TASKS.origin(spec.task)]
    spec, plugins = _worker_sources(spec, origins)
    if spec.budget_of != "params":
        lacking = [n for n, f in families.items() if spec.budget_of not in f.budget_measures]
        if lacking:
            able = [n for n in FAMILIES.names() if spec.budget_of in get_family(n).budget_measures]
            raise UserError(
                f"--budget-of {spec.budget_of}: {', '.join(lacking)} cannot be counted so; "
                f"families that can: {', '.join(able)}"
            )
    for name, fam in families.items():
        if not fam.fits(io):
            shape = io.input_shape or (io.d_in,)
            raise UserError(
                f"family {name!r}{_from(name)} does not fit task {spec.task!r} ({io.output} output, input shape "
                f"{tuple(shape)}); 'search spaces' lists the tasks each family fits"
            )
    spaces = build_spaces(list(families), io, spec.space_file, task.search_lrs)
    prep = Prepared(spec, task, io, families, spaces, plugins)
    classify_spaces(prep)
    smallest_of: dict[str, float] = {}
    for name, space in spaces.items():
        smallest = smallest_of[name] = min_params(space, io, lambda c, n=name: prep.count(n, c))
        if math.isinf(smallest):
            raise UserError(
                f"family {name!r}{_from(name)}: its space allows no configuration on {spec.task!r}: check its ranges"
            )
        if smallest > spec.budget:
            raise UserError(
                f"budget {format_count(spec.budget)} is below the smallest {name} model{_from(name)} on "
                f"{spec.task} ({smallest:,} {prep.convention})"
            )
    if spec.decide:
        from search.engine.deciding import check_budgets

        check_budgets(list(spec.decide), spec.budget, smallest_of)
    check_own(prep)  # a user's counts, data shapes and training function, before any write
    prep.spec = route_sampler(spec, prep.spaces)
    return prep


def route_sampler(spec: RunSpec, spaces: dict[str, Space]) -> RunSpec:
    """`spec` with the sampler and shape draw its spaces need, and `routed` saying why: a
    conditional space's sampler (a GP, models only what every trial shares and draws the
    rest at random: the one CONDITIONAL_SAMPLERS names instead); a space
    with free ranges draws its widths and depths as themselves ("random"), not as positions,
    unless the user chose the shape draw (FREE_RANGES_DRAW_WHY)."""
    whys = []
    conditional = [name for name, space in spaces.items() if space.conditional]
    if conditional and spec.sampler in CONDITIONAL_SAMPLERS:
        routed_to = CONDITIONAL_SAMPLERS[spec.sampler]
        whys.append(
            f"{', '.join(conditional)} has conditional keys, which {spec.sampler} alone draws at random: "
            f"sampler {routed_to} (the GP over the keys every trial has, TPE for the conditional ones)"
        )
        spec = replace(spec, sampler=routed_to)
    free = [
        n for n, s in spaces.items() if any(d.kind != "choice" and d.low < d.high and not s.is_sized(d) for d in s.dims)
    ]
    if free and spec.shape_draw == "modelled" and not spec.shape_draw_given:
        whys.append(f"{', '.join(free)} has free ranges: shape draw random ({FREE_RANGES_DRAW_WHY})")
        spec = replace(spec, shape_draw="random")
    if not whys:
        return spec
    return replace(spec, routed="; ".join(([spec.routed] if spec.routed else []) + whys))


def _worker_sources(spec: RunSpec, origins: list[str]) -> tuple[RunSpec, tuple[str, ...]]:
    """What the processes that train import to know the study's families and task
    (`worker_sources`), and `spec`: with the local executor's worker processes, a family or
    task registered where no other process can import it (a script's or notebook's
    `__main__`) keeps the trials in this process (`--workers 1`, said in `routed`), unless
    `--trial-timeout` needs the workers (UserError then)."""
    from search.executors.local import placement_of

    options = spec.executor_options
    if spec.executor != "local":
        return spec, worker_sources(origins)
    where = placement_of(options)
    if where.in_process:
        return spec, ()
    try:
        return spec, worker_sources(origins)
    except UserError as e:
        if options.get("trial_timeout") is not None:
            raise UserError(f"--trial-timeout runs trials in worker processes, but {one_line(e)}") from None
    why = (
        "trials run in this process, one at a time: a family or task registered in a script or notebook, or by a "
        "call rather than by a module's import, cannot reach worker processes (register it at the top of a .py file "
        "and pass it as a plugin to use every core)"
    )
    return replace(spec, executor_options={**options, "workers": 1}, routed=why), ()


def classify_spaces(prep: Prepared) -> None:
    """Each space's size dimensions counted (search/spaces/size_dims.py), in place: the
    sampler sizes those and draws the others over their whole range."""
    for name, space in prep.spaces.items():
        prep.spaces[name] = classify(
            space, prep.io, lambda c, n=name: prep.count(n, c), f"family {name!r}{_from(name)}"
        )


def _from(family: str) -> str:
    """' (ORIGIN)' for a family that is not built in: messages name the plugin ('' for one
    the registry does not hold, e.g. a Tune script's family known by its count alone)."""
    return FAMILIES.origin_note(family) if family in FAMILIES else ""


def default_task(spaces: tuple[str, ...]) -> str:
    """The first family's paper task (a user's family without one: UserError)."""
    task = get_family(spaces[0]).default_task
    if not task:
        raise UserError(f"family {spaces[0]!r}{_from(spaces[0])} has no default task: give one (--task, task=)")
    return task


def study_fields(spec: RunSpec, prep: Prepared) -> dict[str, Any]:
    """The study a run creates: what `Store.create_or_load_study` takes besides its name."""
    return dict(
        task=spec.task,
        families=list(spec.spaces),
        metric=prep.task.metric,
        direction=prep.task.direction,
        budget=spec.budget,
        settings=study_settings(spec, prep),
    )


def study_settings(spec: RunSpec, prep: Prepared) -> dict[str, Any]:
    """The settings stored with a new study (kept as created when it is resumed)."""
    out = {
        "recipe": spec.recipe,
        **({"recipe_version": spec.recipe_version} if spec.recipe_version else {}),
        **search_settings(spec),
        "seed": spec.seed,
        "repeats": spec.repeats,
        "trials": spec.trials,
        "train": spec.train.to_dict(),
        "space_file": spec.space_file,
        "executor": spec.executor,
        "task_options": spec.task_options,
        "budget_of": spec.budget_of,
        "param_convention": prep.convention,
        "keep": spec.keep,
    }
    if spec.replicate_of is not None:  # one of K replicate searches (`search run --search-repeats K`)
        out |= {"replicate_of": spec.replicate_of, "replicate": spec.replicate}
    return out
