"""The study as a Tune searcher, without a Ray cluster: Tune's calls (suggest, on_epoch
through the scheduler, on_trial_complete) made by hand, the trials trained in this
process with the product's trainer; and the options of `--executor tune`."""

import json
import pickle
from pathlib import Path

import pytest
from ray.tune.search import Searcher

from core.errors import UserError
from core.trials import EpochRecord, TrainSettings, TrialSpec, TrialStopped
from search.api.progress import ConsoleProgress
from search.engine.specs import RunSpec
from search.engine.study import StudyLoop, prepare
from search.executors import EXECUTORS, check_executor
from search.executors.base import run_guarded, run_guarded_pack
from search.tune.driver import check_address, experiment_dir, trial_folder, tune_dir
from search.tune.executor import TuneExecutor
from search.tune.scheduler import ParetoScheduler
from search.tune.searcher import StudySearcher
from search.tune.trainable import (
    MEMBER_KEY,
    PACK_KEY,
    PACK_RESULTS_KEY,
    RESULT_KEY,
    SPEC_KEY,
    epoch_report,
    is_final,
    record_of,
)
from storage import Store

BUDGET = 30_000


def tune_spec(**kw):
    base = dict(
        spaces=("hourglass",),
        task="digits-denoise",
        budget=BUDGET,
        trials=3,
        executor="tune",
        study="t",
        pruner="none",
        keep="none",
        retries=1,
        train=TrainSettings(epochs=1, max_train_samples=128),
        seed_checks=0,  # the suggestions scripted below are the trials'
    )
    base.update(kw)
    return RunSpec(**base)


def started(tmp_path, pack=1, board=None, **kw):
    spec = tune_spec(**kw)
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    loop = StudyLoop(spec, store, ConsoleProgress(live=False), prepare(spec), executor=TuneExecutor())
    loop.start()
    return StudySearcher(loop, pack=pack, board=board), store


def train(config):
    """What the trainable does with a config, in this process: the last report it sends."""
    spec = TrialSpec.from_dict(json.loads(config[SPEC_KEY]))
    return {RESULT_KEY: json.dumps(run_guarded(spec).to_dict())}


def test_the_tune_executor_is_registered_and_checks_its_options():
    assert EXECUTORS.get("tune") is TuneExecutor
    check_executor(
        "tune",
        {
            "address": "auto",
            "cpus_per_trial": 0.5,
            "gpus_per_trial": 0.25,
            "max_concurrent": 2,
            "tune_dir": "runs",
            "num_cpus": 2,
            "pack": 4,
        },
    )
    for options, match in [
        ({"trial_timeout": 5}, "--executor tune cannot honour --trial-timeout"),
        ({"poll_s": 1}, "the tune executor takes no poll_s"),
        ({"max_concurrent": 0}, "--max-concurrent must be at least 1"),
        ({"cpus_per_trial": 0}, "--cpus-per-trial > 0"),
        ({"gpus_per_trial": -1}, "--gpus-per-trial must be >= 0"),
        ({"gpus_per_trial": float("nan")}, "--gpus-per-trial must be a number"),
        ({"tune_dir": " "}, "--tune-dir must name a folder"),
        ({"pack": 0}, "--pack must be a whole number of trials of at least 1, or auto"),
    ]:
        with pytest.raises(UserError, match=match.replace("(", r"\(")):
            check_executor("tune", options)
    with pytest.raises(RuntimeError, match="runs its trials through Ray Tune"):
        TuneExecutor().wait()


def test_the_experiment_folder_is_beside_the_database_or_the_tune_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = tune_spec()
    assert tune_dir(spec, f"sqlite:///{tmp_path / 'x' / 'my.db'}") == tmp_path / "x" / "my-tune"
    assert tune_dir(spec, "sqlite:///rel.db") == tmp_path / "rel-tune"
    assert tune_dir(spec, "postgresql+psycopg://u:p@h/db") == tmp_path / "search-tune"
    assert tune_dir(spec, "sqlite://") == tmp_path / "search-tune"
    given = tune_spec(executor_options={"tune_dir": "runs"})
    assert experiment_dir(given, "sqlite:///rel.db") == tmp_path / "runs" / "t"

    class Trial:
        config, trial_id = {"trial": 7}, "abc"

    assert trial_folder(Trial()) == "trial-0007"

    class Pack:
        config, trial_id = {"trial": 4, "trials": [4, 5, 7]}, "abc"

    assert trial_folder(Pack()) == "pack-0004-0007"


