"""`search run ... --executor tune`: a study run by Ray Tune's `Tuner`.

`run_tune_study(spec, store, progress)` is `run_study` (search/engine/study.py) with Tune
in the executor's place:

1. Ray is started (or joined: `--ray-address`, refused at once when it does not
   answer: search/executors/ray.py, `check_address`) and the cluster is checked against the
   trial's resources (`--cpus-per-trial`, `--gpus-per-trial`) before the database is
   written to, so that bad input leaves it as it was.
2. `StudyLoop.start()`: the study is created or loaded, orphaned trials are marked
   `interrupted`, the past is replayed into the proposer and the retries are queued:
   a resumed study goes on where it stopped, whichever executor ran it before.
3. `tune.Tuner(train_trial, ...)` runs with the study as its searcher
   (search/tune/searcher.py), the study's pruner as its scheduler
   (search/tune/scheduler.py), `num_samples=-1` (the searcher says when the study has its
   trials), at most `--max-concurrent` trials at once (default: as many as the cluster
   fits), each with its CPUs and GPUs (`tune.with_resources`). Tune retries nothing
   itself (`max_failures=0`): the study's `--retries` decide. Tune reuses a trial's
   worker for the next (`reuse_actors=True`): the task's data stays loaded in it, as in
   a Ray executor's worker (on short trials, 5 s less per trial on a 2-core machine).
   With `--pack K` (K > 1) a Tune trial is a pack of up to K of the study's trials,
   trained as one batched program where they fuse (search/tune/searcher.py,
   trainable.py); its resources are the pack's, and the study's pruner stops a pack's
   trial through an epoch board (search/executors/ray.py `EpochBoard`), as `--executor
   ray --pack K` does.
4. Tune's experiment folder is `<tune dir>/<study>/`, one folder per trial
   (`trial-0007` for the study's trial 7, `pack-0004-0007` for a pack of trials 4-7)
   with Tune's `progress.csv`, `result.json`, `params.json` and TensorBoard events
   (`tensorboard --logdir <tune dir>/<study>`).
   The tune dir is `--tune-dir`, else a folder beside the SQLite database
   (`search-tune/` for `search.db`), else `search-tune/` in the working directory.

A trial still pending when Tune returns (Ctrl-C, an error in the driver) is marked
`interrupted`: the same command again runs it anew.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import threading
from pathlib import Path
from typing import Any

from core.errors import UserError
from search.engine.ownership import Heartbeat
from search.engine.prepare import Prepared, prepare
from search.engine.specs import RunSpec
from search.engine.study import Outcome, Progress, StudyLoop
from search.engine.study_store import StudyStore
from search.executors.packs import resolve_pack
from search.executors.ray import _join_ray, board_on_this_node, worker_threads
from search.executors.ray import check_address as check_address  # the probe's old home: re-exported
from search.tune.executor import TuneExecutor

TUNE_SUFFIX = "-tune"  # the folder beside a SQLite file: search.db -> search-tune/
DEFAULT_TUNE_DIR = "search-tune"


def tune_dir(spec: RunSpec, storage_url: str | None) -> Path:
    """Where Tune's experiment folders go: `--tune-dir`, else beside the SQLite database
    file, else `search-tune/` here (absolute)."""
    given = spec.executor_options.get("tune_dir")
    if given:
        return Path(os.path.abspath(os.path.expanduser(given)))
    if storage_url:
        from sqlalchemy.engine import make_url

        try:
            parsed = make_url(storage_url)
        except Exception:
            parsed = None
        database = (parsed.database or "") if parsed is not None else ""
        if (
            parsed is not None
            and parsed.get_backend_name() == "sqlite"
            and database
            and database != ":memory:"
            and not database.startswith("file:")
        ):
            path = Path(os.path.abspath(os.path.expanduser(database)))
            return path.with_name(path.stem + TUNE_SUFFIX)
    return Path(os.path.abspath(DEFAULT_TUNE_DIR))


def experiment_dir(spec: RunSpec, storage_url: str | None) -> Path:
    """The study's Tune experiment folder (`tensorboard --logdir` it)."""
    return tune_dir(spec, storage_url) / experiment_name(spec.study_name)


def experiment_name(study: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in study) or "study"


def trial_folder(trial: Any) -> str:
    """A Tune trial's folder and name: the study's trial number; a pack's
    (`--pack K`), `pack-` and its first and last trials' numbers."""
    number, pack = trial.config.get("trial"), trial.config.get("trials")
    if pack:
        return f"pack-{int(pack[0]):04d}-{int(pack[-1]):04d}"
    return f"trial-{int(number):04d}" if number is not None else f"trial-{trial.trial_id}"


def check_resources(ray: Any, cpus: float, gpus: float, max_concurrent: int | None) -> int:
    """How many trials may run at once; UserError when the cluster cannot run even one
    (Tune would wait for the resources forever)."""
    res = ray.cluster_resources()
    if gpus > 0 and res.get("GPU", 0) < gpus:
        raise UserError(f"--gpus-per-trial {gpus:g} but the Ray cluster has {res.get('GPU', 0):g} GPU(s)")
    if res.get("CPU", 0) < cpus:
        raise UserError(f"--cpus-per-trial {cpus:g} but the Ray cluster has {res.get('CPU', 0):g} CPU(s)")
    fits = [res.get("CPU", 0) / cpus] + ([res["GPU"] / gpus] if gpus > 0 else [])
    return max_concurrent or max(1, int(math.floor(min(fits) + 1e-9)))


