"""`search export-optuna`: a study written as an Optuna study (search/integrations/optuna_export.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from core.errors import UserError
from search.cli.common import open_store, storage_arg

if TYPE_CHECKING:  # storage (SQLAlchemy) loads only when a command needs it
    from storage.records import StudyRecord


def add_parser(sub) -> None:
    """`search export-optuna`'s flags."""
    ex = sub.add_parser("export-optuna", help="write a study as an Optuna study (optuna-dashboard opens it)")
    ex.add_argument("study")
    ex.add_argument("--to", required=True, metavar="URL", help="Optuna storage URL, e.g. sqlite:///optuna.db")
    ex.add_argument("--name", help="the Optuna study's name (default: the study's)")
    storage_arg(ex)
    ex.set_defaults(func=cmd_export_optuna)


def default_log_scale(record: StudyRecord) -> Callable[[str, str], bool]:
    """(family, key) -> whether the family's default space on the study's task draws the
    key on a log scale (False where that cannot be told)."""
    from search.spaces import default_space
    from tasks import get_task

    try:
        io = get_task(record.task, (record.settings or {}).get("task_options") or {}).io()
    except UserError:
        return lambda family, key: False

    @cache
    def log(family: str, key: str) -> bool:
        try:
            return default_space(family, io).dim(key).log
        except (UserError, KeyError):
            return False

    return log


def cmd_export_optuna(a: argparse.Namespace) -> int:
    from search.integrations.optuna_export import export_study

    store = open_store(a.storage)
    record = store.get_study(a.study)
    trials = store.trials(a.study)
    study = export_study(record, trials, a.to, a.name, default_log_scale(record))
    print(
        f"exported {len(study.trials)} trial(s) of {a.study!r} to {a.to} as Optuna study {study.study_name!r} "
        f"(running trials are left out); open it with: optuna-dashboard {a.to}"
    )
    return 0