def test_a_ray_address_that_does_not_answer_fails_at_once():
    with pytest.raises(UserError, match="the Ray cluster at 127.0.0.1:1 does not answer"):
        check_address("127.0.0.1:1", timeout_s=2)
    with pytest.raises(UserError, match="--ray-address must be 'auto' or HOST:PORT, got 'nohost'"):
        check_address("nohost")
    check_address("auto")  # left to ray.init
    check_address(None)


def test_epoch_reports_round_trip():
    record = EpochRecord(3, 0.25, {"psnr": 12.5, "ssim": 0.5}, 1.5)
    report = epoch_report(1, record, "cpu")
    assert report == {
        "epoch": 3,
        "repeat": 1,
        "train_loss": 0.25,
        "val_psnr": 12.5,
        "val_ssim": 0.5,
        "elapsed_s": 1.5,
        "device": "cpu",
    }
    assert record_of({**report, "time_total_s": 9.0}) == (1, record) and not is_final(report)


@pytest.mark.slow
def test_the_searcher_proposes_within_budget_records_and_retries(tmp_path):
    """Tune's calls by hand: suggest records a running trial within the budget and gives
    Tune its config; on_trial_complete stores the trainable's result, a stop by the
    scheduler as pruned, an errored trial as failed (and queues its retry); the study ends
    (FINISHED) at --trials finished, and a trial Tune stopped otherwise stays pending."""
    s, store = started(tmp_path)
    a = s.suggest("a")
    assert a["trial"] == 0 and a["family"] == "hourglass" and {"d_z", "d_h", "L"} <= set(a)
    [row] = store.trials("t")
    assert row.status == "running" and row.params <= BUDGET and row.owner == s.loop.owner
    s.on_trial_complete("a", train(a))
    assert store.trials("t")[0].status == "complete"

    b, c = s.suggest("b"), s.suggest("c")
    assert (b["trial"], c["trial"]) == (1, 2)
    assert s.suggest("d") is None  # one finished and two running make the study's 3: none now
    # b: the scheduler hands Tune's epoch result over; the pruner stops it (here: by hand)
    assert (
        s.on_epoch(
            "b", {**epoch_report(0, EpochRecord(1, 0.5, {"psnr": 6.0, "ssim": 0.1}, 0.2), "cpu"), "time_total_s": 1.25}
        )
        is None
    )
    s.stops["b"] = "stopped at epoch 1 of 1: by the test"
    s.on_trial_complete("b", {"epoch": 1, "repeat": 0})
    # c: its worker died (Tune's error file says why)
    s.note_error("c", "RayActorError: The actor died unexpectedly")
    s.on_trial_complete("c", None, error=True)
    recs = {r.number: r for r in store.trials("t")}
    assert recs[1].status == "pruned" and recs[1].error == "stopped at epoch 1 of 1: by the test"
    assert len(store.epochs("t", 1)) == 1 and recs[1].metrics == {}
    assert recs[2].status == "failed" and "Tune trial failed: RayActorError: The actor died" in recs[2].error

    e = s.suggest("e")  # the retry of c first
    assert e["trial"] == 3 and {k: e[k] for k in ("d_z", "d_h", "L")} == {k: c[k] for k in ("d_z", "d_h", "L")}
    s.on_trial_complete("e", train(e))
    recs = {r.number: r for r in store.trials("t")}
    assert recs[3].status == "complete" and recs[3].retry_of == 2 and recs[3].attempt == 1
    assert s.suggest("f") == Searcher.FINISHED
    assert all(r.params <= BUDGET for r in store.trials("t"))
    s.on_trial_complete("unknown", None)  # a trial the searcher never suggested: ignored


