"""Worker processes of the local executor (`--workers N`): N trials (or packs) at once on
this machine, each process with its own torch thread count (`--threads T`), so that a
2-core machine trains two small models side by side instead of one with two threads
that tiny matrices cannot use.

Each worker is a spawned process (a fresh interpreter: no forked OpenMP state) joined to
the driver by a duplex pipe. The driver sends a job (the plain-data `TrialSpec`s of one
trial or one pack); the worker answers, in order, "begin" for each trial, "epoch" records
(when the study listens: live progress and the pruner) and "done" with the results. The
driver stays the only writer of the database. A stop the pruner decides is sent back on
the pipe and read by the worker after its next epoch, so a stopped trial trains on until
then, as on Ray.

Faults: a worker that dies (kill -9, a crash in native code) fails its trials with the
exit code and is replaced; with a trial timeout, a job running longer than the limit
since its first trial began is killed with its process, its trials fail "timed out" and
the worker is replaced. A worker ignores Ctrl-C (the driver closes the pool) and, on
Linux, dies with the driver (PR_SET_PDEATHSIG), so a driver killed with -9 leaves no
orphan training on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from core.trials import TrialResult, TrialSpec
from search.executors.base import EpochCallback, lost

POLL_S = 0.5  # how often the driver looks at the clock while it waits (timeouts)


@contextlib.contextmanager
def main_not_reimported() -> Iterator[None]:
    """While a worker is spawned: Python's spawn imports the parent's `__main__` again in the
    child (for what it defines), which a worker never needs, and a user's script that calls
    `search.run()` at its top level would start a search in every worker. Hidden from the
    spawn's preparation (multiprocessing.spawn.get_preparation_data reads `__spec__` and
    `__file__`), restored at once."""
    main = sys.modules.get("__main__")
    saved = {k: getattr(main, k) for k in ("__spec__", "__file__") if main is not None and hasattr(main, k)}
    try:
        if main is not None:
            main.__spec__ = None
            if "__file__" in saved:
                del main.__file__
        yield
    finally:
        for k, v in saved.items():
            setattr(main, k, v)


def _die_with_parent() -> None:
    """Linux: this process gets SIGKILL when its parent dies (best effort elsewhere)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def warm_up() -> None:
    """What every first trial in a fresh process would pay, paid while the driver prepares:
    the trainers' imports and torch's compiler stack, which an optimiser's first
    construction imports (about 2 s of a 0.5 s trial on a 2-core CPU: the quickstart's
    profile, docs/results/speed.md "Both cores")."""
    import torch

    import tasks  # noqa: F401

    torch.optim.AdamW([torch.zeros(1, requires_grad=True)])


def warm_data(spec: TrialSpec) -> None:
    """Load `spec`'s plugins and its task's data into this process's cache (tasks/loading.py),
    as its first trial would; a failure is left for that trial to report."""
    try:
        from search.executors.base import _load_plugins
        from tasks.by_name import get_task
        from tasks.loading import load_data, resolve_device

        _load_plugins([spec])
        load_data(get_task(spec.task, spec.task_options), spec.data_dir, resolve_device(spec.train.device))
    except Exception:
        pass


