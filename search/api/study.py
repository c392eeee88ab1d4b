"""`search.run`, `search.open` and the study handle they return (issue 60, item 1).

import search

study = search.run(space=["hourglass", "conventional"], task="digits-denoise",
                   budget="100K", trials=40)
study.trials()                    # every trial as a pandas DataFrame
study.front("hourglass")          # that family's Pareto-optimal trials
verdict = study.compare()         # which family wins at each budget, with intervals
verdict.to_dict()                 # what `search compare --format json` prints
model = study.load_model(12)      # trial 12's trained module, in eval mode

study = search.open("digits-denoise-hourglass+conventional", storage="search.db")
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.errors import UserError


class Study:
    """A study in a database (or the replicate searches of one question, by their shared
    name): its trials, fronts, verdicts, predictions and trained models.

    `names` are the stored studies it stands for: one, or the K searches of
    `search_repeats=K` (NAME-r1..NAME-rK) under their shared `name`."""

    def __init__(self, name: str, storage: str | None = None, names: Iterable[str] | None = None) -> None:
        from search.api.run import open_store

        self.name = name
        self.store = open_store(storage)
        self.storage = self.store.url
        self.names = list(names) if names is not None else [name]
        self.records = [self.store.get_study(n) for n in self.names]  # StorageError (one line) if missing

    def __repr__(self) -> str:
        return f"Study({self.name!r}, storage={self.storage!r})"

    @property
    def metric(self) -> str:
        """The searched metric (the task's), e.g. 'psnr'."""
        return self.records[0].metric

    @property
    def direction(self) -> str:
        """'maximize' or 'minimize'."""
        return self.records[0].direction

    def trials(self):
        """Every trial as a pandas DataFrame, one row per trial: study, number, status,
        family, params, config, key dimensions, seeds, the metrics (test, and `val_`
        validation ones) and timings (`search trials` prints the same frame); a column for
        each configuration key the key dimensions do not hold (a family of your own's keys,
        `lr`: `storage.frames.with_config_columns`)."""
        import pandas as pd

        from storage.frames import with_config_columns

        frames = [self.store.trials_frame(n) for n in self.names]
        return with_config_columns(frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True))

    def front(self, family: str | None = None):
        """The Pareto-optimal trials (metric against parameters) of each family, or of
        `family`, as a DataFrame: what `search run` prints at its end."""
        from reports.tables import pareto_table

        table = pareto_table(self.trials(), self.metric, self.direction)
        if family is not None:
            if "family" in table and family not in set(table["family"]):
                known = sorted(set(self.trials()["family"].astype(str)))
                if family not in known:
                    raise UserError(f"no family {family!r} in {self.name!r}; it has {', '.join(known) or 'none'}")
            table = table[table["family"] == family]
        return table.reset_index(drop=True)

    def compare(self, **options: Any):
        """Which family wins at each budget, with confidence intervals: a `Comparison`
        (search/api/readings.py; `.to_dict()` is `search compare --format json`, `.frame()`
        its table). Options as `search compare`'s flags: families, metric, budgets, levels,
        confidence, interval, min_near, replicates."""
        from search.api.readings import compare

        names = [self.name] if len(self.names) > 1 else self.names
        return compare(self.store, names, **options)

    def predict(self, at: Any, **options: Any):
        """Each family's front read at budgets `at` above the search's, with intervals, and
        the configuration to train there: a `Prediction` (search/api/predictions.py;
        `.to_dict()` is `search predict --format json`). Options: families, confidence."""
        from search.api.predictions import predict

        return predict(self.store, self.names, at=at, **options)

    def load_model(
        self, trial: int, *, seed: int = 0, device: str = "cpu", artifacts: str | None = None, retraining: int = 0
    ) -> Any:
        """Trial `trial`'s trained module (its kept weights, checked against their record),
        in eval mode on `device`; `seed`: which of its runs (default its first);
        `retraining` k: a run of its retraining k (`search train`). Its family must be
        registered in this process (a plugin's: load the plugin first)."""
        from search.artifacts.load import load_model

        if len(self.names) > 1:
            raise UserError(
                f"{self.name!r} is {len(self.names)} replicate searches: open one of "
                f"{', '.join(self.names)} to load its trial"
            )
        return load_model(
            self.name, trial, storage=self.storage, seed=seed, artifacts=artifacts, device=device, retraining=retraining
        )


