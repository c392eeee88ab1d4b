"""`Store`: the one storage interface of the app (SQLite by default, any SQLAlchemy URL).

Every write runs in one session that commits or rolls back, and database errors become
`StorageError` (Optuna's storages/_rdb style). Only `storage.records` dataclasses,
plain dicts and DataFrames leave it. Its parts, one job each:

    storage/database.py        URLs, engine, schema migration on open, one transaction per call
    storage/studies.py       create/load, get, list and delete studies
    storage/trial_writes.py  number and store trials, interrupt, heartbeat, progress counts
    storage/trial_reads.py   trial records, per-epoch rows, artifacts, the trials frame
    storage/retrainings.py   a trial's retrainings (`search train`), stored beside the search's runs
    storage/sql.py           read-only ad-hoc SQL

The study loop needs only the part listed by `search.engine.study_store.StudyStore`.
"""

from __future__ import annotations

from storage.database import DEFAULT_URL, SQLITE_BUSY_TIMEOUT_S, _Conflict, default_url, normalize_url
from storage.retrainings import Retrainings
from storage.sql import ReadonlySQL
from storage.studies import Studies
from storage.trial_reads import TrialReads
from storage.trial_writes import INTERRUPTED_NOTE, TrialWrites


class Store(Studies, TrialWrites, TrialReads, Retrainings, ReadonlySQL):
    """Studies, trials, runs and epochs in one database; see the module docstring."""

    def __enter__(self) -> Store:
        return self


__all__ = [
    "DEFAULT_URL",
    "INTERRUPTED_NOTE",
    "SQLITE_BUSY_TIMEOUT_S",
    "Store",
    "_Conflict",
    "default_url",
    "normalize_url",
]
