"""A search outlives its database's restart (`--storage-wait`): on a private PostgreSQL
server the tests stop (`-m immediate`, as a crash or a failover) and start again, and
through a proxy that cuts connections, also just after a COMMIT was carried out and
before its answer came back. Every search ends with each trial recorded once.

Each test runs a real `search run` in a child process (tens of seconds): marked slow."""

from __future__ import annotations

import time
import uuid

import pytest

from core.errors import StorageError
from core.statuses import FINISHED_STATUSES
from storage import Store
from tests.search.conftest import run_subprocess
from tests.storage.pg_server import SKIP_REASON, PgServer, server_bin
from tests.storage.tcp_proxy import CuttingProxy

pytestmark = [pytest.mark.slow, pytest.mark.skipif(server_bin() is None, reason=SKIP_REASON)]
EPOCHS = 2


@pytest.fixture(scope="module")
def pg():
    server = PgServer()
    yield server
    server.close()


@pytest.fixture
def db(pg):
    if not pg.running():  # a test that failed half-way may have left it stopped
        pg.start()
    return pg


def search_args(url: str, study: str, trials: int, *extra: str) -> list[str]:
    return [
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "20K",
        "--trials",
        str(trials),
        "--epochs",
        str(EPOCHS),
        "--sampler",
        "random",
        "--pruner",
        "none",
        "--keep",
        "none",
        "--no-report",
        "--seed-checks",
        "0",  # the trials counted below
        "--study",
        study,
        "--storage",
        url,
        *extra,
    ]


def finished(url: str, study: str) -> int:
    """Finished trials of `study` now (0 while the database or the study is not there)."""
    try:
        with Store(url) as store:
            return sum(r.status in FINISHED_STATUSES for r in store.trials(study))
    except StorageError:
        return 0


def wait_for(condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def assert_each_trial_once(url: str, study: str, trials: int) -> None:
    """`trials` finished trials, each with its one run of EPOCHS epochs; none running; an
    interrupted trial (its process stopped) has nothing stored and exactly one retry."""
    with Store(url) as store:
        recs = store.trials(study)
        assert [r.number for r in recs] == list(range(len(recs)))
        assert not [r.number for r in recs if r.status == "running"]
        done = [r for r in recs if r.status in FINISHED_STATUSES]
        assert len(done) == trials, [(r.number, r.status) for r in recs]
        for r in done:
            assert len(store.epochs(study, r.number)) == EPOCHS, r.number
        for r in (r for r in recs if r.status == "interrupted"):
            assert store.epochs(study, r.number) == []
            assert [x.number for x in recs if x.retry_of == r.number] != []
            assert len([x for x in recs if x.retry_of == r.number]) == 1


def test_a_search_outlives_a_restart_of_its_database(db, tmp_path):
    study = f"restart-{uuid.uuid4().hex[:8]}"
    proc = run_subprocess(search_args(db.url, study, 24), cwd=tmp_path)
    wait_for(lambda: finished(db.url, study) >= 3 or proc.poll() is not None)
    db.stop("immediate")
    time.sleep(3)
    db.start()
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    assert "is unreachable" in err and "the database is back after" in err, err[-2000:]
    assert_each_trial_once(db.url, study, 24)
    with Store(db.url) as store:
        assert not [r for r in store.trials(study) if r.status == "interrupted"]  # the trial in flight was kept


def test_past_the_wait_the_search_stops_with_one_line_and_resumes(db, tmp_path):
    study = f"away-{uuid.uuid4().hex[:8]}"
    args = search_args(db.url, study, 16)
    proc = run_subprocess([*args, "--storage-wait", "1"], cwd=tmp_path)
    wait_for(lambda: finished(db.url, study) >= 3 or proc.poll() is not None)
    db.stop("immediate")
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        db.start()
    assert proc.returncode == 2, err[-2000:]
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "--storage-wait" in errors[0], err[-2000:]
    proc = run_subprocess(args, cwd=tmp_path)  # the same command again resumes
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    assert_each_trial_once(db.url, study, 16)


def _cut_while_running(proc, proxy: CuttingProxy, every_s: float = 1.5, most: int = 6) -> None:
    """Cut every connection now and then while the search runs, besides the COMMITs'."""
    cut = 0
    while proc.poll() is None and cut < most:
        time.sleep(every_s)
        proxy.cut_all()
        cut += 1


EXECUTOR_FLAGS = {
    "local": (),
    "ray": ("--executor", "ray", "--cpus-per-trial", "1", "--max-concurrent", "2"),
    "tune": ("--executor", "tune", "--cpus-per-trial", "1", "--max-concurrent", "2"),
}


@pytest.mark.parametrize("executor", list(EXECUTOR_FLAGS))
def test_nothing_is_lost_or_recorded_twice_over_random_cuts(db, tmp_path, executor):
    """The search's driver loses its connections again and again (the Ray and Tune workers
    never touch the database: their trials go on); each write it retries lands once."""
    proxy = CuttingProxy(db.port, p_commit=0.3, max_cuts=20, seed=7).start()
    url = db.url.replace(f":{db.port}/", f":{proxy.port}/")
    study = f"cuts-{executor}-{uuid.uuid4().hex[:8]}"
    trials = 30
    extra = EXECUTOR_FLAGS[executor] + (("--tune-dir", str(tmp_path / "tune")) if executor == "tune" else ())
    try:
        proc = run_subprocess(search_args(url, study, trials, *extra), cwd=tmp_path)
        # (Ray's start and a first trial: a minute on 2 cores alone, over three beside other jobs)
        wait_for(lambda: finished(db.url, study) >= 1 or proc.poll() is not None, timeout=420)
        _cut_while_running(proc, proxy)
        _, err = proc.communicate(timeout=600)
    finally:
        proxy.stop()
    assert proc.returncode == 0, err[-2000:]
    assert proxy.commit_cuts >= 10 and proxy.cuts >= 20, (proxy.commit_cuts, proxy.other_cuts, proxy.commits)
    assert_each_trial_once(db.url, study, trials)