def worker_main(conn: Connection, threads: int) -> None:
    """A worker process: run the jobs the driver sends until it sends "close" or goes."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver stops the pool on Ctrl-C
    _die_with_parent()
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(threads)
    import torch

    torch.set_num_threads(threads)
    from core.trials import TrialStopped
    from search.executors.base import run_guarded_pack

    warm_up()

    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] == "close":
            return
        if msg[0] == "warm":
            warm_data(TrialSpec.from_dict(msg[1]))
            continue
        if msg[0] != "job":
            continue  # a stop for a trial that has already finished
        _, spec_dicts, stream = msg
        specs = [TrialSpec.from_dict(d) for d in spec_dicts]
        for spec in specs:
            conn.send(("begin", spec.number))
        stops: dict[int, str] = {}

        def on_epoch(spec: TrialSpec, index: int, record: Any, stops: dict[int, str] = stops) -> None:
            conn.send(("epoch", spec.number, index, dataclasses.asdict(record)))
            while conn.poll():
                m = conn.recv()
                if m[0] == "stop":
                    stops[m[1]] = m[2]
            if spec.number in stops:
                raise TrialStopped(stops[spec.number])

        results = run_guarded_pack(specs, on_epoch=on_epoch if stream else None)
        conn.send(("done", [r.to_dict() for r in results]))


@dataclass
class Worker:
    """One worker process, its end of the pipe and the job it runs (None: idle)."""

    process: Any
    conn: Connection
    job: list[TrialSpec] | None = None
    sent: float = 0.0  # when the job was sent (driver's clock)
    began: dict[int, float] = field(default_factory=dict)  # trial number -> when its worker began it


class WorkerPool:
    """`workers` spawned processes with `threads` torch threads each; jobs of one trial or
    one pack (`submit`), results as they finish (`wait`)."""

    def __init__(
        self, workers: int, threads: int, on_epoch: EpochCallback | None = None, trial_timeout: float | None = None
    ) -> None:
        self.threads = threads
        self.on_epoch = on_epoch
        self.trial_timeout = trial_timeout
        self._context = multiprocessing.get_context("spawn")
        self._workers = [self._start() for _ in range(workers)]
        self._queue: list[list[TrialSpec]] = []  # jobs waiting for an idle worker

    def _start(self) -> Worker:
        ours, theirs = self._context.Pipe(duplex=True)
        process = self._context.Process(
            target=worker_main, args=(theirs, self.threads), daemon=True, name="search-worker"
        )
        with main_not_reimported():
            process.start()
        theirs.close()
        return Worker(process, ours)

    @property
    def in_flight(self) -> int:
        return sum(len(w.job or []) for w in self._workers) + sum(len(j) for j in self._queue)

    @property
    def idle(self) -> int:
        return sum(w.job is None for w in self._workers) - len(self._queue)

    def warm(self, spec: TrialSpec) -> None:
        """Every worker loads `spec`'s plugins and task data before its first job."""
        for w in self._workers:
            try:
                w.conn.send(("warm", spec.to_dict()))
            except (BrokenPipeError, OSError):
                pass

    def submit(self, specs: list[TrialSpec]) -> None:
        """Queue a job (a trial, or a pack trained as one program); it starts on the first
        idle worker."""
        self._queue.append(specs)
        self._dispatch()

    def _dispatch(self) -> None:
        """Send queued jobs to idle workers (one that died while idle is replaced first)."""
        for w in list(self._workers):
            if not self._queue:
                return
            if w.job is not None:
                continue
            job = self._queue.pop(0)
            message = ("job", [s.to_dict() for s in job], self.on_epoch is not None)
            try:
                w.conn.send(message)
            except (BrokenPipeError, OSError):
                self._replace(w)
                w = self._workers[-1]
                w.conn.send(message)
            w.job, w.sent, w.began = job, time.monotonic(), {}

    def _replace(self, w: Worker) -> None:
        """Kill worker `w` (if it lives) and start a new one in its place."""
        if w.process.is_alive():
            w.process.kill()
        w.process.join(timeout=5)
        w.conn.close()
        self._workers.remove(w)
        self._workers.append(self._start())

    def _read(self, w: Worker, done: list[tuple[TrialSpec, TrialResult]]) -> None:
        """Every message worker `w` has sent; its job's results into `done` when finished."""
        from core.trials import EpochRecord, TrialStopped

        assert w.job is not None
        specs = {s.number: s for s in w.job}
        while w.conn.poll():
            msg = w.conn.recv()
            if msg[0] == "begin":
                w.began.setdefault(msg[1], time.monotonic())
            elif msg[0] == "epoch" and self.on_epoch is not None and msg[1] in specs:
                try:
                    self.on_epoch(specs[msg[1]], msg[2], EpochRecord(**msg[3]))
                except TrialStopped as stop:
                    w.conn.send(("stop", msg[1], str(stop)))
            elif msg[0] == "done":
                done.extend(zip(w.job, (TrialResult.from_dict(r) for r in msg[1])))
                w.job = None
                return

    def wait(self) -> list[tuple[TrialSpec, TrialResult]]:
        """Block until at least one job has finished (or failed: a dead worker, a timeout);
        return its trials' results."""
        while True:
            busy = [w for w in self._workers if w.job is not None]
            if not busy:
                return []
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=POLL_S)
            done: list[tuple[TrialSpec, TrialResult]] = []
            for w in busy:
                if w.conn in ready:
                    try:
                        self._read(w, done)
                    except (EOFError, OSError):
                        pass  # the pipe broke: the process is dead, handled below
                if w.job is not None and not w.process.is_alive():
                    code = w.process.exitcode
                    error = f"worker died (exit code {code})" if code is not None else "worker died"
                    done.extend((s, lost(s, error, w.sent, "cpu")) for s in w.job)
                    self._replace(w)
                elif w.job is not None and self._timed_out(w):
                    error = f"timed out after {self.trial_timeout:g} s (stopped with its worker process)"
                    done.extend((s, lost(s, error, w.sent, "cpu")) for s in w.job)
                    self._replace(w)
            self._dispatch()
            if done:
                return done

    def _timed_out(self, w: Worker) -> bool:
        """Whether `w`'s job has run past the trial timeout since its first trial began."""
        if self.trial_timeout is None or not w.began:
            return False
        return time.monotonic() - min(w.began.values()) > self.trial_timeout

    def close(self) -> None:
        """Ask every worker to stop, then kill those that do not (a job in flight is lost:
        the study records its trials as interrupted)."""
        for w in self._workers:
            try:
                if w.job is None:
                    w.conn.send(("close",))
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + 2.0
        for w in self._workers:
            if w.job is not None:
                w.process.kill()
            w.process.join(timeout=max(0.0, deadline - time.monotonic()))
            if w.process.is_alive():
                w.process.kill()
                w.process.join(timeout=2.0)
            w.conn.close()
        self._workers = []
