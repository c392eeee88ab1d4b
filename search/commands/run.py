"""`search run`: parse the flags into a RunSpec, check everything, run the study, print
its Pareto table and write its report page."""
from __future__ import annotations

import argparse
from pathlib import Path

from core.errors import UserError
from search.commands.common import open_store, print_frame, task_options

DEFAULT_REPORT_DIR = "search-reports"


def cmd_run(a: argparse.Namespace) -> int:
    from core.budget import parse_budget
    from core.trials import TrainSettings
    from search.progress import ConsoleProgress
    from search.pruners import DEFAULT_GRACE, DEFAULT_PRUNER
    from search.samplers import DEFAULT_SAMPLER, DEFAULT_SHARE, DEFAULT_SPREAD
    from search.specs import RunSpec
    from search.study import default_task, prepare, run_study

    if a.smoke:  # as if given on the command line: they win over a recipe's values
        a.trials = 2 if a.trials is None else a.trials
        a.epochs = 1 if a.epochs is None else a.epochs
        a.max_train_samples = 512 if a.max_train_samples is None else a.max_train_samples
    recipe = _apply_recipe(a)
    if a.space is None or a.budget is None:
        raise UserError("search run needs --space and --budget (or a --recipe that sets them)")
    spaces = tuple(s.strip() for s in str(a.space).split(",") if s.strip())
    spec = RunSpec(
        spaces=spaces, task=a.task or (default_task(spaces) if spaces else ""), budget=parse_budget(str(a.budget)),
        trials=20 if a.trials is None else a.trials, repeats=_or(a.repeats, 1), sampler=_or(a.sampler, DEFAULT_SAMPLER),
        spread=_or(a.spread, DEFAULT_SPREAD), share=_or(a.share, DEFAULT_SHARE), budget_of=_or(a.budget_of, "params"), pruner=_or(a.pruner, DEFAULT_PRUNER),
        prune_grace=_or(a.prune_grace, DEFAULT_GRACE), study=a.study, storage=a.storage,
        data_dir=a.data_dir, seed=_or(a.seed, 0), executor=_or(a.executor, "local"), space_file=a.space_file,
        train=TrainSettings(epochs=a.epochs, batch_size=a.batch_size, lr=a.lr, device=a.device,
                            max_train_samples=a.max_train_samples, tokens=a.tokens, optimizer=a.optimizer),
        task_options=(recipe.task_options if recipe else {}) | task_options(a), retries=_or(a.retries, 1),
        oom_retry=a.oom_retry, recipe=recipe.name if recipe else None,
        executor_options={k: v for k, v in (
            ("address", a.ray_address), ("gpus_per_trial", a.gpus_per_trial), ("cpus_per_trial", a.cpus_per_trial),
            ("max_concurrent", a.max_concurrent), ("trial_timeout", a.trial_timeout)) if v is not None},
    )
    prep = prepare(spec)  # every name, range and the budget checked before the database is touched
    if a.data_dir is not None and not Path(a.data_dir).is_dir():
        raise UserError(f"data directory {a.data_dir!r} does not exist")
    from tasks import load_data

    load_data(prep.task, spec.data_dir, spec.train.device)  # missing data fails here, before any write
    store = open_store(a.storage)
    out = run_study(spec, store, ConsoleProgress(), prep)
    df = store.trials_frame(spec.study_name)
    print(f"study {spec.study_name!r}: {out.finished} finished trial(s), {out.ran} run now"
          + (f" ({out.retried} retries)" if out.retried else "") +
          f", {out.rejected} proposal(s) rejected over budget or shape"
          + (" (grid exhausted)" if out.exhausted else ""))
    print_pareto(df, out.study.metric, out.study.direction, prep.convention)
    if not a.no_report:
        from reports import write_site

        index = write_site([(out.study, df)], a.out, samples_for(store))
        page = Path(a.out) / study_page_name(out.study.name)
        print(f"report: {page if page.exists() else index}")
    return 0


def samples_for(store):
    """The report's source of sample grids: the "samples" artifacts of a trial's runs."""
    return lambda study, number: store.artifacts(study, number, "samples")


def _or(value, default):
    return default if value is None else value


def _apply_recipe(a: argparse.Namespace):
    """Fill the flags not given on the command line from `--recipe` (None without one)."""
    if not a.recipe:
        return None
    from search.recipes import load_recipe

    recipe = load_recipe(a.recipe)
    for key, value in recipe.run.items():
        if getattr(a, key, None) is None:
            setattr(a, key, value)
    return recipe


def study_page_name(name: str) -> str:
    from reports.site import study_filename

    return study_filename(name)


def print_pareto(df, metric: str, direction: str, convention: str = "parameters") -> None:
    from reports.tables import pareto_table

    table = pareto_table(df, metric, direction, formatted=True)
    if table.empty:
        print("no complete trials yet, so no Pareto front")
        return
    print(f"Pareto-optimal configurations ({metric} vs. {convention}, per family):")
    print_frame(table, "table")
