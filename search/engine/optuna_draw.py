"""The adapter that lets `search.spaces.suggest_config` draw from an Optuna trial."""
from __future__ import annotations

from typing import Any

import optuna


class TrialDraw:
    """Draws through `trial.suggest_*`, prefixing names with the family (`hourglass.d_z`)
    so families with different ranges never share an Optuna parameter."""

    def __init__(self, trial: optuna.Trial, prefix: str) -> None:
        self.trial, self.prefix = trial, prefix

    def int(self, name: str, low: int, high: int, log: bool, step: int = 1) -> int:
        return self.trial.suggest_int(f"{self.prefix}.{name}", low, high, log=log, step=step)

    def float(self, name: str, low: float, high: float, log: bool) -> float:
        return self.trial.suggest_float(f"{self.prefix}.{name}", low, high, log=log)

    def choice(self, name: str, choices: tuple[Any, ...]) -> Any:
        return self.trial.suggest_categorical(f"{self.prefix}.{name}", list(choices))

