"""Jobs and the retries a finished trial earns.

A `Job` is a trial about to run: a fresh proposal, or a retry of an earlier trial with
the same configuration and seeds. A failed trial is retried up to `--retries` times; an
out-of-memory failure once more with half the batch when `--oom-retry` is on (before the
ordinary retries). Diverged trials are not retried: they would diverge again.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from core.trials import TrainSettings, TrialResult
from search.engine.sampling import UNPRUNED_NOTE, Proposal
from search.engine.seed_checks import check_note, checked_trial
from storage.records import TrialRecord

OOM_NOTE = "out of memory; batch size {batch}"  # an out-of-memory retry's note
_OOM_NOTE = re.compile(r"out of memory; batch size (\d+)")


def trained_batch(note: str | None) -> int | None:
    """The batch size an out-of-memory retry trained with (from its note), None for a
    trial that trained with the study's: what a seed check of it trains with too."""
    m = _OOM_NOTE.search(note or "")
    return int(m.group(1)) if m else None


def checked_train(train: TrainSettings, first: TrialRecord) -> TrainSettings:
    """The training settings of a seed check of trial `first`: the study's, at the batch
    `first` trained with (an out-of-memory retry's half batch), so that the check trains
    the same configuration and does not run out of memory again."""
    batch = trained_batch(first.note)
    return train if batch is None else dataclasses.replace(train, batch_size=batch, batch_size_halved=True)


@dataclass
class Job:
    """A trial about to run: a fresh proposal or a retry of an earlier trial."""

    proposal: Proposal
    train: TrainSettings
    attempt: int = 0
    retry_of: int | None = None
    seeds: tuple[int, ...] | None = None
    supersedes_final: bool = False  # the retried trial is failed, so counted as final until this runs


def retry_job(
    number: int, proposal: Proposal, train: TrainSettings, attempt: int, why: str, seeds: tuple[int, ...], failed: bool
) -> Job:
    """The job that re-runs trial `number` (attempt `attempt`), noted with the reason."""
    note = f"retry {attempt} of trial {number}: {why}" + (f"; {UNPRUNED_NOTE}" if proposal.unpruned else "")
    checked = checked_trial(proposal.note)
    if checked is not None:  # a seed check's retry is one too
        note += f"; {check_note(checked)}"
    return Job(
        Proposal(
            proposal.family, proposal.config, proposal.params, proposal.optuna, note=note, unpruned=proposal.unpruned
        ),
        train,
        attempt,
        number,
        seeds,
        supersedes_final=failed,
    )


def resume_job(record: TrialRecord, train: TrainSettings) -> Job:
    """The retry of a stored failed or interrupted trial, queued when a study resumes."""
    why = "interrupted" if record.status == "interrupted" else (record.error or "failed")
    checked = checked_trial(record.note)
    proposal = Proposal(
        record.family,
        record.config,
        record.params,
        record.optuna,
        note=None if checked is None else check_note(checked),
        unpruned=UNPRUNED_NOTE in (record.note or "") or checked is not None,
    )
    return retry_job(
        record.number, proposal, train, record.attempt + 1, why, tuple(record.seeds), record.status == "failed"
    )


def out_of_memory(result: TrialResult) -> bool:
    return result.status == "failed" and "out of memory" in (result.error or "").lower()


def follow_up(
    job: Job,
    number: int,
    seeds: tuple[int, ...],
    result: TrialResult,
    *,
    retries: int,
    oom_retry: bool,
    default_batch: int,
) -> Job | None:
    """The retry that trial `number` (run as `job`, finished with `result`) earns, if any."""
    if out_of_memory(result) and oom_retry and not job.train.batch_size_halved:
        batch = (job.train.batch_size or default_batch) // 2
        if batch >= 2:
            train = dataclasses.replace(job.train, batch_size=batch, batch_size_halved=True)
            return retry_job(number, job.proposal, train, job.attempt + 1, OOM_NOTE.format(batch=batch), seeds, True)
    if result.status == "failed" and job.attempt < retries:
        return retry_job(number, job.proposal, job.train, job.attempt + 1, result.error or "failed", seeds, True)
    return None
