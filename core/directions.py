"""Metric directions: which way is better. The one home of the rule."""

from __future__ import annotations

from typing import Literal

Direction = Literal["maximize", "minimize"]
DIRECTIONS: tuple[str, ...] = ("maximize", "minimize")


# Which way each metric a task reports is better, by name: the one table of directions.
# A task's primary `direction` agrees with it (tests/tasks/test_registry.py checks every task's
# metrics); `search compare --metric NAME` reads the direction of a non-primary metric here.
# A validation copy `val_<name>` has its metric's direction.
METRIC_DIRECTIONS: dict[str, Direction] = {
    "loss": "minimize",
    "mse": "minimize",
    "rmse": "minimize",
    "error": "minimize",
    "perplexity": "minimize",
    "bpb": "minimize",
    "frechet": "minimize",
    "psnr": "maximize",
    "ssim": "maximize",
    "accuracy": "maximize",
    "sample_accuracy": "maximize",
}
VALIDATION_PREFIX = "val_"


def metric_direction(name: str) -> Direction | None:
    """The direction of metric `name` (or of its validation copy `val_<name>`) from
    `METRIC_DIRECTIONS`; None for a metric the table does not know."""
    return METRIC_DIRECTIONS.get(name.removeprefix(VALIDATION_PREFIX))


def declare_direction(name: str, direction: str, owner: str) -> None:
    """A user's task declares metric `name` with `direction` (search/plugins/tasks.py):
    added to METRIC_DIRECTIONS, so `search compare --metric NAME` knows it; UserError
    when the table already holds the name with the other direction."""
    from core.errors import UserError

    known = METRIC_DIRECTIONS.get(name)
    if known is not None and known != direction:
        raise UserError(
            f"{owner}: metric {name!r} is {direction}d here but {known}d everywhere else "
            f"(core/directions.py); give it another name"
        )
    METRIC_DIRECTIONS[name] = check_direction(direction)  # type: ignore[assignment]


def check_direction(direction: str) -> str:
    """`direction` itself, or ValueError naming the two allowed values."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'minimize' or 'maximize', not {direction!r}")
    return direction


def better(value: float, best: float | None, direction: str) -> bool:
    """Whether `value` beats `best` (None: nothing yet) in `direction`; NaN never does."""
    if value != value:
        return False
    if best is None:
        return True
    return value > best if direction == "maximize" else value < best


def arrow(direction: str) -> str:
    """'↑' when higher is better, '↓' when lower is."""
    return "↑" if check_direction(direction) == "maximize" else "↓"
