"""The product's trainable: one trial trained in a Ray Tune worker.

`train_trial(config, threads=1, defaults=None)` is a Tune function trainable with two
config forms:

- **a study's trial** (`search run --executor tune`, or `budgeted_searcher` in a user's
  script, search/tune/api.py): `config["search_spec"]` is the trial's `TrialSpec` as
  JSON (the study's searcher puts it there, with the trial's number, family and
  configuration keys beside it for Tune's tables and TensorBoard's hyper-parameters);
- **a plain config**, for Tune's own searchers (`OptunaSearch`, `tune.choice` random
  search) and schedulers (ASHA): no search spec, but `family` (a registered family, e.g.
  `hourglass`), the family's config keys (`d_z`, `d_h`, `L`, `lr`, ...) and `task`, with
  optional training settings (`epochs`, `batch_size`, `max_train_samples`, `device`,
  `optimizer`, `tokens`, `ema`, `ema_warmup`), `seed` (default 0), `repeats` (default 1),
  `data_dir`, `task_options` and `weights` (an artifact store to write the weights to).
  `defaults` (given by `product_trainable`, search/tune/api.py) fills the keys the
  config lacks. `trial_spec_of` checks it and raises `TuneInputError` (a ValueError,
  one line) for an unknown task, family or key, or a configuration its family refuses.

Either way it trains with the product's trainer (`search/executors/base.py:
run_guarded`, as the local and Ray executors do: fault injection, a failed result
instead of an exception, the weights written from this process) and reports with
`tune.report`:

- after every epoch of every seed: `epoch`, `repeat` (the seed's index), `train_loss`,
  `val_<metric>` for each validation metric (`val_psnr` on the denoising tasks: what
  ASHA or OptunaSearch should read, `metric="val_psnr", mode="max"`), `elapsed_s` (since
  the seed's run began) and `device`. Tune's loggers turn these into `progress.csv`,
  `result.json` and TensorBoard events in the trial's folder; a study's scheduler
  (search/tune/scheduler.py) judges them with the product's pruner;
- once at the end: the trial's mean metrics over its complete seeds at top level (the
  test metrics at each seed's best validation epoch, `psnr`, and the validation values
  there, `val_psnr`: what Tune's searchers read from a trial's last result), the same
  under `final` (`final/psnr`, ... in Tune's flattened results), and `search_result` (the
  whole `TrialResult` as JSON, which a study's searcher stores in the database).

**A pack** (`search run --executor tune --pack K`): `config["search_specs"]` holds up to
K of the study's trials (JSON), trained as one pack (`run_guarded_pack`, where their
family fuses; alone otherwise, one after another). Each epoch's report names its trial
(`trial`); after each, the trial asks the study's epoch board (an `EpochBoard` actor,
search/executors/ray.py) whether the study's pruner stopped it, and leaves the pack
`pruned` if so: the pack trains on, as a local pack does. The last report holds every
trial's result under `search_results`.

A plain-config trial that fails or diverges raises `TrialFailed` after training, so
that Tune records the trial as errored (and its `FailureConfig` decides on a retry);
a study's trial reports its failure instead, and the study decides (`--retries`).

This module is imported by Ray workers: it imports nothing of the driver's study loop.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from core.errors import UserError, one_line
from core.trials import TRAINING_KEYS, EpochRecord, TrainSettings, TrialSpec

SPEC_KEY = "search_spec"  # the TrialSpec (JSON) in a trial's Tune config
RESULT_KEY = "search_result"  # the TrialResult (JSON) in a trial's last report
PACK_KEY = "search_specs"  # a pack's TrialSpecs (JSON list) in its Tune config
PACK_RESULTS_KEY = "search_results"  # a pack's TrialResults (JSON list) in its last report
MEMBER_KEY = "trial"  # a pack's epoch report: the study's trial it is of
FINAL_KEY = "final"  # the trial's aggregated metrics in its last report

# The keys of a plain config (no search spec) that are not the family's: what to train
# and how. Training settings are TrainSettings' fields that a trial may set.
TRAIN_KEYS = ("epochs", "batch_size", "device", "max_train_samples", "tokens", "optimizer", "ema", "ema_warmup")
SETTING_KEYS = ("family", "task", "trial", "seed", "repeats", "data_dir", "task_options", "weights", *TRAIN_KEYS)


class TuneInputError(UserError, ValueError):
    """Bad input to the product's Tune API (search/tune/api.py, a plain config of
    `train_trial`): a ValueError for Tune users, a UserError (one line, exit 2) for the
    product's CLI. Raised before anything is written."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class TrialFailed(RuntimeError):
    """A plain-config trial failed or diverged: raised after training so that Tune
    records the trial as errored, with the product trainer's one-line reason."""


