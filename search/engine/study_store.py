"""`StudyStore`: what the study loop needs from storage, and nothing more.

`storage.Store` implements it on SQLite and PostgreSQL; the loop's unit tests use an
in-memory fake (tests/search/fakes.py). Every write is its own transaction, committed
before the call returns, so a killed driver loses nothing it was told about.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from core.trials import TrialResult
from storage.records import ConfigurationRow, ObjectiveRow, StudyRecord, TrialRecord


class StudyStore(Protocol):
    def create_or_load_study(
        self,
        name: str,
        *,
        task: str,
        families: Iterable[str],
        metric: str,
        direction: str,
        budget: int,
        settings: dict[str, Any] | None = None,
    ) -> StudyRecord:
        """Create study `name`, or load it (adding new families, taking the new budget).
        A different task, metric or direction than the stored one is a StorageError."""
        ...

    def interrupt_running(self, study: str, orphan: Callable[[TrialRecord], bool] | None = None) -> list[TrialRecord]:
        """Mark the `running` trials that `orphan` says no live process runs `interrupted`
        (only if still running when written); return them."""
        ...

    def trials(self, study: str, statuses: Iterable[str] | None = None) -> list[TrialRecord]:
        """The study's trials with these statuses (all without), by number, with their
        aggregated metrics: `metrics[name] = (mean, std | None, n)`."""
        ...

    def retry_candidates(self, study: str, statuses: Iterable[str], max_attempt: int) -> list[TrialRecord]:
        """Trials with one of `statuses`, `attempt < max_attempt` and no retry yet."""
        ...

    def epochs_of(
        self, study: str, statuses: Iterable[str], repeat: int | None = None
    ) -> dict[int, list[dict[str, Any]]]:
        """Per-epoch rows (repeat, seed, epoch, train_loss, validation metrics, elapsed_s)
        of every run (only run `repeat` if given) of the trials with one of `statuses`, by
        trial number, in one read (the pruner's curves after a resume)."""
        ...

    def objectives(self, study: str, family: str, statuses: Iterable[str]) -> list[ObjectiveRow]:
        """(number, params, objective) of the trials of `family` with one of `statuses`, by
        number; the objective is the study metric's mean over the runs, NaN when missing
        (`--keep pareto`)."""
        ...

    def configurations(
        self, study: str, family: str, statuses: Iterable[str], sizes: Iterable[int]
    ) -> list[ConfigurationRow]:
        """(number, runs, config) of those trials whose parameter count is in `sizes`, by
        number (`--keep pareto`'s configurations)."""
        ...

    def progress(self, study: str, without_note: str | None = None) -> tuple[int, int]:
        """(final, running) over every process: finished trials (core.statuses'
        FINISHED_STATUSES) that no retry supersedes, and trials running now; trials whose
        note contains `without_note` (if given) are not counted."""
        ...

    def add_trial(
        self,
        study: str,
        *,
        family: str,
        config: dict[str, Any],
        params: int,
        seeds: Iterable[int],
        status: str = "running",
        optuna: dict[str, Any] | None = None,
        note: str | None = None,
        owner: str | None = None,
        attempt: int = 0,
        retry_of: int | None = None,
    ) -> int:
        """Insert a trial with the study's next free number (unique across processes),
        its heartbeat starting now when it has an owner; return the number."""
        ...

    def add_rejected(self, study: str, *, family: str, config: dict[str, Any], params: int, reason: str) -> int:
        """Record a proposal that was never trained (status `rejected`, reason as its note)."""
        ...

    def finish_trial(self, study: str, number: int, result: TrialResult) -> None:
        """Store a trial's status, metrics, runs, epochs and artifacts in one transaction
        (replacing what an earlier call stored for it)."""
        ...

    def remove_artifacts(self, study: str, numbers: Iterable[int], name: str) -> list[dict[str, Any]]:
        """Mark the stored artifacts `name` of these trials removed; return those this call
        marked (number, repeat, store, store_key), whose files the caller then deletes.
        Used only when weights are kept (a store with a `url`, or `--artifacts`)."""
        ...

    def interrupt_trials(self, study: str, numbers: Iterable[int]) -> None:
        """Mark these trials `interrupted` if they are still running (Ctrl-C, an error)."""
        ...

    def heartbeat(self, study: str, numbers: Iterable[int], owner: str) -> None:
        """Refresh the heartbeat of the running trials among `numbers` that `owner` runs."""
        ...