class NoRestoreHint(logging.Filter):
    """Drops Tune's "Experiment has been interrupted ... Resume experiment with:
    Tuner.restore(...)" warning after Ctrl-C: wrong advice for a study, which resumes from
    its database with the same command (the product's own line says so)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Tuner.restore(" not in record.getMessage()


@contextlib.contextmanager
def quiet_tune():
    """Tune's own console output off (its tables would mix with the study's progress on
    stderr and its banners with the results on stdout): the legacy reporter, which
    `verbose=0` silences. The study's progress says what runs; Tune's files keep the rest.
    Tune's restore hint after Ctrl-C is filtered out of its logger (`NoRestoreHint`), and
    the SIGINT/SIGUSR1 handlers Tune installs for its run are put back as they were after
    it (Tune restores them only when the signal comes: a later Ctrl-C, while the pages are
    written or in a user's script, would otherwise be taken for a stop of a finished run)."""
    before = os.environ.get("RAY_AIR_NEW_OUTPUT")
    os.environ["RAY_AIR_NEW_OUTPUT"] = "0"
    hint = NoRestoreHint()
    tune_logger = logging.getLogger("ray.tune.tune")  # where tune.run logs the hint
    tune_logger.addFilter(hint)
    handlers: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, getattr(signal, "SIGUSR1", None)):
            if sig is not None and signal.getsignal(sig) is not None:
                handlers[sig] = signal.getsignal(sig)
    try:
        yield
    finally:
        tune_logger.removeFilter(hint)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        if before is None:
            os.environ.pop("RAY_AIR_NEW_OUTPUT", None)
        else:
            os.environ["RAY_AIR_NEW_OUTPUT"] = before


def run_tune_study(spec: RunSpec, store: StudyStore, progress: Progress, prep: Prepared | None = None) -> Outcome:
    """Run (or resume) the study on Ray Tune until it has `spec.trials` finished trials."""
    if spec.executor != "tune":
        raise UserError(f"run_tune_study runs --executor tune studies, not {spec.executor!r}")
    prep = prep or prepare(spec)  # options checked (TuneExecutor.check_options) before any write
    try:
        import ray
        from ray import tune
    except ImportError:  # pragma: no cover - ray[tune] is a dependency
        raise UserError("--executor tune needs Ray Tune: pip install 'ray[tune]'") from None
    from search.tune.scheduler import ParetoScheduler
    from search.tune.searcher import StudySearcher
    from search.tune.trainable import train_trial

    opts: dict[str, Any] = dict(spec.executor_options)
    cpus = float(opts.get("cpus_per_trial") or 1.0)
    gpus = float(opts.get("gpus_per_trial") or 0.0)
    owns_ray = not ray.is_initialized()
    if owns_ray:  # an address that does not answer is refused at once (check_address)
        _join_ray(ray, opts.get("address"), opts.get("num_cpus"), opts.get("num_gpus"))
    try:
        capacity = check_resources(ray, cpus, gpus, opts.get("max_concurrent"))
        where = tune_dir(spec, getattr(store, "url", None))
        where.mkdir(parents=True, exist_ok=True)
        handoff = TuneExecutor(**opts)
        loop = StudyLoop(spec, store, progress, prep, executor=handoff)
        out = loop.start()
        pack = resolve_pack(opts.get("pack", "auto"), "cuda" if gpus > 0 else "cpu")
        board = board_on_this_node(ray) if pack > 1 else None
        searcher = StudySearcher(loop, pack=pack, board=board)
        trainable = tune.with_resources(
            tune.with_parameters(train_trial, threads=worker_threads(cpus), board=board), {"cpu": cpus, "gpu": gpus}
        )
        tuner = tune.Tuner(
            trainable,
            tune_config=tune.TuneConfig(
                search_alg=searcher,
                scheduler=ParetoScheduler(searcher),
                num_samples=-1,
                max_concurrent_trials=capacity,
                reuse_actors=True,
                trial_name_creator=trial_folder,
                trial_dirname_creator=trial_folder,
            ),
            run_config=tune.RunConfig(
                name=experiment_name(spec.study_name),
                storage_path=str(where),
                verbose=0,
                stop=searcher.stopper(),
                failure_config=tune.FailureConfig(max_failures=0),
            ),
        )
        beat = Heartbeat(lambda numbers: store.heartbeat(loop.name, numbers, loop.owner), lambda: list(loop.pending))
        left: list[int] = []
        try:
            with quiet_tune():
                tuner.fit()
        finally:
            beat.stop()
            left = list(loop.pending)
            if left:  # Ctrl-C, an error: our running trials are interrupted, not lost
                store.interrupt_trials(loop.name, left)
            progress.close()
        if searcher.error is not None:
            raise searcher.error
        if left:  # Tune ended with trials of ours unfinished: it was stopped (Ctrl-C), as the local loop is
            raise KeyboardInterrupt
        out.finished = loop.counts()[0]
        return out
    finally:
        if owns_ray and ray.is_initialized():
            ray.shutdown()
