"""The database's tables and columns, as Markdown, read from the schema itself
(`storage.schema.Base.metadata`), so the documentation cannot drift from the code: the
documentation site's build writes it to reference/schema.md (docs/hooks/cli_reference.py).

Each column's meaning is in `COLUMN_DOCS` below; a test fails when a column of the schema
has no entry there, or an entry names no column.
"""

from __future__ import annotations

from sqlalchemy import Column, Table

from core.statuses import TRIAL_STATUSES
from storage.schema import DIM_COLUMNS, Base

TABLE_DOCS: dict[str, str] = {
    "studies": "One row per study: a search of one or more families on one task under one budget.",
    "trials": (
        "One row per proposed configuration of a study: its family, exact parameter count, "
        "configuration, status and objective. A seed check is a trial of its own whose `note` "
        "says which trial it checks; a retried trial is a new row whose `retry_of` names the one it retries."
    ),
    "trial_metrics": "A finished trial's test metrics, aggregated over its runs: mean, sample std and runs.",
    "runs": "One seed of one trial: of the search (`retraining` 0) or of a retraining (`search train`).",
    "epochs": "The validation metrics after each epoch of one run: the learning curves the pruner and the pages read.",
    "run_artifacts": "A file one run produced: a PNG of samples kept inline, or the kept weights in an artifact store.",
    "retrainings": "A trial's configuration trained again (`search train`): its settings, status and metrics.",
}

_DIM = "a key dimension copied from `config` for quick SQL; NULL for a family without it"

