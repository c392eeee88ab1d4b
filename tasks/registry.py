"""The task registry: CLI name -> Task class."""
from __future__ import annotations

from typing import Any

from search.registry import Registry
from tasks.base import Task

TASKS: Registry[type[Task]] = Registry("task")


def get_task(name: str, options: dict[str, Any] | None = None) -> Task:
    """An instance of the task registered as `name` (UserError with the known names)."""
    return TASKS.get(name)(**(options or {}))
