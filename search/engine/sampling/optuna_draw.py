"""The adapters that let `search.spaces.suggest_config` draw from an Optuna trial."""

from __future__ import annotations

import warnings
from typing import Any

import optuna

from search.spaces.space import at_position  # noqa: F401  (re-exported: the positions' draw)

POSITION_SUFFIX = "@"  # `hourglass.d_z@`: d_z's position in its range (`PositionDraw`)


class TrialDraw:
    """Draws through `trial.suggest_*`, prefixing names with the family (`hourglass.d_z`)
    so families with different ranges never share an Optuna parameter."""

    def __init__(self, trial: optuna.Trial, prefix: str, outside: list[str] | None = None) -> None:
        self.trial, self.prefix = trial, prefix
        # 'name=value (range)' of each enqueued value outside the range its draw had (a
        # corner's size keys where the budget logic narrowed a range: a count that is not
        # monotone, such as a builder that fails for some widths); the value is used all
        # the same, and the proposal's note says so instead of Optuna's warning
        self.outside = outside if outside is not None else []

    def int(self, name: str, low: int, high: int, log: bool, step: int = 1) -> int:
        return self._quiet(name, self.trial.suggest_int, low, high, log=log, step=step)

    def float(self, name: str, low: float, high: float, log: bool) -> float:
        return self._quiet(name, self.trial.suggest_float, low, high, log=log)

    def choice(self, name: str, choices: tuple[Any, ...]) -> Any:
        return self._quiet(name, self.trial.suggest_categorical, list(choices))

    def _quiet(self, name: str, suggest, *args, **kwargs) -> Any:
        """`suggest(FAMILY.name, ...)`, with Optuna's 'Fixed parameter ... is out of range'
        warning kept off the user's terminal and recorded in `outside`; any other warning
        passes on."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = suggest(f"{self.prefix}.{name}", *args, **kwargs)
        for w in caught:
            if issubclass(w.category, UserWarning) and "is out of range for distribution" in str(w.message):
                self.outside.append(f"{name}={value} (range {', '.join(map(str, args[:2]))})")
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return value


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
        return TrialDraw(self.trial, self.prefix, self.outside)

    def int(self, name: str, low: int, high: int, log: bool, step: int = 1) -> int:
        u = self.trial.suggest_float(f"{self.prefix}.{name}{POSITION_SUFFIX}", 0.0, 1.0)
        return int(at_position(u, low, high, log, step))

    def float(self, name: str, low: float, high: float, log: bool) -> float:
        u = self.trial.suggest_float(f"{self.prefix}.{name}{POSITION_SUFFIX}", 0.0, 1.0)
        return at_position(u, low, high, log)
