"""Trials on Ray: local GPUs/CPUs or a Ray cluster (`--executor ray`).

Why Ray *tasks* fed by the study's own ask/tell loop rather than a Ray Tune `Tuner`: the
study already owns the sampler, the hard budget gate, rejections, retries and the
database; with tasks, Ray only places trials on devices, and the driver stays the single
writer of results (workers need no database access and no network path to it). It is the
same loop as the local executor, just `capacity` trials in flight at once.

Resources: each trial asks Ray for `cpus_per_trial` CPUs and `gpus_per_trial` GPUs;
fractional GPUs (0.25) pack several small trials on one GPU (Ray sets
CUDA_VISIBLE_DEVICES and OMP_NUM_THREADS per task). Faults:
- a worker process that dies (segfault, kill -9, node lost): Ray raises on `get`; the
  trial is recorded `failed` with the reason and the study retries it (`--retries`);
- a trial that hangs: with `trial_timeout`, a trial running longer is cancelled
  (force-killed) and recorded `failed` ("timed out"), then retried likewise; the time
  counts from the trial's start in its worker (the worker tells the board), not from its
  submission, so a trial queued for a free CPU or a worker slow to start on a loaded
  machine is not taken for a hung one;
- exceptions, NaN and out-of-memory inside a trial are handled by the trainer as on the
  local executor (the worker returns a failed/diverged result).
Epochs: when the study passes an on_epoch (live progress, `--pruner pareto`), workers post
each epoch to an `EpochBoard` actor; the driver relays them to on_epoch every `poll_s`,
and a trial the pruner stops is told so at its next epoch (it ends `pruned`).
Workers import this package: on a cluster, install it on every node (`pip install -e .`)
and give every node the data at the same `--data-dir` path.
"""

from __future__ import annotations

import math
import os
import socket
import time
from typing import Any

from core.errors import UserError, one_line
from core.trials import TrialResult, TrialSpec
from search.executors.base import EpochCallback, Executor, lost, run_guarded_pack
from search.executors.faults import ENV as FAULT_ENV
from search.executors.packs import check_pack, resolve_pack


def worker_threads(cpus_per_trial: float) -> int:
    """Torch threads of a Ray trial: its CPU share, at least one (Ray's OMP_NUM_THREADS rule)."""
    return max(1, int(math.floor(cpus_per_trial + 1e-9)))


def _run_remote(
    spec_dicts: list[dict[str, Any]], threads: int, board: Any = None, stream: bool = True
) -> list[dict[str, Any]]:
    """Runs inside a Ray worker: one trial, or a pack of trials (`--pack K`: trained as one
    batched program where they fuse, `run_guarded_pack`), with `threads` torch threads,
    returned as plain data. With an epoch `board` (an EpochBoard actor), each trial's start
    is posted to it and, with `stream`, every epoch, and a stop the driver put there ends
    that trial as pruned (core.trials.TrialStopped)."""
    import dataclasses

    import ray
    import torch

    from core.trials import TrialStopped

    torch.set_num_threads(threads)
    specs = [TrialSpec.from_dict(d) for d in spec_dicts]
    on_epoch = None
    if board is not None:
        for spec in specs:
            board.begin.remote(spec.number)  # the timeout counts from here
    if board is not None and stream:

        def on_epoch(spec, index, record):
            reason = ray.get(board.post.remote(spec.number, index, dataclasses.asdict(record)))
            if reason is not None:
                raise TrialStopped(reason)

    return [r.to_dict() for r in run_guarded_pack(specs, on_epoch=on_epoch)]


class EpochBoard:
    """A Ray actor between the workers and the driver: workers post each epoch's record
    (and learn whether the driver stopped their trial); the driver drains the records,
    hands them to the study's on_epoch and posts stops."""

    def __init__(self) -> None:
        self.records: list[tuple[int, int, dict[str, Any]]] = []
        self.stops: dict[int, str] = {}
        self.begun: list[int] = []

    def begin(self, number: int) -> None:
        self.begun.append(number)

    def drain_begun(self) -> list[int]:
        """The trials whose workers started since the last call."""
        out, self.begun = self.begun, []
        return out

    def post(self, number: int, index: int, record: dict[str, Any]) -> str | None:
        self.records.append((number, index, record))
        return self.stops.get(number)

    def drain(self) -> list[tuple[int, int, dict[str, Any]]]:
        out, self.records = self.records, []
        return out

    def stop(self, number: int, reason: str) -> None:
        self.stops[number] = reason

    def stopped(self, number: int) -> str | None:
        """Why the driver stopped trial `number`, None while it runs on (a Tune pack's
        member asks after each epoch it reported: search/tune/trainable.py)."""
        return self.stops.get(number)