def epoch_report(repeat: int, record: EpochRecord, device: str) -> dict[str, Any]:
    """What one epoch reports to Tune (flat scalars, TensorBoard's curves)."""
    return {
        "epoch": record.epoch,
        "repeat": repeat,
        "train_loss": float(record.train_loss),
        **{f"val_{k}": float(v) for k, v in record.metrics.items()},
        "elapsed_s": float(record.elapsed_s),
        "device": device,
    }


def is_epoch_report(report: dict[str, Any]) -> bool:
    """Whether a Tune result is one of `epoch_report`'s (the product's trainable)."""
    return all(k in report for k in ("epoch", "repeat", "train_loss", "elapsed_s"))


def record_of(report: dict[str, Any]) -> tuple[int, EpochRecord]:
    """(repeat, EpochRecord) back from an epoch's report (the inverse of `epoch_report`)."""
    metrics = {k[4:]: float(v) for k, v in report.items() if k.startswith("val_")}
    return int(report["repeat"]), EpochRecord(
        int(report["epoch"]), float(report["train_loss"]), metrics, float(report["elapsed_s"])
    )


def is_final(report: dict[str, Any]) -> bool:
    return RESULT_KEY in report or PACK_RESULTS_KEY in report


def _plain(value: Any) -> Any:
    """A numpy scalar (Tune's and Optuna's samplers may give them) as a Python one."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes, dict, list, tuple)):
        try:
            return value.item()
        except (TypeError, ValueError):
            return value
    return value


def _count(name: str, value: Any, *, positive: bool = True) -> int | None:
    if value is None:
        return None
    value = _plain(value)
    if isinstance(value, bool) or not isinstance(value, int) or (positive and value < 1) or value < 0:
        raise TuneInputError(f"{name} must be {'a positive' if positive else 'a non-negative'} integer, got {value!r}")
    return value


def known_family(name: str):
    """The registered family `name`; TuneInputError naming the known ones."""
    from models import FAMILIES

    if name not in FAMILIES:
        raise TuneInputError(f"unknown family {name!r}; known: {', '.join(sorted(FAMILIES.names()))}")
    return FAMILIES.get(name)


def trial_spec_of(config: dict[str, Any]) -> TrialSpec:
    """The `TrialSpec` of a plain config (family, the family's keys, task, training
    settings; see the module docstring), checked: TuneInputError (one line) for a missing
    or unknown task or family, a key the family does not take, a configuration its family
    refuses (its shape rules) or a bad setting. Loads no data and trains nothing."""
    from tasks import get_task

    config = {k: _plain(v) for k, v in config.items()}
    for key in ("family", "task"):
        if not isinstance(config.get(key), str) or not config[key]:
            raise TuneInputError(
                f"the trainable's config needs {key!r} (a name: 'search spaces' and 'search tasks' "
                f"list them), got {config.get(key)!r}"
            )
    options = config.get("task_options") or {}
    if not isinstance(options, dict):
        raise TuneInputError(f"task_options must be a dict, got {options!r}")
    try:
        task = get_task(config["task"], options)
    except UserError as e:
        raise TuneInputError(one_line(e)) from None
    family = known_family(config["family"])
    io = task.io()
    if not family.fits(io):
        raise TuneInputError(
            f"family {family.name!r} does not fit task {task.name!r} ({io.output} output); "
            "'search spaces' lists the tasks each family fits"
        )
    model = {k: v for k, v in config.items() if k not in SETTING_KEYS}
    try:
        parsed = family.parse(model, io)
        if dataclasses.is_dataclass(parsed):
            known = {f.name for f in dataclasses.fields(parsed)} | set(TRAINING_KEYS)
            unknown = sorted(set(model) - known)
            if unknown:
                raise UserError(
                    f"family {family.name!r} takes no key {', '.join(unknown)}; its keys: "
                    f"{', '.join(sorted(known))}; settings: {', '.join(SETTING_KEYS)}"
                )
        broken = family.shape_violation(model, io)
        if broken:
            raise UserError(broken)
    except UserError as e:
        raise TuneInputError(one_line(e)) from None
    seed, repeats = _count("seed", config.get("seed", 0), positive=False), _count("repeats", config.get("repeats", 1))
    train = {k: config[k] for k in TRAIN_KEYS if config.get(k) is not None}
    for key in ("epochs", "batch_size", "max_train_samples", "tokens"):
        _count(key, train.get(key))
    try:
        settings = TrainSettings(**train)
    except TypeError as e:
        raise TuneInputError(one_line(e)) from None
    seeds = tuple((int(seed or 0) + 7919 * r) % 2**31 for r in range(repeats or 1))
    return TrialSpec(
        "tune",
        int(_count("trial", config.get("trial", 0), positive=False) or 0),
        family.name,
        model,
        task.name,
        seeds,
        settings,
        config.get("data_dir"),
        dict(options),
        weights=config.get("weights"),
    )


def device_of(spec: TrialSpec) -> str:
    """The label of the device `spec` trains on, for its epoch reports (a bad device is the
    trainer's to fail, with its message: its name is the label meanwhile)."""
    from tasks import device_label, resolve_device

    try:
        return device_label(resolve_device(spec.train.device))
    except Exception:
        return str(spec.train.device)


def train_trial(
    config: dict[str, Any], threads: int = 1, defaults: dict[str, Any] | None = None, board: Any = None
) -> None:
    """A Tune function trainable: train the trial of `config` (a study's search spec, or
    a plain config over `defaults`), reporting every epoch and, last, its whole result;
    or a study's pack (`search_specs`), asking `board` after each epoch whether to stop."""
    import torch
    from ray import tune

    from search.executors.base import run_guarded

    torch.set_num_threads(max(1, int(threads)))
    if PACK_KEY in config:
        return train_pack([TrialSpec.from_dict(d) for d in json.loads(config[PACK_KEY])], board)
    plain = SPEC_KEY not in config
    if plain:
        spec = trial_spec_of({**(defaults or {}), **config})
    else:
        spec = TrialSpec.from_dict(json.loads(config[SPEC_KEY]))
    device = device_of(spec)

    def on_epoch(repeat: int, record: EpochRecord) -> None:
        tune.report(epoch_report(repeat, record, device))

    result = run_guarded(spec, on_epoch=on_epoch)
    if plain and result.status in ("failed", "diverged"):
        raise TrialFailed(f"{result.status}: {result.error or 'no reason given'}")
    final = {k: v for k, v in result.metrics.items() if isinstance(v, (int, float)) and math.isfinite(v)}
    tune.report({**final, RESULT_KEY: json.dumps(result.to_dict()), FINAL_KEY: final, "status": result.status})


def train_pack(specs: list[TrialSpec], board: Any = None) -> None:
    """A study's pack in a Tune worker: trained as `run_guarded_pack` trains it, each
    epoch reported with its trial's number; a trial the study stopped (on `board`) leaves
    the pack `pruned` at its next epoch. Last, every trial's result."""
    import ray
    from ray import tune

    from core.trials import TrialStopped
    from search.executors.base import run_guarded_pack

    device = device_of(specs[0])

    def on_epoch(spec: TrialSpec, repeat: int, record: EpochRecord) -> None:
        tune.report({**epoch_report(repeat, record, device), MEMBER_KEY: spec.number})
        reason = None if board is None else ray.get(board.stopped.remote(spec.number))
        if reason is not None:
            raise TrialStopped(reason)

    results = run_guarded_pack(specs, on_epoch=on_epoch)
    tune.report({PACK_RESULTS_KEY: json.dumps([r.to_dict() for r in results])})