def open(name: str, storage: str | None = None, plugins: Iterable[str] = ()) -> Study:  # noqa: A001
    """The study `name` in `storage` (an SQLAlchemy URL or SQLite file; default
    $SEARCH_STORAGE or sqlite:///search.db), or the replicate searches stored under the
    name `search_repeats` gave them. `plugins`: modules or .py files registering the
    families its trials used (needed to load their models). UserError (one line) when
    there is no such study."""
    from search.plugins import load_plugins

    load_plugins(plugins)
    return _handle(name, storage)


def _handle(name: str, storage: str | None) -> Study:
    from core.errors import StorageError
    from search.api.run import open_store

    try:
        return Study(name, storage)
    except StorageError:
        store = open_store(storage)
        group = sorted(
            (
                r
                for r in (store.get_study(s.name) for s in store.list_studies() if s.name.startswith(f"{name}-r"))
                if (r.settings or {}).get("replicate_of") == name
            ),
            key=lambda r: r.settings.get("replicate", 0),
        )
        if not group:
            raise
        return Study(name, storage, [r.name for r in group])


def _every_option(fn):
    """`fn` with every run option in its signature and docstring (from `RunOptions`)."""
    from search.engine.run_options import options_doc, signature

    fn.__signature__ = signature(fn)
    fn.__doc__ = (fn.__doc__ or "") + options_doc()
    return fn


@_every_option
def run(
    space: str | list[str] | None = None,
    budget: int | str | None = None,
    *,
    task: str | None = None,
    trials: int | None = None,
    storage: str | None = None,
    plugins: Iterable[str] = (),
    report: bool = True,
    **options: Any,
) -> Study:
    """Run (or resume) a study, as `search run` does, and return its `Study`.

    The same options as `search run`'s flags, by the flags' names with underscores, with
    the same defaults and checks (one table declares them: search/engine/run_options.py
    `RunOptions`; the list below and this function's signature are made from it): bad
    input raises `core.errors.UserError` with one line and nothing is written. Values
    may be Python objects: `space` a list of families, `budget` a number or text such as
    "100K", `decide` a list of budgets, `task_option` a dict, `fuse` a bool.

    - space: the family or families searched (built-in or your own: `search.family`).
    - budget: the hard limit on trainable parameters, checked before anything trains.
    - task: the task (default: the first family's own).
    - trials: finished trials to reach (default 20).
    - storage: an SQLAlchemy URL or SQLite file (default $SEARCH_STORAGE or search.db).
    - plugins: modules or .py files to load first (as `--plugin`); families and tasks
      registered in this process before the call need none.
    - report: write the report pages into `out` (default search-reports/).

    Progress goes to stderr, the summary and Pareto table to stdout, as on the command
    line. With `search_repeats=K` the handle stands for the K searches (`compare` pools
    them)."""
    from search.api.run import execute
    from search.engine.run_options import RunOptions
    from search.plugins import load_plugins

    listed = list(plugins)
    load_plugins(listed)
    a = RunOptions.from_python(
        **{
            **options,
            "space": space,
            "budget": budget,
            "task": task,
            "trials": trials,
            "storage": storage,
            "no_report": not report,
            "plugin": listed or None,
        }
    )
    done = execute(a)
    names = [record.name for record, _ in done]
    if len(names) == 1:
        return Study(names[0], storage)
    return Study(done[0][0].settings.get("replicate_of") or names[0], storage, names)
