"""Several writers on one database never produce duplicate trial numbers."""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from storage import Store
from tests.storage import _workers

N = 20


def test_threads_number_trials_uniquely(url: str, study: str) -> None:
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda _: _workers.add_trials(url, study, N), range(2)))
    assert sorted(got[0] + got[1]) == list(range(2 * N))
    with Store(url) as store:
        assert [t.number for t in store.trials(study)] == list(range(2 * N))


@pytest.mark.slow
def test_processes_create_and_number_uniquely(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'race.db'}"
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_workers.open_and_add, url, N) for _ in range(2)]
        got = [f.result() for f in futures]
    assert sorted(got[0] + got[1]) == list(range(2 * N))
