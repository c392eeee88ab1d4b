"""A user's own tasks (issue 60, item 3), registered in `tasks.TASKS` beside the built-in
ones (the same registry and the same `Registry.add`).

    search.array_task("wine", data={"train": (x, y), "val": (x, y), "test": (x, y)},
                      metrics={"accuracy": "maximize"})        # the product's trainer trains it

    @search.task("my-rl", metrics={"return": "maximize"}, inputs=4, outputs=2)
    def train(model, settings, report):                       # your own training loop
        for epoch in range(1, settings.epochs + 1):
            ...
            report(epoch, {"return": validation_return})
        return {"return": test_return}

Metrics: a dict name -> direction ("maximize"/"minimize"), or name -> (fn, direction)
with fn(pred, y) -> scalar over a whole split, or a list of the built-in names
(accuracy, error, mse, rmse, loss). The first is the task's metric: the one searched,
compared and predicted. The classes themselves are in tasks/own.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from core.directions import DIRECTIONS, declare_direction, metric_direction
from core.errors import UserError
from core.io import IOSpec
from core.registry import origin_of
from tasks import TASKS
from tasks.own import BUILT_IN_METRICS, LOSSES, ArrayTask, FunctionTask, Metric, OwnTask, own_defaults

OUTPUTS = ("logits", "regression", "image")


def metrics_of(name: str, origin: str, spec: Any) -> dict[str, Metric]:
    """The declared metrics, checked: each has a direction and, unless it is a built-in
    name, a function (a FunctionTask reports its own values and needs none)."""
    owner = f"task {name!r} ({origin})"
    if isinstance(spec, (list, tuple)):
        spec = {m: None for m in spec}
    if not isinstance(spec, Mapping) or not spec:
        raise UserError(f"{owner}: metrics must be a non-empty dict name -> direction or (function, direction)")
    out: dict[str, Metric] = {}
    for metric, value in spec.items():
        fn, direction = None, None
        if isinstance(value, Metric):
            fn, direction = value.fn, value.direction
        elif isinstance(value, str):
            direction = value
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            fn, direction = value if callable(value[0]) else (value[1], value[0])
        elif callable(value):
            fn = value
        elif value is None:
            pass
        else:
            raise UserError(f"{owner}: metric {metric!r}: give a direction or (function, direction), got {value!r}")
        if direction is None:
            direction = BUILT_IN_METRICS[metric][0] if metric in BUILT_IN_METRICS else metric_direction(str(metric))
        if direction is None:
            raise UserError(f"{owner}: metric {metric!r} has no direction; give 'maximize' or 'minimize'")
        if direction not in DIRECTIONS:
            raise UserError(
                f"{owner}: metric {metric!r}: direction must be 'maximize' or 'minimize', got {direction!r}"
            )
        if fn is not None and not callable(fn):
            raise UserError(f"{owner}: metric {metric!r}: its function is not callable")
        out[str(metric)] = Metric(direction, fn)
    return out


def _register(cls: type[OwnTask], origin: str) -> type[OwnTask]:
    for metric, m in cls.declared.items():
        declare_direction(metric, m.direction, f"task {cls.name!r} ({origin})")
    TASKS.add(cls.name, cls, origin)
    return cls


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or "," in name:
        raise UserError(f"a task's name must be a non-empty string without commas, got {name!r}")
    return name


def _class(
    base: type[OwnTask],
    name: str,
    origin: str,
    declared: dict[str, Metric],
    description: str | None,
    defaults: Any,
    **attrs: Any,
) -> type[OwnTask]:
    primary = next(iter(declared))
    return type(
        f"Own_{name}",
        (base,),
        {
            "name": name,
            "origin": origin,
            "declared": declared,
            "metric": primary,
            "direction": declared[primary].direction,
            "metrics": tuple(declared),
            "defaults": defaults,
            "description": description or f"{name}: the user's own task ({origin})",
            "__module__": base.__module__,
            **attrs,
        },
    )


def array_task(
    name: str,
    data: Any,
    *,
    metrics: Any,
    loss: str | Callable[..., Any] | None = None,
    num_classes: int | None = None,
    description: str | None = None,
    epochs: int = 10,
    batch_size: int = 64,
    lr: float = 1e-3,
    weight_decay: float = 0.0,
) -> type[OwnTask]:
    """Register a task on your own arrays; the product's trainer trains it.

    - data: {"train": (x, y), "val": (x, y), "test": (x, y)} of NumPy arrays or tensors,
      or a function returning that (called once per process, when the task is first
      used). x: one row per sample, any shape after it (the model gets batches of it,
      float32). y: integer class labels (N,) make a classification task (IOSpec output
      "logits", d_out = the classes); float targets (N,) or (N, ...) a regression.
    - metrics: name -> direction, or name -> (fn(pred, y) -> scalar, direction); the
      built-in names accuracy, error, mse, rmse, loss need no function. The first is the
      task's metric. Validation picks each run's best epoch; test metrics are reported.
    - loss: "cross_entropy", "mse" or fn(pred, y) -> scalar (default: cross-entropy for
      class labels, MSE otherwise).
    - epochs, batch_size, lr, weight_decay: the task's default training settings
      (`search run --epochs/--batch-size/--lr` and a space's `lr` key override them).
    """
    _check_name(name)
    origin = origin_of(data if callable(data) else _caller_module())
    declared = metrics_of(name, origin, metrics)
    for metric, m in declared.items():
        if m.fn is None and metric not in BUILT_IN_METRICS:
            raise UserError(f"task {name!r} ({origin}): metric {metric!r} needs a function fn(pred, y) -> scalar")
    if isinstance(loss, str) and loss not in LOSSES:
        raise UserError(f"task {name!r} ({origin}): loss must be {', '.join(LOSSES)} or a function, got {loss!r}")
    if num_classes is not None and (
        isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2
    ):
        raise UserError(f"task {name!r} ({origin}): num_classes must be an integer >= 2")
    if data is None:
        raise UserError(f"task {name!r} ({origin}): data is missing")
    cls = _class(
        ArrayTask,
        name,
        origin,
        declared,
        description,
        own_defaults(epochs, batch_size, lr, weight_decay),
        source=staticmethod(data) if callable(data) else data,
        num_classes=num_classes,
        loss_fn=staticmethod(loss) if callable(loss) else loss,
    )
    if not callable(data):
        cls().io()  # the splits are checked now, where the task is defined
    return _register(cls, origin)


def task(
    name: str,
    train: Callable[..., Any] | None = None,
    *,
    metrics: Any,
    inputs: Any = None,
    outputs: int | None = None,
    output: str = "regression",
    num_classes: int | None = None,
    data: Any = None,
    description: str | None = None,
    epochs: int = 10,
    batch_size: int = 64,
    lr: float = 1e-3,
    weight_decay: float = 0.0,
) -> Any:
    """Register a task with your own training function; a decorator on it, or a call with
    `train=`.

    train(model, settings, report) -> dict: `model` is the family's module for the
    trial's configuration, on `settings.device`; `settings` holds config, seed, epochs,
    batch_size, lr, weight_decay, device and data (the splits of `data` on the device,
    `settings.data.split("train")` -> (x, y), or None). Call `report(epoch, metrics)`
    after each epoch with validation metrics (the task's metric at least; only declared
    names): the curves, the pruner (it may stop the trial there) and the pages read them.
    Return the trial's test metrics as a dict with the task's metric; the model's state
    when it returns is the trial's kept weights.

    The model's shapes: `inputs` (an int, or a shape tuple of one sample) and `outputs`
    (an int) with `output` "regression" or "logits" (then `num_classes` = outputs); or
    `data` as for `array_task`, from which they are read. Before a study starts, the
    smallest model of each family trains one epoch with the function as a check (a
    function that never reports, or reports an undeclared metric, fails there).
    """
    _check_name(name)
    if inputs is None and data is None:
        raise UserError(f"task {name!r}: give inputs and outputs (the shapes the model maps), or data")
    io = None
    if inputs is not None:
        shape = (inputs,) if isinstance(inputs, int) and not isinstance(inputs, bool) else tuple(inputs or ())
        if not shape or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in shape):
            raise UserError(f"task {name!r}: inputs must be a positive integer or a shape tuple, got {inputs!r}")
        if isinstance(outputs, bool) or not isinstance(outputs, int) or outputs < 1:
            raise UserError(f"task {name!r}: outputs must be a positive integer, got {outputs!r}")
        if output not in OUTPUTS:
            raise UserError(f"task {name!r}: output must be one of {', '.join(OUTPUTS)}, got {output!r}")
        io = IOSpec(
            math.prod(shape),
            outputs,
            output,
            None,
            shape,  # type: ignore[arg-type]
            outputs if output == "logits" else num_classes,
        )

    def register(fn: Callable[..., Any]) -> type[OwnTask]:
        if not callable(fn):
            raise UserError(f"task {name!r}: train must be a function (model, settings, report) -> dict")
        origin = origin_of(fn)
        declared = metrics_of(name, origin, metrics)
        cls = _class(
            FunctionTask,
            name,
            origin,
            declared,
            description,
            own_defaults(epochs, batch_size, lr, weight_decay),
            train_fn=staticmethod(fn),
            io_spec=io,
            source=staticmethod(data) if callable(data) else data,
            num_classes=num_classes,
        )
        return _register(cls, origin)

    if train is not None:
        return register(train)

    def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
        register(fn)
        return fn

    return decorator


class _caller_module:  # noqa: N801 - a stand-in whose __module__ is the caller's, for origin_of
    def __init__(self) -> None:
        import sys

        frame = sys._getframe(2)
        self.__module__ = frame.f_globals.get("__name__", "__main__")