@pytest.mark.slow
def test_a_trial_tune_stops_unasked_stays_pending_and_the_searcher_pickles(tmp_path):
    s, store = started(tmp_path, trials=1)
    a = s.suggest("a")
    s.on_trial_complete("a", {"epoch": 1, "repeat": 0})  # e.g. Ctrl-C: no final report, no stop, no error
    assert list(s.loop.pending) == [a["trial"]] and store.trials("t")[0].status == "running"
    # Tune pickles its config (tuner.pkl): the study loop stays out
    assert pickle.loads(pickle.dumps(s)).loop is None
    assert pickle.loads(pickle.dumps(ParetoScheduler(s))).searcher.loop is None


class Board:
    """The epoch board's `stop` as the searcher calls it (`board.stop.remote(n, why)`)."""

    def __init__(self):
        self.stops = {}
        self.stop = self

    def remote(self, number, reason):
        self.stops[number] = reason


def test_a_pack_is_one_tune_trial_and_each_of_its_trials_is_stored_as_its_own(tmp_path, monkeypatch):
    """`--pack 2` by hand: a suggestion holds up to two of the study's trials (each
    recorded running); each epoch names its trial and goes to the study; a stop of one
    trial is posted on the board, once, and not judged again; the pack's last report
    stores each trial's result; a dead pack's worker fails its trials, but one the pruner
    had stopped is stored pruned with the epochs it reported."""
    board = Board()
    s, store = started(tmp_path, pack=2, board=board)
    p, q = s.suggest("p"), s.suggest("q")
    assert (p["trials"], q["trials"]) == ([0, 1], [2]) and s.suggest("r") is None  # 3 trials: none now
    assert [r.status for r in store.trials("t")] == ["running"] * 3
    specs = [TrialSpec.from_dict(d) for d in json.loads(p[PACK_KEY])]
    assert [t.number for t in specs] == [0, 1] and all(r.params <= BUDGET for r in store.trials("t"))

    judged = []

    def on_epoch(tspec, repeat, record):
        judged.append(tspec.number)
        if tspec.number in (1, 2):
            raise TrialStopped(f"stopped at epoch {record.epoch} of 1: by the test")

    monkeypatch.setattr(s.loop, "on_epoch", on_epoch)
    record = EpochRecord(1, 0.5, {"psnr": 6.0, "ssim": 0.1}, 0.2)
    for number, trial_id in [(0, "p"), (1, "p"), (1, "p"), (2, "q")]:
        report = {**epoch_report(0, record, "cpu"), MEMBER_KEY: number, "time_total_s": 1.5}
        assert s.on_epoch(trial_id, report) is None  # Tune's trial (the pack) goes on
    assert judged == [0, 1, 2]  # trial 1's report after its stop is not judged again
    assert board.stops == {1: "stopped at epoch 1 of 1: by the test", 2: "stopped at epoch 1 of 1: by the test"}

    trained = run_guarded_pack(specs)
    s.on_trial_complete("p", {PACK_RESULTS_KEY: json.dumps([r.to_dict() for r in trained])})
    s.note_error("q", "RayActorError: The actor died unexpectedly")
    s.on_trial_complete("q", None, error=True)
    recs = {r.number: r for r in store.trials("t")}
    assert [recs[n].status for n in (0, 1, 2)] == ["complete", "complete", "pruned"]
    assert abs(recs[0].metrics["psnr"][0] - trained[0].metrics["psnr"]) < 1e-9
    assert recs[2].error == "stopped at epoch 1 of 1: by the test" and len(store.epochs("t", 2)) == 1
    assert s.suggest("s") == Searcher.FINISHED and not s.packs and not s.member_stops


def test_tune_dir_without_the_tune_executor_is_refused(cli):
    code, _, err = cli("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "100K", "--tune-dir", "x")
    assert code == 2 and err.strip() == "error: --tune-dir is for --executor tune"
    assert not Path("search.db").exists()
