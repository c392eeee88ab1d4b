"""Training a trial's configuration again (`search train`): longer, with more seeds, or
with a recipe's training settings; stored as a retraining of that trial, beside the
search's results (storage/retrainings.py), never in place of them.

`plan_retraining` checks everything (the study and trial, a complete trial, the epochs and
seeds, the training settings, the data, where the weights go) before anything is written;
`run_retraining` trains in this process (`tasks.run_trial`, each complete run's weights
written to the artifact store) and stores the retraining in one transaction when it has
ended. A process stopped before that leaves no row; the files it wrote are deleted when
it can (Ctrl-C, an error), else left unrecorded in the store (kill -9), as a killed
search's are.

The seeds are the trial's own (`run_seeds` of the study's seed and the configuration):
the first R seeds the search would draw for R repeats, so `--epochs` equal to the
search's and `--repeats 1` trains the search's first run again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from core.errors import UserError
from core.trials import EpochRecord, TrainSettings, TrialResult, TrialSpec
from search.artifacts.location import normalize, open_location, weights_location
from search.artifacts.weights import WEIGHTS, write_weights
from search.engine.study import run_seeds
from storage.records import StudyRecord, TrialRecord

# The training settings a recipe may change in a retraining (`TrainSettings` fields).
RECIPE_TRAIN_KEYS = ("batch_size", "optimizer", "lr", "max_train_samples", "tokens", "ema", "ema_warmup")


@dataclass(frozen=True)
class RetrainRequest:
    """What `search train` asks for."""

    study: str
    trial: int
    epochs: int
    repeats: int = 1
    recipe: str | None = None  # its name, recorded
    recipe_task: str | None = None  # the task the recipe is for (it must be the study's)
    train: dict[str, Any] = field(default_factory=dict)  # RECIPE_TRAIN_KEYS -> value (a recipe's)
    device: str = "auto"
    data_dir: str | None = None
    artifacts: str | None = None  # where the weights go (default: where the study keeps them)


@dataclass(frozen=True)
class RetrainPlan:
    """A checked retraining: the study, the trial, the spec to run and what is recorded."""

    study: StudyRecord
    trial: TrialRecord
    spec: TrialSpec
    settings: dict[str, Any]


class RetrainProgress(Protocol):
    def start(self, study: StudyRecord, total: int, done: int, retries: int) -> None: ...
    def trial_started(self, spec: TrialSpec, params: int, note: str | None) -> None: ...
    def epoch(self, spec: TrialSpec, repeat: int, record: EpochRecord) -> None: ...
    def trial_finished(self, spec: TrialSpec, params: int, result: TrialResult, finished: int) -> None: ...
    def close(self) -> None: ...


def check_count(flag: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{flag} must be at least 1, got {value!r}")
    return value


def plan_retraining(store: Any, req: RetrainRequest) -> RetrainPlan:
    """The retraining `req` asks for, every part checked; nothing is written (UserError,
    one line, otherwise)."""
    from tasks import get_task, load_data
    from tasks.loading import resolve_device
    from tasks.optimizers import OPTIMIZERS
    from tasks.train import Hyper

    epochs, repeats = check_count("--epochs", req.epochs), check_count("--repeats", req.repeats)
    unknown = sorted(set(req.train) - set(RECIPE_TRAIN_KEYS))
    if unknown:
        raise UserError(f"a retraining cannot set {', '.join(unknown)}")
    study = store.get_study(req.study)  # unknown study: "no study named ..."
    found = [t for t in store.trials(req.study) if t.number == req.trial]
    if not found:
        raise UserError(f"study {req.study!r} has no trial {req.trial}")
    trial = found[0]
    if req.recipe_task is not None and req.recipe_task != study.task:
        raise UserError(f"recipe {req.recipe!r} is for task {req.recipe_task}; study {study.name!r} is on {study.task}")
    if trial.status != "complete":
        raise UserError(f"trial {req.trial} of {req.study!r} is {trial.status}; only a complete trial is trained again")
    settings = study.settings or {}
    base = TrainSettings.from_dict(settings.get("train") or {})
    train = dataclasses.replace(base, **req.train, epochs=epochs, device=req.device, batch_size_halved=False)
    if train.optimizer is not None:
        OPTIMIZERS.get(train.optimizer)  # unknown names fail with the known ones
    resolve_device(train.device)
    task_options = dict(settings.get("task_options") or {})
    seeds = run_seeds(int(settings.get("seed", 0)), trial.family, trial.config, repeats)
    spec = TrialSpec(
        study.name,
        trial.number,
        trial.family,
        dict(trial.config),
        study.task,
        seeds,
        train,
        req.data_dir,
        task_options,
        weights=_weights_url(store, req),
    )
    task = get_task(study.task, task_options)
    Hyper.resolve(spec, task)  # epochs, batch size, learning rate, EMA
    load_data(task, req.data_dir, resolve_device(train.device))  # missing data fails here, before any write
    record = {
        "epochs": epochs,
        "repeats": repeats,
        "seeds": list(seeds),
        "recipe": req.recipe,
        "train": train.to_dict(),
        "weights": spec.weights,
    }
    return RetrainPlan(study, trial, spec, record)


def _weights_url(store: Any, req: RetrainRequest) -> str:
    """Where the retraining's weights go, reachable: `--artifacts`, else the store of the
    trial's kept weights, else the study's default folder (beside a SQLite file)."""
    if req.artifacts is not None:
        url = normalize(req.artifacts)
    else:
        kept = [a["store"] for a in store.artifacts(req.study, req.trial, WEIGHTS) if a.get("store")]
        url = kept[0] if kept else weights_location("all", None, store.url)
    open_location(url, create=True)
    return url


def run_retraining(plan: RetrainPlan, store: Any, progress: RetrainProgress | None = None) -> tuple[int, TrialResult]:
    """Train the plan's spec and store it as the trial's next retraining; returns (its
    number, the result). Nothing is recorded before the end; files written by a retraining
    that does not get recorded are deleted (best effort)."""
    from tasks import run_trial

    spec, written = plan.spec, []

    def keep(s: TrialSpec, run: Any, state: dict[str, Any]) -> dict[str, Any]:
        record = write_weights(str(s.weights), s, run.seed, state)
        written.append(record)
        return record

    def on_epoch(repeat: int, record: EpochRecord) -> None:
        if progress is not None:
            progress.epoch(spec, repeat, record)

    try:
        if progress is not None:
            progress.start(plan.study, 1, 0, 0)
            progress.trial_started(
                spec, plan.trial.params, f"retraining: {plan.settings['epochs']} epochs, {len(spec.seeds)} seed(s)"
            )
        started = datetime.now(UTC)
        try:
            result = run_trial(spec, on_epoch=on_epoch, keep=keep)
            number = store.add_retraining(plan.study.name, plan.trial.number, plan.settings, result, started_at=started)
        except BaseException:
            _delete(written)
            raise
        if progress is not None:
            progress.trial_finished(spec, plan.trial.params, result, 1)
    finally:
        if progress is not None:
            progress.close()
    return number, result


def _delete(records: list[dict[str, Any]]) -> None:
    for r in records:
        try:
            open_location(r["store"]).remove(r["store_key"])
        except Exception:  # noqa: BLE001 - best effort: an unrecorded file is harmless
            pass
