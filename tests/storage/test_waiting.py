"""storage/waiting.py: which errors mean the database is unreachable, the retry loop, and
writes that are safe to retry (on every backend of the conformance suite)."""

from __future__ import annotations

import io
import time

import psycopg
import pytest
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

import storage.waiting as waiting
from core.errors import StorageError, StorageUnavailable
from storage import Store
from storage.waiting import Outage, is_unavailable, retrying
from tests.storage.helpers import make_result, make_run

# The public Store methods that never wait: opening and closing, `search sql` (a person
# waits for its answer) and `search delete` (asked once, by a person).
NOT_WAITED = {"close", "query_readonly", "delete_study"}


def _wrapped(orig: BaseException, cls=OperationalError) -> BaseException:
    return cls("SELECT 1", {}, orig)


@pytest.mark.parametrize(
    "orig, dialect, expected",
    [
        (psycopg.OperationalError("connection failed: Connection refused"), "postgresql", True),
        (
            psycopg.OperationalError("consuming input failed: server closed the connection unexpectedly"),
            "postgresql",
            True,
        ),
        (psycopg.errors.AdminShutdown("terminating connection due to administrator command"), "postgresql", True),
        (psycopg.errors.CannotConnectNow("the database system is starting up"), "postgresql", True),
        (psycopg.errors.QueryCanceled("canceling statement due to statement timeout"), "postgresql", False),
        (psycopg.errors.UniqueViolation("duplicate key"), "postgresql", False),
        (psycopg.OperationalError("database is locked"), "sqlite", False),  # SQLite is a file: never "away"
    ],
)
def test_is_unavailable(orig, dialect, expected):
    cls = IntegrityError if isinstance(orig, psycopg.errors.UniqueViolation) else OperationalError
    assert is_unavailable(_wrapped(orig, cls), dialect) is expected


def test_a_refused_query_is_not_unavailability():
    assert not is_unavailable(_wrapped(psycopg.errors.UndefinedTable("no table"), ProgrammingError), "postgresql")
    assert not is_unavailable(ValueError("no"), "postgresql")


@pytest.fixture
def quick(monkeypatch):
    monkeypatch.setattr(waiting, "FIRST_PAUSE_S", 0.01)
    monkeypatch.setattr(waiting, "MAX_PAUSE_S", 0.02)


def _flaky(fails: int, outage: Outage):
    calls = []

    def step():
        calls.append(1)
        if len(calls) <= fails:
            raise StorageUnavailable("storage error in 'db': connection refused")
        outage.back()  # as Database._session does when a transaction reaches the database
        return "done"

    return step, calls


def test_a_call_waits_for_the_database_and_says_so_twice(quick):
    err = io.StringIO()
    outage = Outage("postgresql://db", wait_s=5, err=err)
    step, calls = _flaky(3, outage)
    assert retrying(outage, step) == "done"
    assert len(calls) == 4 and outage.gone == outage.reported == 1 and outage.since is None
    lines = err.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert "'postgresql://db' is unreachable since" in lines[0] and "waiting up to 5 s" in lines[0]
    assert "is back after" in lines[1]


def test_a_connection_the_first_retry_replaces_is_not_reported(quick):
    err = io.StringIO()
    outage = Outage("db", wait_s=5, err=err)
    step, calls = _flaky(1, outage)
    assert retrying(outage, step) == "done"
    assert len(calls) == 2 and outage.gone == 1 and outage.reported == 0 and err.getvalue() == ""


def test_past_the_wait_the_call_fails_with_one_line(quick):
    outage = Outage("db", wait_s=0.1, err=io.StringIO())
    step, calls = _flaky(10**6, outage)
    started = time.monotonic()
    with pytest.raises(StorageUnavailable, match=r"unreachable for 0.1 s, --storage-wait"):
        retrying(outage, step)
    assert time.monotonic() - started < 2 and len(calls) > 1
    # the database still away: the next call fails at once, not after another wait
    step, calls = _flaky(10**6, outage)
    with pytest.raises(StorageUnavailable):
        retrying(outage, step)
    assert len(calls) == 1


