"""The study loop's steps on in-memory fakes: no database, no training (tests/search/fakes.py)."""

import inspect
import threading
from datetime import UTC, datetime, timedelta

import pytest

from core.errors import RejectedInARow, UserError
from search.engine import study as study_mod
from search.engine.sampling.policies import DEFAULT_SIZE_SCALE, size_objective
from search.engine.seed_checks import is_check
from search.engine.specs import RunSpec
from search.engine.study import StudyLoop, prepare
from search.engine.study_store import StudyStore
from storage import Store
from tests.search.fakes import MemoryStore, RecordingProgress, ScriptedExecutor, complete, failed

GRID = "[hourglass]\nd_z = [100]\nd_h = [7, 8]\nL = [1]\nlr = [0.005]\n"


def run_spec(**kw) -> RunSpec:
    base = dict(spaces=("hourglass",), task="digits-denoise", budget=20_000, trials=3, study="s")
    return RunSpec(**{**base, **kw})


def make_loop(store, outcome, **kw):
    spec = run_spec(**kw)
    executor = ScriptedExecutor(outcome)
    return StudyLoop(spec, store, RecordingProgress(), prepare(spec), executor=executor), executor


def statuses(store, name="s"):
    return [t.status for t in store.trials(name)]


def test_the_loop_stops_at_the_trials_asked_for(store):
    loop, executor = make_loop(store, lambda s: complete(s, 20.0 + s.number))
    out = loop.run()
    assert statuses(store) == ["complete"] * 3 and out.finished == out.ran == 3
    assert [s.number for s in executor.submitted] == [0, 1, 2] and executor.closed
    assert [t.metrics["psnr"][0] for t in store.trials("s")] == [20.0, 21.0, 22.0]
    names = loop.progress.names()
    assert names[0] == "start" and names[-1] == "close" and names.count("trial_finished") == 3
    # every proposal was within budget and its count exact
    assert all(t.params == loop.prep.count(t.family, t.config) <= 20_000 for t in store.trials("s"))


def test_the_proposer_is_told_params_and_the_validation_metric():
    """(params on the study's --size-scale, the validation metric): log10(params) by default."""
    store = MemoryStore()
    loop, _ = make_loop(store, lambda s: complete(s, 30.0 - s.number))
    loop.run()
    told = [t.values for t in loop.sampler.study.trials]
    assert told == [[size_objective(t.params, DEFAULT_SIZE_SCALE), t.metrics["val_psnr"][0]] for t in store.trials("s")]
    assert all(0 < v[0] < 7 for v in told)  # log10 of a count, not the count


def test_a_failed_trial_is_retried_and_its_retry_supersedes_it(store):
    loop, executor = make_loop(store, lambda s: failed(s) if s.number == 0 else complete(s, 20.0), trials=2, retries=1)
    out = loop.run()
    rows = store.trials("s")
    assert statuses(store) == ["failed", "complete", "complete"] and out.finished == 2
    assert (rows[1].retry_of, rows[1].attempt, rows[1].config, rows[1].seeds) == (0, 1, rows[0].config, rows[0].seeds)
    assert rows[1].note == "retry 1 of trial 0: RuntimeError: boom" and out.retried == 1


def test_retries_stop_after_the_allowed_attempts(store):
    loop, _ = make_loop(store, failed, trials=1, retries=2)
    out = loop.run()
    assert statuses(store) == ["failed"] * 3 and [t.attempt for t in store.trials("s")] == [0, 1, 2]
    assert out.finished == 1 and out.ran == 3


def test_out_of_memory_runs_once_more_with_half_the_batch():
    store = MemoryStore()

    def outcome(s):
        return complete(s, 20.0) if s.train.batch_size_halved else failed(s, "OutOfMemoryError: CUDA out of memory")

    loop, executor = make_loop(store, outcome, trials=1, retries=0, oom_retry=True)
    loop.run()
    retry = executor.submitted[1].train
    assert statuses(store) == ["failed", "complete"]
    assert retry.batch_size == loop.prep.task.defaults.batch_size // 2 and retry.batch_size_halved
    assert "out of memory; batch size" in store.trials("s")[1].note


def test_an_orphaned_running_trial_is_interrupted_and_run_again_first(store):
    spec = run_spec()
    store.create_or_load_study(
        "s", task=spec.task, families=["hourglass"], metric="psnr", direction="maximize", budget=spec.budget
    )
    config = {"fixed_w_in": False, "L": 1, "d_z": 100, "d_h": 8, "lr": 0.005}
    store.add_trial("s", family="hourglass", config=config, params=1, seeds=[7], owner="elsewhere:1:dead")
    if isinstance(store, MemoryStore):  # a heartbeat far in the past: stale
        store.rows["s"][0].heartbeat_at = datetime.now(UTC) - timedelta(hours=1)
    else:
        from sqlalchemy import update

        from storage.schema import Trial

        with store._session() as s:
            s.execute(update(Trial).values(heartbeat_at=datetime.now(UTC) - timedelta(hours=1)))
    loop, executor = make_loop(store, lambda s: complete(s, 20.0), trials=2)
    out = loop.run()
    assert out.interrupted == 1 and statuses(store)[0] == "interrupted"
    first = executor.submitted[0]
    assert (first.number, first.config, first.seeds) == (1, config, (7,))
    assert store.trials("s")[1].retry_of == 0 and out.finished == 2


