"""Trial statuses: the one list, and the groups every layer uses.

    running      a process is training it now (owner + heartbeat)
    complete     trained; its metrics are stored
    failed       an exception (message and traceback stored); retried per --retries
    diverged     the loss became NaN/inf
    interrupted  the process running it stopped (Ctrl-C, kill -9); re-run first on resume
    rejected     proposed but never trained (e.g. over budget); the reason is its note
    pruned       stopped early by the pruner (dominated at equal epochs, `--pruner pareto`):
                 finished (counts towards --trials), never complete, its epochs kept

The database's CHECK constraint (storage.schema) is built from `TRIAL_STATUSES`;
migration 0001 froze the list as text, as migrations must, and 0006 added `pruned`.
"""

from __future__ import annotations

from typing import Literal

TrialStatus = Literal["running", "complete", "failed", "diverged", "interrupted", "rejected", "pruned"]
FinishedStatus = Literal["complete", "failed", "diverged", "pruned"]

TRIAL_STATUSES: tuple[str, ...] = ("running", "complete", "failed", "diverged", "interrupted", "rejected", "pruned")
# A trial with one of these counts towards --trials (unless a retry supersedes it).
FINISHED_STATUSES: tuple[str, ...] = ("complete", "failed", "diverged", "pruned")
# Trained but without a result: counted together as "failed" in summaries.
FAILURE_STATUSES: tuple[str, ...] = ("failed", "diverged")
# Replayed into a resumed study's sampler (complete ones with their values, the rest as failures).
REPLAYED_STATUSES: tuple[str, ...] = (*FINISHED_STATUSES, "interrupted")
# Shown in the reports' "problems" table, with their reasons.
PROBLEM_STATUSES: tuple[str, ...] = ("failed", "diverged", "interrupted", "rejected")
# Re-run on resume (up to --retries attempts).
RETRY_STATUSES: tuple[str, ...] = ("interrupted", "failed")
# Trained to the end or to the pruner's stop, with learning curves the pruner compares
# against (and whose epochs count as training work).
CURVE_STATUSES: tuple[str, ...] = ("complete", "pruned")
# Always listed in status summaries, even at zero.
HEADLINE_STATUSES: tuple[str, ...] = ("complete", "failed", "rejected")
