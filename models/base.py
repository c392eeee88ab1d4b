"""The Family interface: one model family per file in `models/`.

A family turns a config dict into a module (`build`) and counts that module's
trainable parameters analytically (`count_params`), so a proposal's size is known
before anything is trained. `count_params(config, io)` must equal
`sum(p.numel() for p in build(config, io, seed).parameters() if p.requires_grad)`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from torch import nn

from core.io import IOSpec


class Family(ABC):
    name: ClassVar[str]
    description: ClassVar[str]  # one line, shown by `search spaces`
    paper: ClassVar[str]
    default_task: ClassVar[str]
    key_dims: ClassVar[tuple[str, ...]]  # config keys stored as columns and shown in tables
    param_convention: ClassVar[str] = "trainable parameters"
    outputs: ClassVar[tuple[str, ...]] = ("image",)  # IOSpec.output kinds the family fits

    @abstractmethod
    def parse(self, config: dict[str, Any], io: IOSpec) -> Any:
        """Validate a config dict into the family's typed config; UserError if invalid."""

    @abstractmethod
    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> nn.Module:
        """The model. `seed` regenerates anything fixed-random (e.g. a frozen W_in)."""

    @abstractmethod
    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        """Exact analytic count of the budgeted parameters of `build(config, io)`."""

    def param_breakdown(self, config: dict[str, Any], io: IOSpec) -> dict[str, int]:
        """Named parts of the count that `search params` prints beside the budgeted count
        (e.g. total/embedding/non-embedding, attention/FFN, non-zero vs. tensor size)."""
        return {}

    def shape_violation(self, config: dict[str, Any], io: IOSpec) -> str | None:
        """Why `config` breaks the family's shape rule on `io`, or None (default: no rule)."""
        return None

    def fits(self, io: IOSpec) -> bool:
        return io.output in self.outputs