def test_without_a_wait_or_with_another_error_nothing_is_retried(quick):
    outage = Outage("db", wait_s=0, err=io.StringIO())
    step, calls = _flaky(1, outage)
    with pytest.raises(StorageUnavailable):
        retrying(outage, step)
    assert len(calls) == 1

    def refused():
        calls.append(1)
        raise StorageError("storage conflict")

    outage, calls = Outage("db", wait_s=5, err=io.StringIO()), []
    with pytest.raises(StorageError):
        retrying(outage, refused)
    assert len(calls) == 1 and outage.gone == 0


def test_only_the_outermost_waiting_call_retries(quick):
    outage = Outage("db", wait_s=5, err=io.StringIO())
    inner_calls = []

    def inner():
        inner_calls.append(1)
        if len(inner_calls) <= 2:
            raise StorageUnavailable("away")
        return "x"

    assert retrying(outage, lambda: retrying(outage, inner)) == "x"
    assert len(inner_calls) == 3  # the outer loop ran it again; the inner one did not loop


def test_every_store_call_waits_but_the_listed_ones():
    public = {n for n in dir(Store) if not n.startswith("_")}
    waited = {n for n in public if getattr(getattr(Store, n), "waits", False)}
    assert public - waited == NOT_WAITED, sorted(public - waited - NOT_WAITED)


# -- retried writes on every backend ------------------------------------------------------


def test_a_retried_add_trial_finds_its_row(store: Store, study: str):
    kw = dict(family="hourglass", config={"L": 1}, params=10, seeds=[0], owner="h:1:t")
    first = store.add_trial(study, token="a" * 32, **kw)
    again = store.add_trial(study, token="a" * 32, **kw)  # as a retry after the answer to COMMIT was lost
    other = store.add_trial(study, **kw)  # a new call: its own token, its own row
    assert again == first and other == first + 1
    assert [t.number for t in store.trials(study)] == [first, other]
    rejected = store.add_rejected(study, family="hourglass", config={"L": 9}, params=99, reason="over", token="b" * 32)
    assert (
        store.add_rejected(study, family="hourglass", config={"L": 9}, params=99, reason="over", token="b" * 32)
        == rejected
    )
    assert len(store.trials(study)) == 3


def test_a_retried_retraining_is_stored_once(store: Store, study: str):
    n = store.add_trial(study, family="hourglass", config={"L": 1}, params=10, seeds=[0])
    store.finish_trial(study, n, make_result(n, [make_run(0, {"psnr": 20.0})]))
    result = make_result(n, [make_run(1, {"psnr": 21.0})])
    k = store.add_retraining(study, n, {"epochs": 3}, result, token="c" * 32)
    assert store.add_retraining(study, n, {"epochs": 3}, result, token="c" * 32) == k
    assert [r.number for r in store.retrainings(study, [n])] == [k]


def test_a_retried_removal_returns_what_its_first_try_marked(store: Store, study: str):
    from storage.convert import now_utc

    n = store.add_trial(study, family="hourglass", config={"L": 1}, params=10, seeds=[0])
    run = make_run(0, {"psnr": 20.0})
    run.artifacts = {
        "weights": {
            "media_type": "application/x",
            "store": "file:///w",
            "store_key": "k0",
            "size": 1,
            "sha256": "0" * 64,
        }
    }
    store.finish_trial(study, n, make_result(n, [run]))
    at = now_utc()
    first = store.remove_artifacts(study, [n], "weights", at=at)
    assert [a["store_key"] for a in first] == ["k0"]
    assert store.remove_artifacts(study, [n], "weights", at=at) == first  # the retry: the files still deleted
    assert store.remove_artifacts(study, [n], "weights") == []  # another call: nothing left to mark
