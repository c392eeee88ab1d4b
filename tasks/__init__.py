"""Tasks: data, io shapes, metrics and default training settings; `run_trial` trains.

    get_task(name, options) -> Task          (TASKS: the registry of Task classes)
    load_data(task, data_dir, device)         the task's data on a device, cached per process
    run_trial(spec, on_epoch=...) -> TrialResult
"""
from tasks.base import IOSpec, Task, TrainDefaults
from tasks.registry import TASKS, get_task
from tasks import image_tasks as _image_tasks  # noqa: F401  (registers the image tasks)
from tasks.loading import clear_data_cache, device_label, load_data, resolve_device
from tasks.train import run_trial

__all__ = [
    "IOSpec",
    "TASKS",
    "Task",
    "TrainDefaults",
    "clear_data_cache",
    "device_label",
    "get_task",
    "load_data",
    "resolve_device",
    "run_trial",
]
