"""The executor interface: where trials run.

The study driver submits `TrialSpec`s up to `capacity` at a time and collects
`TrialResult`s as they finish. The local executor runs one trial at a time in this
process; a Ray executor (a later issue) runs many on GPU workers behind the same calls.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable

from search.specs import EpochRecord, TrialResult, TrialSpec

EpochCallback = Callable[[TrialSpec, int, EpochRecord], None]


class Executor(ABC):
    capacity: int = 1  # trials that may be in flight at once

    @abstractmethod
    def submit(self, spec: TrialSpec) -> None:
        """Start (or queue) a trial."""

    @abstractmethod
    def wait(self) -> list[tuple[TrialSpec, TrialResult]]:
        """Block until at least one submitted trial finished; return the finished ones."""

    @property
    @abstractmethod
    def in_flight(self) -> int:
        """Submitted trials whose results were not yet returned by `wait`."""

    def close(self) -> None:
        """Release workers."""
