"""The database connection under `Store`: URLs, the engine, and one transaction per call.

`Database` opens (and creates or migrates) the schema at a SQLAlchemy URL, and its
`_session()` runs one transaction that commits or rolls back, mapping database errors to
`StorageError` (`_Conflict` for a refused unique/foreign-key write, which callers may
retry; `StorageUnavailable` when the database could not be reached, which a store opened
with `wait_s` retries: storage/waiting.py). The parts of `Store` (storage/studies.py, trial_writes.py,
trial_reads.py, sql.py)
build on it.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn, TextIO

from sqlalchemy import Engine, create_engine, event, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from core.errors import StorageError, StorageUnavailable, one_line
from storage.migrate import ensure_schema
from storage.schema import Study, Trial
from storage.waiting import Outage, is_unavailable

DEFAULT_URL = "sqlite:///search.db"
SQLITE_BUSY_TIMEOUT_S = 5.0
# Opening a SQLite store waits this long in all for another process that holds the database
# (e.g. creating or upgrading the schema while several drivers start at once on a loaded
# machine), retrying past the busy timeout, before it gives up.
SCHEMA_LOCK_WAIT_S = 60.0


def default_url() -> str:
    """`$SEARCH_STORAGE` if set, else a SQLite file `search.db` in the current directory."""
    return os.environ.get("SEARCH_STORAGE") or DEFAULT_URL


def normalize_url(url: str) -> str:
    """A plain filesystem path (no `://`) becomes an absolute sqlite URL."""
    if "://" in url:
        return url
    return "sqlite:///" + os.path.abspath(os.path.expanduser(url))


class _Conflict(StorageError):
    """A unique or foreign-key constraint refused a write (callers may retry)."""


def _roll_back(session: Session) -> None:
    """Roll back, quietly when the connection is already gone (its transaction went with
    it)."""
    try:
        session.rollback()
    except SQLAlchemyError:
        pass


def _sqlite_on_connect(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys = ON")
    cur.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
    cur.execute("PRAGMA journal_mode = WAL")
    cur.close()


def _is_locked(exc: BaseException | None) -> bool:
    """SQLite's "database is locked", in the exception or one it was raised from."""
    while exc is not None:
        if "database is locked" in str(exc):
            return True
        exc = exc.__cause__
    return False


def _waiting_for_locks(step: Any, wait_s: float) -> Any:
    """step(), tried again after a short random pause while it fails with "database is
    locked", until `wait_s` seconds have passed (then the error goes up)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return step()
        except (SQLAlchemyError, StorageError) as exc:
            if not _is_locked(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(random.uniform(0.1, 0.5))


class Database:
    """An open database: engine, sessions, and the lookups every part of `Store` uses."""

    def __init__(self, url: str | None = None, *, wait_s: float = 0.0, err: TextIO | None = None) -> None:
        """Open (create or migrate) the database at `url`. With `wait_s` > 0, a call that
        cannot reach the database later retries until it is back, for up to `wait_s`
        seconds (storage/waiting.py), saying so on `err` (default stderr); opening it
        does not wait."""
        self.url = normalize_url(url if url is not None else default_url())
        self._shown = self.url
        self._outage: Outage | None = None
        try:
            parsed = make_url(self.url)
            self._shown = parsed.render_as_string(hide_password=True)
            self.dialect = parsed.get_backend_name()
            kwargs: dict[str, Any] = {}
            if self.dialect == "sqlite":
                kwargs["connect_args"] = {"timeout": SQLITE_BUSY_TIMEOUT_S}
            else:
                kwargs["pool_pre_ping"] = True
            self._engine: Engine = create_engine(parsed, **kwargs)
            if self.dialect == "sqlite":
                event.listen(self._engine, "connect", _sqlite_on_connect)
            if self.dialect == "sqlite":
                _waiting_for_locks(lambda: ensure_schema(self._engine, self._shown), SCHEMA_LOCK_WAIT_S)
            else:
                ensure_schema(self._engine, self._shown)
        except StorageError:
            raise
        except ImportError as exc:
            raise StorageError(
                f"cannot open storage '{self._shown}': its database driver is not installed ({exc})"
            ) from exc
        except (SQLAlchemyError, ValueError, OSError) as exc:
            raise StorageError(f"cannot open storage '{self._shown}': {one_line(exc)}") from exc
        self._sessions = sessionmaker(self._engine, expire_on_commit=False)
        self._outage = Outage(self._shown, wait_s, err)

    # -- life cycle ---------------------------------------------------------------
    def close(self) -> None:
        """Release every pooled connection."""
        self._engine.dispose()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._shown!r})"

    @contextmanager
    def _session(self) -> Iterator[Session]:
        """One transaction: commit on success, roll back and map errors on failure."""
        session = self._sessions()
        try:
            yield session
            session.commit()
            if self._outage is not None:
                self._outage.back()  # this call reached the database (one that needs none proves nothing)
        except IntegrityError as exc:
            session.rollback()
            raise _Conflict(f"storage conflict in '{self._shown}': {one_line(exc)}") from exc
        except SQLAlchemyError as exc:
            _roll_back(session)
            kind = StorageUnavailable if is_unavailable(exc, self.dialect) else StorageError
            raise kind(f"storage error in '{self._shown}': {one_line(exc)}") from exc
        except BaseException:
            _roll_back(session)
            raise
        finally:
            session.close()

    # -- lookups ------------------------------------------------------------------
    def _study(self, session: Session, name: str) -> Study:
        study = session.scalar(select(Study).where(Study.name == name))
        if study is None:
            self._no_study(session, name)
        return study

    def _study_id(self, session: Session, name: str) -> int:
        """The study's id alone: the per-trial writes need no more, and loading the whole
        row (its JSON settings) costs more than the write itself."""
        study_id = session.scalar(select(Study.id).where(Study.name == name))
        if study_id is None:
            self._no_study(session, name)
        return int(study_id)

    @staticmethod
    def _no_study(session: Session, name: str) -> NoReturn:
        known = session.scalars(select(Study.name).order_by(Study.name)).all()
        raise StorageError(f"no study named {name!r}; known: {', '.join(known) if known else '(none)'}")

    @staticmethod
    def _trial(s: Session, study: Study, number: int) -> Trial:
        trial = s.scalar(select(Trial).where(Trial.study_id == study.id, Trial.number == number))
        if trial is None:
            raise StorageError(f"study {study.name!r} has no trial {number}")
        return trial
