"""Owners, heartbeats, interruptions, retries and progress (many processes on one study);
run against every backend (see conftest)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from core.errors import StorageError
from storage import Store
from storage.store import INTERRUPTED_NOTE
from tests.storage.helpers import make_result, make_run


def add(store: Store, study: str, **kw: object) -> int:
    return store.add_trial(
        study,
        family="f",
        config=kw.pop("config", {}),
        params=1,  # type: ignore[arg-type]
        seeds=[0],
        **kw,
    )  # type: ignore[arg-type]


def finish(store: Store, study: str, number: int, status: str = "complete") -> None:
    run = make_run(0, {"psnr": 1.0}, status="complete" if status == "complete" else status)
    store.finish_trial(
        study, number, make_result(number, [run], status=status, error=None if status == "complete" else "x")
    )


def by_number(store: Store, study: str) -> dict[int, object]:
    return {t.number: t for t in store.trials(study)}


def tick() -> None:
    """Let the clock move on (the stored times have microseconds)."""
    time.sleep(0.01)


def test_add_trial_owner_attempt_retry_of(store: Store, study: str) -> None:
    before = datetime.now(UTC)
    a = add(store, study, owner="host:1:abc")
    b = add(store, study, attempt=2, retry_of=a, owner="host:2:def")
    c = add(store, study)
    after = datetime.now(UTC)
    t = by_number(store, study)
    ta, tb, tc = t[a], t[b], t[c]
    assert (ta.owner, ta.attempt, ta.retry_of) == ("host:1:abc", 0, None)
    assert (tb.owner, tb.attempt, tb.retry_of) == ("host:2:def", 2, a)
    assert (tc.owner, tc.heartbeat_at, tc.attempt, tc.retry_of) == (None, None, 0, None)
    for tr in (ta, tb):  # the heartbeat starts with the trial, as aware UTC
        assert tr.heartbeat_at == tr.started_at
        assert tr.heartbeat_at.utcoffset() == timedelta(0)
        assert before <= tr.heartbeat_at <= after
    cols, rows = store.query_readonly(
        "SELECT number, owner, attempt, retry_of, heartbeat_at IS NULL FROM trials ORDER BY number"
    )
    assert [r[:4] for r in rows] == [(a, "host:1:abc", 0, None), (b, "host:2:def", 2, a), (c, None, 0, None)]
    assert [bool(r[4]) for r in rows] == [False, False, True]


def test_heartbeat_touches_only_the_owners_running_trials(store: Store, study: str) -> None:
    mine = add(store, study, owner="me")
    theirs = add(store, study, owner="other")
    done = add(store, study, owner="me")
    finish(store, study, done)
    stopped = add(store, study, owner="me")
    store.interrupt_trials(study, [stopped])
    not_listed = add(store, study, owner="me")
    old = {n: t.heartbeat_at for n, t in by_number(store, study).items()}
    tick()
    store.heartbeat(study, [mine, theirs, done, stopped], "me")
    new = {n: t.heartbeat_at for n, t in by_number(store, study).items()}
    assert new[mine] > old[mine] and new[mine].utcoffset() == timedelta(0)
    assert new[mine] <= datetime.now(UTC)
    for n in (theirs, done, stopped, not_listed):
        assert new[n] == old[n], n
    store.heartbeat(study, [], "me")  # nothing to do
    assert {n: t.heartbeat_at for n, t in by_number(store, study).items()} == new
    with pytest.raises(StorageError, match="no study named 'nope'"):
        store.heartbeat("nope", [mine], "me")


def test_interrupt_running_only_orphans(store: Store, study: str) -> None:
    dead = add(store, study, owner="dead", config={"k": 1})
    stale = add(store, study, owner="slow")
    no_owner = add(store, study)
    alive = add(store, study, owner="alive")
    done = add(store, study, owner="dead")
    finish(store, study, done)
    tick()
    cutoff = datetime.now(UTC)
    tick()
    store.heartbeat(study, [alive], "alive")
    seen: list[int] = []

    def orphan(t) -> bool:  # type: ignore[no-untyped-def]
        seen.append(t.number)
        assert t.status == "running"
        return t.owner == "dead" or t.heartbeat_at is None or t.heartbeat_at < cutoff

    got = store.interrupt_running(study, orphan=orphan)
    assert sorted(seen) == [dead, stale, no_owner, alive]  # only running trials are asked about
    assert [(t.number, t.status, t.note) for t in got] == [
        (n, "interrupted", INTERRUPTED_NOTE) for n in (dead, stale, no_owner)
    ]
    assert got[0].config == {"k": 1} and got[0].owner == "dead"
    status = {n: t.status for n, t in by_number(store, study).items()}
    assert status == {
        dead: "interrupted",
        stale: "interrupted",
        no_owner: "interrupted",
        alive: "running",
        done: "complete",
    }
    assert store.interrupt_running(study, orphan=lambda t: False) == []
    assert [t.number for t in store.interrupt_running(study)] == [alive]  # no predicate: all


def test_interrupt_trials(store: Store, study: str) -> None:
    a, b, c = add(store, study), add(store, study), add(store, study)
    finish(store, study, b)
    store.create_or_load_study("other", task="t", families=["f"], metric="psnr", direction="maximize", budget=1)
    other = add(store, "other")  # same number as `a`, another study
    store.interrupt_trials(study, [a, b], note="stopped by Ctrl-C")
    t = by_number(store, study)
    assert (t[a].status, t[a].note) == ("interrupted", "stopped by Ctrl-C")
    assert (t[b].status, t[b].note) == ("complete", None)  # finished: left alone
    assert t[c].status == "running"  # not listed
    assert by_number(store, "other")[other].status == "running"
    store.interrupt_trials(study, [c])
    assert by_number(store, study)[c].note == INTERRUPTED_NOTE
    store.interrupt_trials(study, [])
    with pytest.raises(StorageError, match="no study named"):
        store.interrupt_trials("nope", [a])


def test_retry_candidates(store: Store, study: str) -> None:
    failed = add(store, study)
    finish(store, study, failed, "failed")
    interrupted = add(store, study)
    store.interrupt_trials(study, [interrupted])
    exhausted = add(store, study, attempt=2)
    finish(store, study, exhausted, "failed")
    complete = add(store, study)
    finish(store, study, complete)
    retried = add(store, study)
    finish(store, study, retried, "failed")
    retry = add(store, study, attempt=1, retry_of=retried)  # running retry of `retried`
    diverged = add(store, study, attempt=1)
    finish(store, study, diverged, "diverged")
    # A retry in another study does not hide this study's trial with the same number.
    store.create_or_load_study("other", task="t", families=["f"], metric="psnr", direction="maximize", budget=1)
    add(store, "other")
    add(store, "other", retry_of=failed)

    def numbers(statuses: list[str], max_attempt: int) -> list[int]:
        return [t.number for t in store.retry_candidates(study, statuses, max_attempt)]

    assert numbers(["failed", "interrupted"], 2) == [failed, interrupted]
    assert numbers(["failed"], 2) == [failed]
    assert numbers(["failed", "diverged"], 3) == [failed, exhausted, diverged]
    assert numbers(["failed", "interrupted", "diverged"], 1) == [failed, interrupted]
    assert numbers(["interrupted"], 0) == []
    assert numbers(["complete", "running"], 5) == [complete, retry]
    got = store.retry_candidates(study, ["failed"], 2)[0]
    assert (got.number, got.status, got.attempt, got.retry_of) == (failed, "failed", 0, None)
    # Once the retry of `failed` exists, `failed` is no candidate any more.
    add(store, study, attempt=1, retry_of=failed)
    assert numbers(["failed", "interrupted"], 2) == [interrupted]


def test_progress(store: Store, study: str) -> None:
    assert store.progress(study) == (0, 0)
    complete = add(store, study)
    finish(store, study, complete)
    failed = add(store, study)
    finish(store, study, failed, "failed")
    retry = add(store, study, attempt=1, retry_of=failed)
    assert store.progress(study) == (1, 1)  # `failed` is superseded by its running retry
    finish(store, study, retry)
    diverged = add(store, study)
    finish(store, study, diverged, "diverged")
    interrupted = add(store, study)
    store.interrupt_trials(study, [interrupted])
    store.add_rejected(study, family="f", config={}, params=10**9, reason="too big")
    add(store, study, owner="me")
    add(store, study, owner="you")
    assert store.progress(study) == (3, 2)  # complete, retry, diverged; two running
    store.create_or_load_study("other", task="t", families=["f"], metric="psnr", direction="maximize", budget=1)
    assert store.progress("other") == (0, 0)
    add(store, "other", retry_of=complete)  # another study's retry_of changes nothing here
    assert store.progress(study) == (3, 2)
    with pytest.raises(StorageError, match="no study named"):
        store.progress("nope")
