"""Executors by name (`--executor`): `local` and `ray` here; `tune` registers itself from
search/tune/executor.py (Ray Tune drives a study from above the engine)."""

from __future__ import annotations

from typing import Any

from core.registry import Registry
from search.executors.base import EpochCallback, Executor
from search.executors.local import LocalExecutor
from search.executors.ray import RayExecutor

EXECUTORS: Registry[type[Executor]] = Registry("executor")
EXECUTORS.add("local", LocalExecutor)
EXECUTORS.add("ray", RayExecutor)  # Ray itself is imported only when one is built


def check_executor(name: str, options: dict[str, Any]) -> None:
    """UserError for an unknown executor or options it cannot take; starts nothing."""
    EXECUTORS.get(name).check_options(options)


def make_executor(name: str, on_epoch: EpochCallback | None = None, **options) -> Executor:
    """The executor `name` (`EXECUTORS`) with its options; `on_epoch` hears each epoch."""
    return EXECUTORS.get(name)(on_epoch=on_epoch, **options)


__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "RayExecutor", "check_executor", "make_executor"]