COLUMN_DOCS: dict[str, str] = {
    "studies.id": "row id",
    "studies.name": "the study's name (`--study`; by default TASK-FAMILIES)",
    "studies.task": "the task trained on (`--task`)",
    "studies.families": "the families searched together (a JSON list)",
    "studies.metric": "the searched metric (the task's validation metric; test values are reported)",
    "studies.direction": "`maximize` or `minimize`",
    "studies.budget": "the most parameters a model may have (in the study's budget measure)",
    "studies.settings": "every setting that decides the search (sampler, pruner, epochs, seeds, recipe and "
    "its `recipe_version`, ...; a JSON object), and `budget_history` when a resume raised the budget",
    "studies.created_at": "when the study was created (UTC)",
    "trials.id": "row id",
    "trials.study_id": "its study (deleting the study deletes its trials)",
    "trials.number": "0, 1, ... in the order proposed, unique within the study",
    "trials.family": "the family the configuration belongs to",
    "trials.status": f"one of {', '.join(f'`{s}`' for s in TRIAL_STATUSES)} (core/statuses.py)",
    "trials.params": "the exact parameter count, in the study's budget measure",
    "trials.config": "the whole configuration (a JSON object: widths, depths, learning rate, ...)",
    **{f"trials.{d}": _DIM for d in DIM_COLUMNS},
    "trials.owner": "who runs it while `running` (`host:pid:token`)",
    "trials.heartbeat_at": "its runner's last sign of life; a stale one lets another process take the trial over",
    "trials.attempt": "0 for a first try, 1, 2, ... for retries (`--retries`)",
    "trials.retry_of": "the number of the trial this one retries, or NULL",
    "trials.token": "the call that added the row, so that a write retried after a lost connection finds it",
    "trials.objective": "the searched metric's test value at the best-validation epoch (mean over its runs)",
    "trials.seeds": "the seeds of its runs (a JSON list)",
    "trials.optuna": "the Optuna trial's parameters and distributions, as the sampler proposed them",
    "trials.note": "why it was rejected or interrupted, the pruner's reason, or `seed check of trial N`",
    "trials.error": "a failed trial's error message",
    "trials.traceback": "a failed trial's traceback",
    "trials.device": "the device it trained on",
    "trials.started_at": "when its training started (UTC)",
    "trials.finished_at": "when it finished (UTC)",
    "trials.duration_s": "its wall time in seconds, every run included",
    "trial_metrics.id": "row id",
    "trial_metrics.trial_id": "its trial",
    "trial_metrics.name": "the metric (`psnr`, `accuracy`, `loss`, ...)",
    "trial_metrics.mean": "the mean over the trial's runs",
    "trial_metrics.std": "the sample std over its runs (NULL for one run)",
    "trial_metrics.n": "how many runs the mean is over",
    "runs.id": "row id",
    "runs.trial_id": "its trial",
    "runs.retraining": "0 for the search's runs, k for the runs of the trial's retraining number k",
    "runs.repeat": "0, 1, ... : which of the trial's seeds",
    "runs.seed": "the seed it trained with",
    "runs.status": "the run's own status (a pruned or diverged seed)",
    "runs.best_epoch": "the epoch whose validation value was best (its test metrics are the run's)",
    "runs.metrics": "its test metrics at the best epoch (a JSON object)",
    "runs.duration_s": "its training time in seconds",
    "runs.error": "why it failed, if it did",
    "epochs.id": "row id",
    "epochs.run_id": "its run",
    "epochs.epoch": "1, 2, ...",
    "epochs.train_loss": "the mean training loss over the epoch (or since the last evaluation)",
    "epochs.metrics": "the validation metrics after the epoch (a JSON object)",
    "epochs.elapsed_s": "seconds since the run started",
    "run_artifacts.id": "row id",
    "run_artifacts.run_id": "its run",
    "run_artifacts.name": "the artifact's name (`weights` for the kept weights, or a sample picture's)",
    "run_artifacts.media_type": "its media type",
    "run_artifacts.data": "the file itself, base64, for a small file kept inline; NULL for a stored one",
    "run_artifacts.store": "the artifact store's URL (`--artifacts`)",
    "run_artifacts.store_key": "the file's key in that store",
    "run_artifacts.size": "its size in bytes",
    "run_artifacts.sha256": "its SHA-256, checked when it is loaded",
    "run_artifacts.removed_at": "when the file was deleted from the store (`--keep pareto`: its trial left the front)",
    "retrainings.id": "row id",
    "retrainings.trial_id": "the trial retrained",
    "retrainings.number": "1, 2, ... per trial",
    "retrainings.status": "as a trial's status",
    "retrainings.settings": "its epochs, seeds, recipe and training settings (a JSON object)",
    "retrainings.metrics": "its test metrics, name -> {mean, std, n}",
    "retrainings.device": "where it trained",
    "retrainings.error": "why it failed, if it did",
    "retrainings.started_at": "when it started (UTC)",
    "retrainings.finished_at": "when it finished (UTC)",
    "retrainings.duration_s": "its wall time in seconds",
    "retrainings.token": "as `trials.token`",
}


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _kind(column: Column) -> str:
    bits = [str(column.type.compile()).lower() if not hasattr(column.type, "impl") else "timestamp (UTC)"]
    if column.primary_key:
        bits.append("primary key")
    for fk in column.foreign_keys:
        bits.append(f"-> {fk.target_fullname}")
    if column.unique:
        bits.append("unique")
    if column.nullable and not column.primary_key:
        bits.append("may be NULL")
    return ", ".join(bits)


def table_reference(table: Table) -> str:
    """One table's section: what a row is, its unique keys, and its columns."""
    out = [f"## `{table.name}`", "", TABLE_DOCS[table.name], ""]
    uniques = [c for c in table.constraints if c.__class__.__name__ == "UniqueConstraint"]
    if uniques:
        keys = ", ".join("(" + ", ".join(f"`{c.name}`" for c in u.columns) + ")" for u in uniques)
        out += [f"Unique: {keys}.", ""]
    out += ["| column | type | meaning |", "|---|---|---|"]
    for column in table.columns:
        meaning = COLUMN_DOCS[f"{table.name}.{column.name}"]
        out.append(f"| `{column.name}` | {_cell(_kind(column))} | {_cell(meaning)} |")
    return "\n".join(out) + "\n"


def schema_reference() -> str:
    """The whole page: every table of the schema, in the order a trial's data hangs together."""
    head = [
        "# The database's tables",
        "",
        "Generated from `storage/schema.py` when the site is built, so it matches the code. How the",
        "tables fit together, and how to query them, is in [the storage schema explained](../explanations/storage.md).",
        "",
    ]
    tables = [Base.metadata.tables[name] for name in TABLE_DOCS]
    return "\n".join(head) + "\n" + "\n".join(table_reference(t) for t in tables)
