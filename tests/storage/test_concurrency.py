"""Several writers on one database never produce duplicate trial numbers."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

from storage import Store
from tests.storage import _workers

N = 20


def mp_context() -> multiprocessing.context.BaseContext:
    """Fresh processes (no inherited connections or threads); with a fork server where
    there is one, so the storage modules are imported once, not by every worker."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["storage.store", "tests.storage._workers", "tests.storage.helpers"])
    return ctx


def test_threads_number_trials_uniquely(url: str, study: str) -> None:
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda _: _workers.add_trials(url, study, N), range(2)))
    assert sorted(got[0] + got[1]) == list(range(2 * N))
    with Store(url) as store:
        assert [t.number for t in store.trials(study)] == list(range(2 * N))


@pytest.mark.slow
def test_processes_create_and_number_uniquely(url: str) -> None:
    """Two processes race to create the schema of an empty database, then number trials."""
    with ProcessPoolExecutor(2, mp_context=mp_context()) as pool:
        futures = [pool.submit(_workers.open_and_add, url, N) for _ in range(2)]
        got = [f.result() for f in futures]
    assert sorted(got[0] + got[1]) == list(range(2 * N))


WORKERS, PER_WORKER = 4, 50


@pytest.mark.slow
def test_processes_add_and_finish_on_one_study(url: str, study: str) -> None:
    """4 processes x 50 add_trial + finish_trial on one study, started together: 200
    consecutive numbers, each trial stored once with its own result."""
    ctx = mp_context()
    barrier, queue = ctx.Barrier(WORKERS), ctx.Queue()
    procs = [
        ctx.Process(target=_workers.add_and_finish, args=(url, study, PER_WORKER, f"w{k}", barrier, queue))
        for k in range(WORKERS)
    ]
    for p in procs:
        p.start()
    try:
        got = dict(queue.get(timeout=120) for _ in procs)
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    errors = {k: v for k, v in got.items() if isinstance(v, str)}
    assert not errors
    numbers = sorted(n for ns in got.values() for n in ns)
    assert numbers == list(range(WORKERS * PER_WORKER))  # none lost, none duplicated
    with Store(url) as store:
        trials = store.trials(study)
        assert [t.number for t in trials] == numbers
        assert {t.status for t in trials} == {"complete"}
        by_worker = {(t.config["worker"], t.config["i"]): t for t in trials}
        assert len(by_worker) == WORKERS * PER_WORKER
        for (tag, i), t in by_worker.items():
            assert t.number in got[tag] and t.owner == tag
            assert t.metrics["psnr"] == (float(i), None, 1)
        assert store.progress(study) == (WORKERS * PER_WORKER, 0)
        for table, rows in (("runs", 1), ("trial_metrics", 1), ("epochs", 2)):
            n = store.query_readonly(f"SELECT COUNT(*) FROM {table}")[1][0][0]
            assert n == rows * WORKERS * PER_WORKER, table
