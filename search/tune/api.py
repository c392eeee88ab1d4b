"""The product inside a user's own Ray Tune script (issue 29, item 2): its budgeted
searcher and its trainable, each usable on its own with Tune's `Tuner`.

    from ray import tune
    from search.tune import budgeted_searcher, product_trainable

    searcher = budgeted_searcher(space="hourglass", budget="100K", task="digits-denoise",
                                 storage="sqlite:///search.db", trials=8)
    tune.Tuner(product_trainable(task="digits-denoise", epochs=3),
               tune_config=tune.TuneConfig(search_alg=searcher, num_samples=8)).fit()

`budgeted_searcher(...)` is the study of `search run` as a Tune `Searcher`
(`BudgetedSearcher`, on search/tune/searcher.py's `StudySearcher`): the same `RunSpec`,
`prepare` and `StudyLoop` (search/engine/study.py), so every configuration it proposes
has its exact parameter count within the budget before it trains, proposals are spread
over the parameter axis (`spread="size"`: a target size drawn log-uniformly between the
smallest model and the budget; a new study's first proposals are each family's corners),
families take turns, and every trial is recorded in the product's database, where
`search trials / report / serve / compare` read it. The same script again resumes the
study (finished trials replayed into the proposer, none run twice).

A user's own model family plugs in with its parameter count: `space` names the family
and its keys (`{"my-mlp": {"width": {"low": 8, "high": 512}, "depth": [1, 2, 3]}}`, a
space file's table) and `count_params(config) -> int` gives the exact count of a
configuration (it must not decrease when any integer key grows: the budget-aware draw
bisects on it). The budget is checked with it before anything trains. A family
registered as the product's are (`models.register_family` and
`search.spaces.register_space`, docs/architecture.md "Adding a family") is searched by
its name instead, as `search run` would.

What the searcher reads from a trial (`tune.report`): the task's metric by its name
(`psnr` on the denoising tasks: the study's metric, `BudgetedSearcher.metric_name`),
once per epoch, and optionally its validation value `val_<metric>` (`val_psnr`). The
trial's stored metrics are those of its best epoch by `val_<metric>` when it is reported
(the product's rule: the test value at the best validation epoch), else of its last
report; `val_<metric>` (else `<metric>`) is what the proposer learns from. A trial that
reported no `<metric>` is stored `failed`, a non-finite one `diverged`; a trial Tune
stopped before the trainable returned (a scheduler such as ASHA, a stopper) is stored
`pruned` with its epochs, unless it had reported `epochs` epochs. The product's
trainable (`product_trainable`) reports what the study needs by itself.

`product_trainable(task=..., ...)` is the product's trainer as a Tune function trainable
(search/tune/trainable.py) for Tune's own searchers and schedulers: the config holds
`family` and the family's keys (`tune.choice`, `OptunaSearch`), every epoch reports
`val_<metric>` (ASHA: `metric="val_psnr", mode="max"`), the last report, one iteration
after the last epoch, the trial's metrics (a scheduler's `max_t` must exceed the
epochs for it to arrive; a study's trial Tune stopped at its last epoch is `pruned`).

Tune keeps one trial pending at a time with a searcher of its own unless
`TuneConfig(max_concurrent_trials=N)` is given: give it to run trials side by side.
Proposals are asked before the running trials are told, as with `--executor ray`.

Bad input (issue 29, item 4) is a `TuneInputError`, a ValueError with a one-line
message, raised before anything is written: a space or budget that allows no
configuration, an unknown task or family, a bad storage URL, a bad setting.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from core.budget import parse_budget
from core.errors import UserError, one_line
from core.limits import DEFAULT_STORAGE_WAIT_S
from models import FAMILIES
from search.engine.sampling.policies import DEFAULT_SHARE, DEFAULT_SPREAD
from search.engine.specs import RunSpec
from search.engine.study import StudyLoop
from search.executors.ray import worker_threads
from search.tune.budgeted import BudgetedSearcher, QuietProgress
from search.tune.executor import TuneExecutor
from search.tune.trainable import TuneInputError, known_family, train_trial
from search.tune.user_family import CountedFamily, CountParams, prepare_with_own

__all__ = ["BudgetedSearcher", "CountedFamily", "TuneInputError", "budgeted_searcher", "product_trainable"]


# -- the factories ---------------------------------------------------------------------
def budgeted_searcher(
    space: str | list[str] | tuple[str, ...] | Mapping[str, Mapping[str, Any]],
    budget: int | str,
    task: str,
    storage: str | None = None,
    *,
    study: str | None = None,
    count_params: CountParams | Mapping[str, CountParams] | None = None,
    trials: int = 20,
    epochs: int | None = None,
    sampler: str | None = None,
    spread: str = DEFAULT_SPREAD,
    share: str = DEFAULT_SHARE,
    seed: int = 0,
    repeats: int = 1,
    retries: int = 1,
    space_file: str | None = None,
    task_options: dict[str, Any] | None = None,
    data_dir: str | None = None,
    max_train_samples: int | None = None,
    batch_size: int | None = None,
    device: str = "auto",
    keep: str = "none",
    artifacts: str | None = None,
    storage_wait: float = DEFAULT_STORAGE_WAIT_S,
    progress: Any = None,
) -> BudgetedSearcher:
    """The product's budgeted searcher for a Tune `Tuner` (`TuneConfig(search_alg=...)`).

    - `space`: the families searched together, by name (`"hourglass"`,
      `"hourglass,conventional"`, a list), or a dict of family -> keys (a space file's
      tables: a list of choices, a value, or `{low, high, log, step}`; `constraints`: a
      list of 'LEFT OP [SCALE *] RIGHT'); for a registered family the keys override its
      default space, for the user's own family (with `count_params`) they are its space.
    - `budget`: the most parameters a configuration may have (`100_000`, `"100K"`).
    - `task`: the task whose metric the study records (`search tasks` lists them).
    - `storage`: the product's database, a SQLAlchemy URL or a SQLite file (default:
      `$SEARCH_STORAGE`, else `search.db` here), where `search trials / report / serve /
      compare` read the study.
    - `study`: its name (default TASK-FAMILIES); the same name again resumes it.
    - `count_params`: the user's own family's exact count, `config -> int` (one family in
      `space`) or a dict family -> function.
    - `trials`: the study's finished trials to reach, over every run of it (`search run
      --trials`): the searcher tells Tune it is finished once they are there (Tune's
      `num_samples` may end a run sooner; -1 leaves it to the study).
    - `epochs`: the epochs a trial trains (the product's trainable trains so many; a
      user's trainable that reported so many is complete even if Tune stopped it then).
    - The rest as `search run`'s flags: `sampler` (None: `search run`'s default), `spread`, `share`, `seed`, `repeats`
      (seeds per configuration, the product's trainable), `retries` (a failed trial is
      proposed again), `space_file`, `task_options`, `data_dir`, `max_train_samples`,
      `batch_size`, `device`, `keep` (whose weights the product's trainable keeps:
      `none`, the default here, or `pareto` or `all` as with `search run`, in a folder
      beside a SQLite database), `artifacts` (where, for another place) and
      `storage_wait` (seconds to wait for a database that went away before failing).
    - `progress`: a `search.engine.study.Progress` (default: silent; Tune shows trials).

    Everything is checked before the database is written to: TuneInputError (a
    ValueError, one line) otherwise. Then the study is created or resumed (trials left
    running by a dead process are marked `interrupted` and proposed again first).
    """
    try:
        names, own = _families(space, count_params)
        spec = _run_spec(
            names,
            budget,
            task,
            storage,
            study=study,
            trials=trials,
            epochs=epochs,
            sampler=sampler,
            spread=spread,
            share=share,
            seed=seed,
            repeats=repeats,
            retries=retries,
            space_file=space_file,
            task_option=task_options,
            data_dir=data_dir,
            max_train_samples=max_train_samples,
            batch_size=batch_size,
            device=device,
            keep=keep,
            artifacts=artifacts,
        )
        prep = prepare_with_own(spec, space, own)
        _check_weights_store(spec)
        from storage import Store
        from storage.waiting import check_wait

        store = Store(spec.storage, wait_s=check_wait(storage_wait))
    except TuneInputError:
        raise
    except UserError as e:
        raise TuneInputError(one_line(e)) from None
    loop = StudyLoop(spec, store, progress or QuietProgress(), prep, executor=TuneExecutor())
    try:
        loop.start()
    except UserError as e:  # a study of that name for another task or metric
        raise TuneInputError(one_line(e)) from None
    return BudgetedSearcher(loop, epochs)


def _families(space, count_params) -> tuple[list[str], dict[str, CountParams]]:
    """The families `space` names and the user's own among them (name -> count), checked."""
    if isinstance(space, str):
        names = [s.strip() for s in space.split(",") if s.strip()]
    elif isinstance(space, Mapping):
        names = [str(k) for k in space]
        for name, table in space.items():
            if not isinstance(table, Mapping):
                raise TuneInputError(f"space {name!r}: expected a dict of keys, got {type(table).__name__}")
    elif isinstance(space, (list, tuple)) and all(isinstance(s, str) for s in space):
        names = [s.strip() for s in space]
    else:
        raise TuneInputError(f"space must be a family name, a list of them or a dict family -> keys, got {space!r}")
    if not names:
        raise TuneInputError("space names no family")
    if callable(count_params):
        unknown = [n for n in names if n not in FAMILIES]
        if len(unknown) != 1:
            raise TuneInputError(
                f"count_params counts one family of your own in space, found {unknown or 'none'} "
                "(a dict family -> count_params for several)"
            )
        own = {unknown[0]: count_params}
    elif isinstance(count_params, Mapping):
        own = dict(count_params)
        bad = [n for n, f in own.items() if n not in names or not callable(f)]
        if bad:
            raise TuneInputError(
                f"count_params names {', '.join(map(repr, bad))}: not a family of space with a function"
            )
    elif count_params is None:
        own = {}
    else:
        raise TuneInputError(f"count_params must be a function config -> int, got {count_params!r}")
    for name in names:
        if name in own:
            if name in FAMILIES:
                raise TuneInputError(f"{name!r} is the product's family: give your own family another name")
            if not isinstance(space, Mapping) or not space[name]:
                raise TuneInputError(f"your family {name!r} needs its keys in space: {{{name!r}: {{key: range}}}}")
        elif name not in FAMILIES:
            raise TuneInputError(
                f"unknown family {name!r}; known: {', '.join(sorted(FAMILIES.names()))}; "
                "or search your own with count_params="
            )
    return names, own


def _run_spec(names: list[str], budget, task, storage, **options: Any) -> RunSpec:
    """The study's `RunSpec`, built as `search run` builds it (search/engine/from_options.py
    `spec_from_options` over the one table of options, `RunOptions`): the Tune executor, no pruner (Tune's
    scheduler stops trials)."""
    if not isinstance(task, str):
        raise TuneInputError(f"task must be a task's name, got {task!r}")
    if isinstance(budget, bool) or not isinstance(budget, (int, str)):
        raise TuneInputError(f"budget must be a count or a string such as '100K', got {budget!r}")
    count = parse_budget(str(budget)) if isinstance(budget, str) else budget
    if count <= 0:
        raise TuneInputError(f"budget must be positive, got {budget!r}")
    if storage is not None and (not isinstance(storage, str) or not storage.strip()):
        raise TuneInputError(f"storage must be a database URL or a SQLite file, got {storage!r}")
    from search.engine.from_options import spec_from_options
    from search.engine.run_options import RunOptions
    from storage.database import default_url, normalize_url

    options = RunOptions.from_python(
        space=names, budget=count, task=task, storage=normalize_url(storage or default_url()), **options
    )
    return spec_from_options(dataclasses.replace(options, executor="tune", pruner="none"))


def _check_weights_store(spec: RunSpec) -> None:
    """The store the product's trainable writes weights to (`keep`), reachable (a folder
    made if missing), as `search run` checks it before the database is opened."""
    from search.artifacts.location import open_location, weights_location

    target = weights_location(spec.keep, spec.artifacts, spec.storage)
    if target is not None:
        open_location(target, create=True)


def product_trainable(
    task: str | None = None,
    *,
    family: str | None = None,
    epochs: int | None = None,
    batch_size: int | None = None,
    max_train_samples: int | None = None,
    device: str | None = None,
    seed: int | None = None,
    repeats: int | None = None,
    data_dir: str | None = None,
    task_options: dict[str, Any] | None = None,
    cpus: float = 1.0,
    gpus: float = 0.0,
    **settings: Any,
) -> Any:
    """The product's trainable for `tune.Tuner(...)`: search/tune/trainable.py's
    `train_trial` with these defaults (a trial's config wins over them) and its
    resources (`tune.with_resources`: `cpus` CPUs, torch threads as many, `gpus` GPUs;
    0.25 packs four trials on a GPU).

    With `budgeted_searcher` it trains the study's trials (their search spec); with Tune's
    own searchers the config is plain: `family` (here or in the config) and the family's
    keys (`d_z`, `d_h`, `L`, `lr` for hourglass), `task` here or in the config. Each epoch
    reports `val_<metric>` (`val_psnr`: ASHA's and OptunaSearch's metric), the last report
    (one iteration after the last epoch: give a scheduler's `max_t` above the epochs) the
    trial's metrics; a plain trial that fails raises in its worker (Tune's errored
    trial). The task, the family and the settings given here are checked now:
    TuneInputError (a ValueError, one line) before Tune starts; a trial's own keys when
    it starts (search/tune/trainable.py: `trial_spec_of`).
    """
    from ray import tune

    defaults = {
        k: v
        for k, v in dict(
            task=task,
            family=family,
            epochs=epochs,
            batch_size=batch_size,
            max_train_samples=max_train_samples,
            device=device,
            seed=seed,
            repeats=repeats,
            data_dir=data_dir,
            task_options=task_options,
            **settings,
        ).items()
        if v is not None
    }
    unknown = sorted(set(settings) - {"optimizer", "tokens", "ema", "ema_warmup", "weights", "lr", "weight_decay"})
    if unknown:
        raise TuneInputError(f"product_trainable takes no {', '.join(unknown)}")
    if task is not None:
        from tasks import get_task

        try:
            io = get_task(task, task_options).io()
        except UserError as e:
            raise TuneInputError(one_line(e)) from None
        if family is not None and not known_family(family).fits(io):
            raise TuneInputError(
                f"family {family!r} does not fit task {task!r}; 'search spaces' lists the tasks each family fits"
            )
    elif family is not None:
        known_family(family)
    if not (isinstance(cpus, (int, float)) and cpus > 0 and isinstance(gpus, (int, float)) and gpus >= 0):
        raise TuneInputError(f"cpus must be > 0 and gpus >= 0, got cpus={cpus!r}, gpus={gpus!r}")
    for key in ("epochs", "batch_size", "max_train_samples", "repeats", "seed"):
        v = defaults.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < (0 if key == "seed" else 1)):
            raise TuneInputError(
                f"{key} must be a {'non-negative' if key == 'seed' else 'positive'} integer, got {v!r}"
            )
    if defaults.get("optimizer") is not None:
        from tasks.optimizers import OPTIMIZERS

        try:
            OPTIMIZERS.get(defaults["optimizer"])
        except UserError as e:
            raise TuneInputError(one_line(e)) from None
    trainable = tune.with_parameters(train_trial, threads=worker_threads(float(cpus)), defaults=defaults)
    return tune.with_resources(trainable, {"cpu": float(cpus), "gpu": float(gpus)})
