"""The product's trainable: one trial of a study, trained in a Ray Tune worker.

`train_trial(config, threads=1)` is a Tune function trainable. `config["search_spec"]`
is the trial's `TrialSpec` as JSON (the study's searcher puts it there, with the trial's
number, family and configuration keys beside it for Tune's tables and TensorBoard's
hyper-parameters). It trains the configuration with the product's trainer
(`search/executors/base.py: run_guarded`, as the local and Ray executors do: fault
injection, a failed result instead of an exception, the weights written from this
process) and reports with `tune.report`:

- after every epoch of every seed: `epoch`, `repeat` (the seed's index), `train_loss`,
  `val_<metric>` for each validation metric, `elapsed_s` (since the seed's run began) and
  `device`. Tune's loggers turn these into `progress.csv`, `result.json` and TensorBoard
  events in the trial's folder; the study's scheduler (search/tune/scheduler.py) judges
  them with the product's pruner;
- once at the end: `search_result` (the whole `TrialResult` as JSON, which the searcher
  stores in the database) and `final` (the trial's mean metrics over its complete seeds:
  `final/psnr`, `final/val_psnr`, ... in Tune's flattened results).

This module is imported by Ray workers: it imports nothing of the driver's study loop.
"""
from __future__ import annotations

import json
import math
from typing import Any

from core.trials import EpochRecord, TrialSpec

SPEC_KEY = "search_spec"  # the TrialSpec (JSON) in a trial's Tune config
RESULT_KEY = "search_result"  # the TrialResult (JSON) in a trial's last report
FINAL_KEY = "final"  # the trial's aggregated metrics in its last report


def epoch_report(repeat: int, record: EpochRecord, device: str) -> dict[str, Any]:
    """What one epoch reports to Tune (flat scalars, TensorBoard's curves)."""
    return {"epoch": record.epoch, "repeat": repeat, "train_loss": float(record.train_loss),
            **{f"val_{k}": float(v) for k, v in record.metrics.items()},
            "elapsed_s": float(record.elapsed_s), "device": device}


def record_of(report: dict[str, Any]) -> tuple[int, EpochRecord]:
    """(repeat, EpochRecord) back from an epoch's report (the inverse of `epoch_report`)."""
    metrics = {k[4:]: float(v) for k, v in report.items() if k.startswith("val_")}
    return int(report["repeat"]), EpochRecord(int(report["epoch"]), float(report["train_loss"]), metrics,
                                              float(report["elapsed_s"]))


def is_final(report: dict[str, Any]) -> bool:
    return RESULT_KEY in report


def train_trial(config: dict[str, Any], threads: int = 1) -> None:
    """A Tune function trainable: train the trial in `config[SPEC_KEY]`, reporting every
    epoch and, last, its whole result."""
    import torch
    from ray import tune

    from search.executors.base import run_guarded
    from tasks import device_label, resolve_device

    torch.set_num_threads(max(1, int(threads)))
    spec = TrialSpec.from_dict(json.loads(config[SPEC_KEY]))
    try:
        device = device_label(resolve_device(spec.train.device))
    except Exception:  # a bad device fails inside run_guarded, with its message
        device = str(spec.train.device)

    def on_epoch(repeat: int, record: EpochRecord) -> None:
        tune.report(epoch_report(repeat, record, device))

    result = run_guarded(spec, on_epoch=on_epoch)
    final = {k: v for k, v in result.metrics.items() if isinstance(v, (int, float)) and math.isfinite(v)}
    tune.report({RESULT_KEY: json.dumps(result.to_dict()), FINAL_KEY: final, "status": result.status})
