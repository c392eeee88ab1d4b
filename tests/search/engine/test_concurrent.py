"""Two `search run` processes on one study: no trial lost, none duplicated, and the
study stops at --trials (give or take the trials in flight when it got there)."""

import os
import uuid

import pytest

from storage import Store
from tests.search.conftest import run_subprocess

BACKENDS = ["sqlite"] + (["postgresql"] if os.environ.get("SEARCH_TEST_POSTGRES_URL") else [])


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_two_processes_share_a_study(tmp_path, backend):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}" if backend == "sqlite" else os.environ["SEARCH_TEST_POSTGRES_URL"]
    study = f"two-{uuid.uuid4().hex[:8]}"
    args = [
        "run",
        "--space",
        "hourglass,conventional",
        "--task",
        "digits-denoise",
        "--budget",
        "60K",
        "--trials",
        "8",
        "--epochs",
        "3",
        "--no-report",
        "--study",
        study,
        "--storage",
        url,
        "--pruner",
        "none",  # counts complete trials: none stopped early
        "--artifacts",
        str(tmp_path / "weights"),
    ]  # (a PostgreSQL database has no folder beside it)
    procs = [run_subprocess(args + ["--seed", str(i)], cwd=tmp_path) for i in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-500:] for o in outs]
    store = Store(url)
    recs = store.trials(study)
    numbers = [r.number for r in recs]
    assert numbers == list(range(len(recs)))  # unique and consecutive
    from search.engine.seed_checks import checked_trial, is_check

    done = [r for r in recs if r.status == "complete" and not is_check(r)]
    assert 8 <= len(done) <= 9  # each process stops asking at 8; one may have had one in flight
    checked = {checked_trial(r.note) for r in recs if is_check(r)}  # then each ran its seed checks
    assert checked <= {r.number for r in done}
    assert all(r.metrics.get("psnr") for r in done)  # every complete trial has its result
    owners = {r.owner.rsplit(":", 2)[1] for r in recs}
    assert len(owners) == 2  # both processes ran trials
    # both processes kept their fronts' weights (--keep pareto) in one folder: every record
    # left points at a whole file, and the folder holds nothing else
    kept = [
        a for rows in store.artifacts_of(study, numbers, "weights").values() for a in rows if a["removed_at"] is None
    ]
    assert kept and {p.name for p in (tmp_path / "weights").iterdir()} == {a["store_key"] for a in kept}
    if backend == "postgresql":
        store.delete_study(study)