def board_on_this_node(ray: Any) -> Any:
    """An EpochBoard actor, placed on the driver's own node: a board on a worker node
    dies with that node and takes the driver with it (a two-node cluster with its worker
    node killed crashed the driver in 5 of 7 runs: docs/benchmarks.md §20). The driver's
    node lives as long as the study does."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    return ray.remote(num_cpus=0)(EpochBoard).options(scheduling_strategy=here).remote()


# Options of `--executor ray` (RayExecutor's keywords that the CLI passes): name -> flag.
FLAGS = {
    "address": "--ray-address",
    "gpus_per_trial": "--gpus-per-trial",
    "cpus_per_trial": "--cpus-per-trial",
    "max_concurrent": "--max-concurrent",
    "trial_timeout": "--trial-timeout",
    "num_cpus": "num_cpus",
    "num_gpus": "num_gpus",
    "poll_s": "poll_s",
    "pack": "--pack",
}


def check_address(address: str | None, timeout_s: float = 5.0) -> None:
    """UserError at once when `--ray-address HOST:PORT` does not answer (ray.init would wait
    for minutes before giving up). 'auto', 'local', none and ray:// addresses are left to
    ray.init. Both Ray executors (`ray`, `tune`) probe through `_join_ray`."""
    if address in (None, "", "local", "auto") or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"--ray-address must be 'auto' or HOST:PORT, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as e:
        raise UserError(f"the Ray cluster at {address} does not answer: {e.strerror or e}") from None


def _join_ray(ray, address: str | None, num_cpus: int | None, num_gpus: int | None) -> None:
    """Start a local Ray (address None, "" or "local") or join a cluster (a HOST:PORT that
    does not answer is refused at once: `check_address`); the workers get this process's
    fault-injection and data-directory variables. UserError if it fails."""
    check_address(address)
    try:
        env = {k: os.environ[k] for k in (FAULT_ENV, "SEARCH_DATA_DIR") if k in os.environ}
        ray.init(
            address=None if address in (None, "", "local") else address,
            num_cpus=num_cpus,
            num_gpus=num_gpus,
            include_dashboard=False,
            log_to_driver=True,
            configure_logging=False,
            runtime_env={"env_vars": env} if env else None,
        )
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise UserError(f"cannot start or join Ray at {address or 'local'}: {one_line(e)}") from None


class RayExecutor(Executor):
    """Trials on Ray workers, on this machine or a cluster (`--executor ray`), each with
    its share of a GPU (`--gpus-per-trial`); a lost worker's trial is retried."""

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        unknown = sorted(set(options) - set(FLAGS))
        if unknown:
            raise UserError(f"the ray executor takes no {', '.join(unknown)}")
        if options.get("pack") is not None:
            check_pack(options["pack"])
        number = {k: v for k, v in options.items() if k not in ("address", "pack") and v is not None}
        for k, v in number.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise UserError(f"{FLAGS[k]} must be a number, got {v!r}")
        if number.get("gpus_per_trial", 0) < 0 or number.get("cpus_per_trial", 1) <= 0:
            raise UserError("--gpus-per-trial must be >= 0 and --cpus-per-trial > 0")
        if number.get("trial_timeout", 1) <= 0:
            raise UserError("--trial-timeout must be positive")
        if number.get("max_concurrent", 1) < 1:
            raise UserError("--max-concurrent must be at least 1")
        # a cluster that does not answer is bad input: refused here, in `prepare`, before the
        # study is written to the database (the executor itself is made after that)
        check_address(options.get("address"))

    def __init__(
        self,
        on_epoch: EpochCallback | None = None,
        *,
        address: str | None = None,
        gpus_per_trial: float = 0.0,
        cpus_per_trial: float = 1.0,
        max_concurrent: int | None = None,
        trial_timeout: float | None = None,
        num_cpus: int | None = None,
        num_gpus: int | None = None,
        poll_s: float = 1.0,
        pack: int | str = 1,
    ) -> None:
        self.check_options(
            dict(
                address=address,
                gpus_per_trial=gpus_per_trial,
                cpus_per_trial=cpus_per_trial,
                max_concurrent=max_concurrent,
                trial_timeout=trial_timeout,
                num_cpus=num_cpus,
                num_gpus=num_gpus,
                poll_s=poll_s,
                pack=pack,
            )
        )
        try:
            import ray
        except ImportError:  # pragma: no cover - ray is a dependency
            raise UserError("--executor ray needs Ray: pip install 'ray[tune]'") from None
        self.ray = ray
        t0 = time.monotonic()
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            _join_ray(ray, address, num_cpus, num_gpus)
        self.startup_s = time.monotonic() - t0
        # `--pack K`: each Ray task trains up to K trials as one pack; the slots hold packs
        self.pack = resolve_pack(pack, "cuda" if gpus_per_trial > 0 else "cpu")
        self.capacity = (max_concurrent or self._fitting(cpus_per_trial, gpus_per_trial)) * self.pack
        self.trial_timeout = trial_timeout
        self.poll_s = poll_s
        self._remote = ray.remote(_run_remote).options(num_cpus=cpus_per_trial, num_gpus=gpus_per_trial, max_retries=0)
        self.threads = worker_threads(cpus_per_trial)
        self._refs: dict[Any, tuple[list[TrialSpec], float]] = {}  # a Ray task -> its trials, when submitted
        self._forming: list[TrialSpec] = []  # trials submitted, waiting for their pack to fill
        self._running_since: dict[int, float] = {}  # trial number -> when its worker began (driver's clock)
        self.on_epoch = on_epoch  # with one, workers stream epochs through an EpochBoard actor
        # the board also tells when a trial begins in its worker (its timeout counts from then)
        wants_board = on_epoch is not None or trial_timeout is not None
        self._board = board_on_this_node(self.ray) if wants_board else None

    def _fitting(self, cpus_per_trial: float, gpus_per_trial: float) -> int:
        """How many trials the cluster's CPUs (and GPUs, when a trial takes some) fit at once."""
        res = self.ray.cluster_resources()
        fits = [res.get("CPU", 0) / cpus_per_trial]
        if gpus_per_trial > 0:
            if res.get("GPU", 0) <= 0:
                self.close()
                raise UserError(f"--gpus-per-trial {gpus_per_trial} but the Ray cluster has no GPU")
            fits.append(res["GPU"] / gpus_per_trial)
        return max(1, int(math.floor(min(fits) + 1e-9)))

    @property
    def in_flight(self) -> int:
        return sum(len(specs) for specs, _ in self._refs.values()) + len(self._forming)

    def submit(self, spec: TrialSpec) -> None:
        self._forming.append(spec)
        if len(self._forming) >= self.pack:
            self._dispatch()

    def _dispatch(self) -> None:
        """The forming pack (or one trial) becomes a Ray task."""
        specs, self._forming = self._forming, []
        # device "auto" is resolved by the worker: cuda when Ray gave it a GPU
        ref = self._remote.remote([s.to_dict() for s in specs], self.threads, self._board, self.on_epoch is not None)
        self._refs[ref] = (specs, time.monotonic())

    def _relay_epochs(self) -> None:
        """Hand the epochs the workers posted to the study's on_epoch; a TrialStopped it
        raises becomes a stop on the board, which the trial's worker reads at its next
        epoch (so a stopped trial trains on until then: a few epochs more than on the local
        executor when its epochs are shorter than `poll_s`)."""
        from core.trials import EpochRecord, TrialStopped

        if self._board is None or self.on_epoch is None:
            return
        specs = {spec.number: spec for pack, _ in self._refs.values() for spec in pack}
        for number, index, record in self.ray.get(self._board.drain.remote()):
            if number not in specs:
                continue
            try:
                self.on_epoch(specs[number], index, EpochRecord(**record))
            except TrialStopped as stop:
                self._board.stop.remote(number, str(stop))

    def wait(self) -> list[tuple[TrialSpec, TrialResult]]:
        """Results as their Ray tasks finish (a pack's all at once). A worker that dies, or
        an exception outside the trials' guard, fails every trial of its task; with
        `trial_timeout`, a task running longer since its worker began (a pack: since the
        first of its trials began) is cancelled and its trials fail as timed out."""
        ray = self.ray
        if self._forming:
            self._dispatch()
        while True:
            ready, _ = ray.wait(list(self._refs), num_returns=1, timeout=self.poll_s)
            self._relay_epochs()
            done: list[tuple[TrialSpec, TrialResult]] = []
            for ref in ready:
                specs, started = self._refs.pop(ref)
                for spec in specs:
                    self._running_since.pop(spec.number, None)
                try:
                    done.extend(zip(specs, (TrialResult.from_dict(r) for r in ray.get(ref))))
                except ray.exceptions.RayTaskError as e:  # an exception outside our guard, e.g. at import
                    cause = e.cause if getattr(e, "cause", None) is not None else e
                    error = f"error in worker: {one_line(cause, with_type=True)}"
                    done.extend((s, lost(s, error, started, "ray")) for s in specs)
                except ray.exceptions.RayError as e:  # the worker process or its node died
                    error = f"worker died: {one_line(e, with_type=True)}"
                    done.extend((s, lost(s, error, started, "ray")) for s in specs)
            if self.trial_timeout is not None:
                now = time.monotonic()
                for number in ray.get(self._board.drain_begun.remote()):
                    self._running_since.setdefault(number, now)
                for ref, (specs, started) in list(self._refs.items()):
                    began = [self._running_since[s.number] for s in specs if s.number in self._running_since]
                    if began and now - min(began) > self.trial_timeout:
                        ray.cancel(ref, force=True)
                        del self._refs[ref]
                        error = f"timed out after {self.trial_timeout:g} s (hung worker)"
                        for spec in specs:
                            self._running_since.pop(spec.number, None)
                            done.append((spec, lost(spec, error, started, "ray")))
            if done:
                return done

    def close(self) -> None:
        for ref in list(getattr(self, "_refs", {})):
            try:
                self.ray.cancel(ref, force=True)
            except Exception:
                pass
        self._refs = {}
        if getattr(self, "_owns_ray", False) and self.ray.is_initialized():
            self.ray.shutdown()
