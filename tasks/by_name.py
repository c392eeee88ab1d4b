"""The tasks and trainers by name: TASKS (CLI name -> Task class) and TRAINERS (`Task.trainer`
name -> the function that trains one run); `tasks.registry` before 2026-12-06."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.registry import Registry
from tasks.base import Task

TASKS: Registry[type[Task]] = Registry("task")

# Trainers by name (`Task.trainer`): a trainer trains ONE run (one seed) of a trial.
# Signature: (spec, task, data, seed, repeat_index, on_epoch) -> (RunResult, traceback|None);
# it turns its own exceptions into a failed RunResult and re-raises only _CallbackError
# (see tasks/train.py, which registers "supervised").
TRAINERS: Registry[Callable[..., Any]] = Registry("trainer")


def get_task(name: str, options: dict[str, Any] | None = None) -> Task:
    """An instance of the task registered as `name` (UserError with the known names)."""
    return TASKS.get(name)(**(options or {}))