def test_an_interrupt_leaves_this_drivers_running_trials_interrupted(store):
    def outcome(s):
        raise KeyboardInterrupt

    loop, executor = make_loop(store, outcome)
    with pytest.raises(KeyboardInterrupt):
        loop.run()
    assert statuses(store) == ["interrupted"] and executor.closed and loop.progress.names()[-1] == "close"


def test_an_exhausted_grid_ends_the_loop(store, tmp_path):
    (tmp_path / "grid.toml").write_text(GRID)
    loop, _ = make_loop(
        store, lambda s: complete(s, 20.0), sampler="grid", trials=5, space_file=str(tmp_path / "grid.toml")
    )
    out = loop.run()
    assert out.exhausted and out.finished == 2 and sorted(t.config["d_h"] for t in store.trials("s")) == [7, 8]


def test_rejections_are_recorded_and_too_many_in_a_row_stop_the_study(store, tmp_path, monkeypatch):
    # one point fits, seven are over budget: in any order, three over-budget points come in a row
    d_z = ", ".join(str(v) for v in (100, *range(1000, 8000, 1000)))
    (tmp_path / "grid.toml").write_text(f"[hourglass]\nd_z = [{d_z}]\nd_h = [8]\nL = [1]\n")
    monkeypatch.setattr(study_mod, "MAX_REJECTIONS_IN_A_ROW", 3)
    loop, executor = make_loop(
        store, lambda s: complete(s, 20.0), sampler="grid", trials=10, space_file=str(tmp_path / "grid.toml")
    )
    with pytest.raises(RejectedInARow, match="3 proposals in a row were rejected"):
        loop.run()
    assert issubclass(RejectedInARow, UserError)  # the CLI's one-line error, exit 2
    rows = store.trials("s")
    assert statuses(store)[-3:] == ["rejected"] * 3 and len(executor.submitted) <= 1
    rejected = [r for r in rows if r.status == "rejected"]
    assert all(r.note.startswith("over budget") and r.params > 20_000 for r in rejected)
    assert loop.progress.names().count("rejected") == len(rejected) == loop.out.rejected


def test_next_job_counts_trials_in_flight_and_queued_retries():
    store = MemoryStore()
    loop, _ = make_loop(store, lambda s: complete(s, 20.0), trials=2)
    loop.start()
    first = loop.next_job()
    loop.submit(first)
    second = loop.next_job()
    loop.submit(second)
    assert loop.next_job() is None  # two running: enough for --trials 2
    assert [n for n in loop.pending] == [0, 1] and loop.out.finished == 0


PROTOCOL = [n for n in vars(StudyStore) if not n.startswith("_")]


def test_the_protocol_lists_exactly_what_the_loop_calls():
    assert sorted(PROTOCOL) == sorted(
        [
            "create_or_load_study",
            "interrupt_running",
            "trials",
            "retry_candidates",
            "epochs_of",
            "progress",
            "add_trial",
            "add_rejected",
            "finish_trial",
            "interrupt_trials",
            "heartbeat",
            "objectives",
            "configurations",
            "remove_artifacts",
        ]
    )  # the loop's Keeper (search/artifacts/keep.py), when weights are kept


@pytest.mark.parametrize("impl", [Store, MemoryStore])
def test_the_store_and_the_fake_take_the_protocols_arguments(impl):
    for name in PROTOCOL:
        want = inspect.signature(getattr(StudyStore, name)).parameters
        got = inspect.signature(getattr(impl, name)).parameters
        assert list(got)[: len(want)] == list(want), name
        assert all(p.default is not p.empty for p in list(got.values())[len(want) :]), name


def test_two_trials_in_flight_stop_at_the_trials_asked_for():
    store = MemoryStore()
    spec = run_spec(trials=5, seed_checks=0)  # the checks after the trials: test_seed_checks.py
    executor = ScriptedExecutor(lambda s: complete(s, 20.0), capacity=2)
    out = StudyLoop(spec, store, RecordingProgress(), prepare(spec), executor=executor).run()
    assert out.finished == 5 and statuses(store) == ["complete"] * 5 and executor.closed
    assert not [t for t in threading.enumerate() if t.name == "search-heartbeat" and t.is_alive()]


def test_the_time_limit_stops_new_trials_and_seed_checks_and_a_resume_goes_on(store, monkeypatch):
    """--time-limit: nothing starts once it has passed (trials in flight finish); the study
    keeps what it ran, and the same command again resumes with a limit of its own."""
    clock = {"now": 1000.0}
    monkeypatch.setattr(study_mod.time, "monotonic", lambda: clock["now"])

    def ten_seconds(spec):  # each trial takes 10 s on the fake clock
        clock["now"] += 10.0
        return complete(spec, 20.0 + spec.number)

    loop, executor = make_loop(store, ten_seconds, trials=10, time_limit="25s", seed_checks=0.5)
    out = loop.run()
    assert out.timed_out and out.ran == 3 and statuses(store) == ["complete"] * 3  # started at 0, 10 and 20 s
    assert not any(is_check(r) for r in store.trials("s"))  # no seed check starts after the limit either
    loop, _ = make_loop(store, ten_seconds, trials=10, seed_checks=0.5)
    out = loop.run()
    assert not out.timed_out and sum(not is_check(r) for r in store.trials("s")) == 10
    assert any(is_check(r) for r in store.trials("s"))  # without a limit the checks run after the trials


def test_the_time_limit_is_a_positive_duration():
    assert run_spec(time_limit="1h30m").time_limit == 5400.0 and run_spec(time_limit=90).time_limit == 90.0
    for bad in ("0", "-1", "soon", 0):
        with pytest.raises(UserError, match="--time-limit"):
            run_spec(time_limit=bad)
