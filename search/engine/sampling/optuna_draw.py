"""The adapters that let `search.spaces.suggest_config` draw from an Optuna trial."""

from __future__ import annotations

import math
from typing import Any

import optuna

POSITION_SUFFIX = "@"  # `hourglass.d_z@`: d_z's position in its range (`PositionDraw`)


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


def at_position(u: float, low: float, high: float, log: bool, step: float | None = None) -> float:
    """The value at position `u` (0 to 1) of [low, high], on a log axis if `log`, rounded
    to `low` + a multiple of `step` (integers; None: a float), inside [low, high]."""
    if not 0.0 <= u <= 1.0 or high < low:
        raise ValueError(f"need 0 <= u <= 1 and low <= high, got u={u}, {low}..{high}")
    if u in (0.0, 1.0) or low == high:
        v = low if u == 0.0 else high
    elif log and low > 0:
        v = math.exp(math.log(low) + u * (math.log(high) - math.log(low)))
    else:
        v = low + u * (high - low)
    if step is None:
        return min(max(v, low), high)
    k = round((v - low) / step)
    return min(max(low + k * step, low), low + ((high - low) // step) * step)


class PositionDraw(TrialDraw):
    """Draws each width and depth as its position in the range it may take (`d_z@`, a float
    from 0 to 1), choices as `TrialDraw` does. Under a target size a dim's range moves with
    the target and the dims drawn before it, so as an Optuna parameter its distribution
    differs from trial to trial, and Optuna's GPSampler models only the parameters whose
    distribution every trial of its study shares: it leaves such dims to its random draw.
    A position's distribution is always [0, 1], so the sampler models the shape too."""

    @property
    def free(self) -> TrialDraw:
        """How a free dimension is drawn (its range never moves): as itself, not a position."""
        return TrialDraw(self.trial, self.prefix)

    def int(self, name: str, low: int, high: int, log: bool, step: int = 1) -> int:
        u = self.trial.suggest_float(f"{self.prefix}.{name}{POSITION_SUFFIX}", 0.0, 1.0)
        return int(at_position(u, low, high, log, step))

    def float(self, name: str, low: float, high: float, log: bool) -> float:
        u = self.trial.suggest_float(f"{self.prefix}.{name}{POSITION_SUFFIX}", 0.0, 1.0)
        return at_position(u, low, high, log)
