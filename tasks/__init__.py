"""Tasks: data, io shapes, metrics and default training settings; `run_trial` trains.

    get_task(name, options) -> Task          (TASKS: the registry of Task classes)
    load_data(task, data_dir, device)         the task's data on a device, cached per process
    run_trial(spec, on_epoch=...) -> TrialResult   (dispatches to TRAINERS[task.trainer])
    run_trials(specs, on_epoch=...) -> [TrialResult]   (in packs where they fuse: tasks/fused_train.py)

Every module of this package is imported here, so a module that registers tasks or a
trainer needs no central list.
"""

import sys

from core.io import IOSpec
from core.registry import import_submodules
from tasks import by_name as registry  # `tasks.registry`: the module's name until 2026-12-06 (deprecated)
from tasks.base import Task, TrainDefaults
from tasks.by_name import TASKS, TRAINERS, get_task
from tasks.loading import clear_data_cache, device_label, load_data, resolve_device
from tasks.trial import run_trial, run_trials

sys.modules.setdefault("tasks.registry", registry)
import_submodules("tasks")

__all__ = [
    "IOSpec",
    "TASKS",
    "TRAINERS",
    "Task",
    "TrainDefaults",
    "clear_data_cache",
    "device_label",
    "get_task",
    "load_data",
    "resolve_device",
    "run_trial",
    "run_trials",
]
