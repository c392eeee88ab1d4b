"""Executors by name (`--executor`)."""
from __future__ import annotations

from typing import Callable

from core.registry import Registry
from search.executors.base import EpochCallback, Executor
from search.executors.local import LocalExecutor

EXECUTORS: Registry[Callable[..., Executor]] = Registry("executor")
EXECUTORS.add("local", LocalExecutor)


def _ray(**kw) -> Executor:
    from search.executors.ray import RayExecutor  # Ray is imported only when asked for

    return RayExecutor(**kw)


EXECUTORS.add("ray", _ray)


def make_executor(name: str, on_epoch: EpochCallback | None = None, **options) -> Executor:
    return EXECUTORS.get(name)(on_epoch=on_epoch, **options)


__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "make_executor"]
