"""The Ray executor on a local CPU-only Ray instance (num_cpus=2)."""
import pytest
import torch

from core.trials import TrainSettings
from search.executors.ray import worker_threads
from search.progress import ConsoleProgress
from search.specs import RunSpec
from search.study import run_study
from storage import Store

pytestmark = pytest.mark.slow
GRID = "[hourglass]\nd_z = [100]\nd_h = [7, 8]\nL = [1]\nlr = [0.005]\n"


def spec(tmp_path, executor, **kw):
    base = dict(spaces=("hourglass", "conventional"), task="digits-denoise", budget=60_000, trials=4,
                executor=executor, study=executor, train=TrainSettings(epochs=2))
    if executor == "ray":
        base["executor_options"] = {"num_cpus": 2, "max_concurrent": 2}
    base.update(kw)
    return RunSpec(**base)


@pytest.fixture
def one_thread():
    """Torch in this process with one thread, as a Ray trial with cpus_per_trial=1 has."""
    before = torch.get_num_threads()
    torch.set_num_threads(worker_threads(1.0))
    yield
    torch.set_num_threads(before)


def test_ray_trial_threads_follow_its_cpu_share():
    assert [worker_threads(c) for c in (0.25, 1.0, 2.0, 3.5)] == [1, 1, 2, 3]


def test_ray_runs_a_multi_family_study_like_the_local_executor(tmp_path, one_thread):
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    # Both sides train with one torch thread, so the float reductions run in the same
    # order and equal seeds and configs give equal numbers (with 2 threads locally and
    # 1 on Ray, PSNR differed by 5e-4 dB).
    local = run_study(spec(tmp_path, "local"), store, ConsoleProgress(live=False))
    ray_out = run_study(spec(tmp_path, "ray"), store, ConsoleProgress(live=False))
    assert local.finished == ray_out.finished == 4
    a, b = store.trials_frame("local"), store.trials_frame("ray")
    assert list(a.columns) == list(b.columns)
    assert (b.status == "complete").all() and (b.params <= 60_000).all()
    assert set(b.family) <= {"hourglass", "conventional"} and b.psnr.notna().all() and b.ssim.notna().all()
    # same seeds and configs give the same numbers, whichever process trained them
    same = a.merge(b, on=["family", "params"], suffixes=("_l", "_r"))
    same = same[same.config_l == same.config_r]
    assert len(same) >= 1 and (abs(same.psnr_l - same.psnr_r) < 1e-4).all()


def test_ray_worker_crash_and_hang_are_failed_and_retried(tmp_path, monkeypatch):
    (tmp_path / "grid.toml").write_text(GRID.replace("[7, 8]", "[6, 7, 8]"))
    monkeypatch.setenv("SEARCH_FAULT", "crash:d_h=6,hang:d_h=7")
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    s = spec(tmp_path, "ray", spaces=("hourglass",), sampler="grid", space_file=str(tmp_path / "grid.toml"),
             trials=3, retries=1, executor_options={"num_cpus": 2, "max_concurrent": 2, "trial_timeout": 25})
    out = run_study(s, store, ConsoleProgress(live=False))
    recs = store.trials("ray")
    by = {d: [r for r in recs if r.config["d_h"] == d] for d in (6, 7, 8)}
    assert [r.status for r in by[6]] == ["failed", "failed"] and "worker died" in by[6][0].error
    assert [r.status for r in by[7]] == ["failed", "failed"] and "timed out" in by[7][0].error
    assert by[6][1].retry_of == by[6][0].number and by[7][1].attempt == 1
    assert [r.status for r in by[8]] == ["complete"] and out.finished == 3


PRUNE_GRID = "[hourglass]\nd_z = [100]\nd_h = [8, 10, 12, 14, 16, 18]\nL = [1]\nlr = [0.005, 0.0001]\n"


def test_the_pruner_stops_trials_on_ray_workers(tmp_path, one_thread):
    """Workers stream their epochs to the driver (an EpochBoard actor); the driver's pruner
    stops a dominated trial, which its worker learns at its next epoch: the same trials
    are pruned as on the local executor, each after at most one more epoch."""
    (tmp_path / "g.toml").write_text(PRUNE_GRID)
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    common = dict(spaces=("hourglass",), sampler="grid", space_file=str(tmp_path / "g.toml"), trials=8,
                  pruner="pareto", train=TrainSettings(epochs=6, max_train_samples=400))
    run_study(spec(tmp_path, "local", **common), store, ConsoleProgress(live=False))
    run_study(spec(tmp_path, "ray", executor_options={"num_cpus": 2, "max_concurrent": 1, "poll_s": 0.05}, **common),
              store, ConsoleProgress(live=False))
    pruned = {}
    for name in ("local", "ray"):
        recs = store.trials(name)
        assert len(recs) == 8
        pruned[name] = {(r.config["d_h"], r.config["lr"]): len(store.epochs(name, r.number))
                        for r in recs if r.status == "pruned"}
        assert all("stopped at epoch" in r.error for r in recs if r.status == "pruned")
    assert pruned["local"] and set(pruned["ray"]) == set(pruned["local"])
    for key, n in pruned["ray"].items():
        assert pruned["local"][key] <= n <= pruned["local"][key] + 1 < 6
