"""`--executor tune`: trials run as Ray Tune trials (search/tune/driver.py drives them).

This module registers the executor "tune" in search/executors' `EXECUTORS` when it is
imported, as a family file registers its family: `search run` imports search/tune/
before it checks anything (search/api/run.py `execute`), and so do the Tune driver and
the Python API for Tune scripts (search/tune/api.py). The engine knows the executor only
by that name, so Ray Tune's code lives in search/tune/ alone.

Tune, not the study loop, decides when a trial starts: its `Tuner` asks the study's
searcher for a configuration whenever it has room (search/tune/searcher.py), so the loop
of `StudyLoop.run` (submit up to `capacity`, then `wait`) does not apply. What lives here
is what `prepare` and the study loop need before Tune starts: the options `--executor
tune` takes, checked before the database is touched, and the hand-off the study loop
submits a trial to (the searcher takes it from there and gives it to Tune as the trial's
configuration).

`--pack K` (K > 1): each Tune trial trains up to K of the study's trials as one pack
(search/tune/searcher.py asks the study for them together; search/tune/trainable.py
trains them with `run_guarded_pack`, as a Ray task of `--executor ray --pack K` does);
`--cpus-per-trial` and `--gpus-per-trial` are then a pack's.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from core.errors import UserError
from core.trials import TrialResult, TrialSpec
from search.executors import EXECUTORS
from search.executors.base import EpochCallback, Executor
from search.executors.packs import check_pack

# Options of `--executor tune` (the keywords the CLI passes): name -> flag.
FLAGS = {
    "address": "--ray-address",
    "gpus_per_trial": "--gpus-per-trial",
    "cpus_per_trial": "--cpus-per-trial",
    "max_concurrent": "--max-concurrent",
    "tune_dir": "--tune-dir",
    "pack": "--pack",
    "num_cpus": "num_cpus",
    "num_gpus": "num_gpus",
}
# Options of other executors that Tune cannot honour, and why.
CANNOT = {"trial_timeout": "--trial-timeout: a hung trial reports nothing for Tune to act on (use --executor ray)"}


class TuneExecutor(Executor):
    """The hand-off between `StudyLoop.submit` and the Tune searcher: `submit` queues the
    trial's spec, the searcher `take`s it. Trials run in Tune's own loop, never in `wait`."""

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        for k in options:
            if k in CANNOT:
                raise UserError(f"--executor tune cannot honour {CANNOT[k]}")
        unknown = sorted(set(options) - set(FLAGS))
        if unknown:
            raise UserError(f"the tune executor takes no {', '.join(unknown)}")
        if options.get("pack") is not None:
            check_pack(options["pack"])
        number = {k: v for k, v in options.items() if k not in ("address", "tune_dir", "pack") and v is not None}
        for k, v in number.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise UserError(f"{FLAGS[k]} must be a number, got {v!r}")
        if number.get("gpus_per_trial", 0) < 0 or number.get("cpus_per_trial", 1) <= 0:
            raise UserError("--gpus-per-trial must be >= 0 and --cpus-per-trial > 0")
        if number.get("max_concurrent", 1) < 1:
            raise UserError("--max-concurrent must be at least 1")
        tune_dir = options.get("tune_dir")
        if tune_dir is not None and (not isinstance(tune_dir, str) or not tune_dir.strip()):
            raise UserError(f"--tune-dir must name a folder, got {tune_dir!r}")

    def __init__(self, on_epoch: EpochCallback | None = None, **options) -> None:
        self.check_options(options)
        self.on_epoch = on_epoch
        self.options = options
        self._queue: deque[TrialSpec] = deque()
        self.capacity = 1  # one hand-off at a time: the searcher takes each spec at once

    def submit(self, spec: TrialSpec) -> None:
        self._queue.append(spec)

    def take(self) -> TrialSpec:
        """The spec `StudyLoop.submit` just handed over."""
        return self._queue.popleft()

    @property
    def in_flight(self) -> int:
        return len(self._queue)

    def wait(self) -> list[tuple[TrialSpec, TrialResult]]:
        raise RuntimeError(
            "--executor tune runs its trials through Ray Tune: search.tune.run_tune_study, not StudyLoop.run"
        )


EXECUTORS.add("tune", TuneExecutor)  # trials on Ray Tune (search/tune/driver.py)
