"""A study as an Optuna study, so that optuna-dashboard and `optuna.visualization` open it.

    search export-optuna STUDY --to sqlite:///optuna.db

Parameters, one rule for every study: `family` (a categorical, with one choice in a
single-family study) and each config key named `family.key`, as the search's own Optuna
draws name them (search/engine/sampling/optuna_draw.py). So an hourglass study and an
hourglass-and-conventional study export `hourglass.d_z` alike and can be compared side by
side in optuna-dashboard. Optuna wants one distribution per parameter name,
shared by every trial, so each is built from the values the trials took: integers give an
`IntDistribution` and floats a `FloatDistribution` over the observed range (log when the
family's default space draws the key on a log scale and the range is positive), anything
else (booleans, strings, choices) a `CategoricalDistribution` of the observed values.

Objectives: the parameter count (minimised, the study's convention) and the study's
metric (its mean test value, the one the reports plot; the study's direction).
States: complete -> COMPLETE with both values; failed, diverged, interrupted -> FAIL;
rejected -> PRUNED (proposed, never trained); pruned -> PRUNED (stopped early by the
Pareto pruner); running trials are left out (no outcome yet). User attributes: the trial's number in our
database, family, status, parameter
count, every metric's mean and std, runs, seeds, note, error and duration.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import FrozenTrial, TrialState, create_trial

from core.errors import UserError, one_line
from storage.records import StudyRecord, TrialRecord

STATES: dict[str, TrialState] = {
    "complete": TrialState.COMPLETE,
    "failed": TrialState.FAIL,
    "diverged": TrialState.FAIL,
    "interrupted": TrialState.FAIL,
    "rejected": TrialState.PRUNED,
    "pruned": TrialState.PRUNED,
}
LogScale = Callable[[str, str], bool]  # (family, key) -> drawn on a log scale


def param_values(trial: TrialRecord) -> dict[str, Any]:
    """The Optuna parameters of one trial: `family` and its config keys as `family.key`."""
    return {"family": trial.family} | {f"{trial.family}.{key}": value for key, value in trial.config.items()}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def distributions(params: Iterable[dict[str, Any]], log: Callable[[str], bool]) -> dict[str, BaseDistribution]:
    """One distribution per parameter name covering every value it took."""
    seen: dict[str, list[Any]] = {}
    for p in params:
        for name, value in p.items():
            seen.setdefault(name, []).append(value)
    out: dict[str, BaseDistribution] = {}
    for name, values in seen.items():
        if all(_is_int(v) for v in values):
            lo, hi = min(values), max(values)
            out[name] = IntDistribution(lo, hi, log=log(name) and lo > 0)
        elif all(_is_int(v) or isinstance(v, float) for v in values) and all(math.isfinite(v) for v in values):
            lo, hi = float(min(values)), float(max(values))
            out[name] = FloatDistribution(lo, hi, log=log(name) and lo > 0)
        else:
            out[name] = CategoricalDistribution(sorted(set(values), key=repr))
    return out


def user_attrs(trial: TrialRecord) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "search_number": trial.number,
        "family": trial.family,
        "status": trial.status,
        "params": trial.params,
        "seeds": list(trial.seeds),
        "note": trial.note,
        "error": trial.error,
        "duration_s": trial.duration_s,
    }
    for name, (mean, std, n) in trial.metrics.items():
        attrs[name] = mean
        attrs[f"{name}_std"] = std
        attrs["runs"] = n
    return attrs


def frozen_trials(record: StudyRecord, trials: list[TrialRecord], log_scale: LogScale) -> list[FrozenTrial]:
    """The exportable trials of a study, in number order, as Optuna trials."""
    kept = [t for t in trials if t.status in STATES]
    params = [param_values(t) for t in kept]

    def log(name: str) -> bool:
        family, _, key = name.partition(".")
        return bool(key) and log_scale(family, key)

    dists = distributions(params, log)
    out = []
    for t, p in zip(kept, params):
        state = STATES[t.status]
        value = t.metrics.get(record.metric, (None,))[0]
        if state == TrialState.COMPLETE and (value is None or not math.isfinite(value)):
            state = TrialState.FAIL  # complete without a finite metric has no point to plot
        values = [float(t.params), float(value)] if state == TrialState.COMPLETE else None
        out.append(
            create_trial(
                params=p, distributions={k: dists[k] for k in p}, values=values, state=state, user_attrs=user_attrs(t)
            )
        )
    return out


def export_study(
    record: StudyRecord,
    trials: list[TrialRecord],
    url: str,
    name: str | None = None,
    log_scale: LogScale = lambda family, key: False,
) -> optuna.Study:
    """Write the study into the Optuna storage at `url` as a new study named `name`
    (default: the study's own name). UserError when that study exists or the storage
    cannot be opened; nothing is written then."""
    name = name or record.name
    frozen = frozen_trials(record, trials, log_scale)  # built first: bad data fails before any write
    try:
        storage = optuna.storages.get_storage(url)
    except Exception as exc:  # any driver or URL error: one line
        raise UserError(f"cannot open Optuna storage {url!r}: {one_line(exc)}") from None
    if name in {s.study_name for s in optuna.get_all_study_summaries(storage)}:
        raise UserError(f"the Optuna storage already has a study named {name!r}; choose another with --name")
    study = optuna.create_study(storage=storage, study_name=name, directions=["minimize", record.direction])
    with warnings.catch_warnings():  # experimental in Optuna 5, and what the dashboard labels axes with
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study.set_metric_names(["params", record.metric])
    study.set_user_attr("search_task", record.task)
    study.set_user_attr("search_budget", record.budget)
    study.set_user_attr("search_families", list(record.families))
    study.add_trials(frozen)
    return study
