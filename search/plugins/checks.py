"""What is checked of a user's families and tasks before a study starts (issue 60, item 6),
so that bad input is one line and the database stays as it was:

- a stated count that disagrees with the built module (the smallest configuration and
  the largest that fits the budget, both built on the meta device);
- data whose shapes do not fit the model (the smallest model on two validation samples:
  its output against the targets, and the task's loss on them);
- a training function that never reports or reports an undeclared metric (the smallest
  model of each family trains one epoch with it: the check run).

`check_own(prep)` runs them for the families and task of a prepared study when either is
the user's own; each check runs once per process.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.errors import UserError, one_line
from search.plugins.families import OwnFamily
from search.spaces import smallest_config, suggest_config

_done: set[tuple] = set()


class _Largest:
    """A draw that takes every range at its top and the last choice: the largest
    configuration within the budget."""

    def int(self, name: str, low: int, high: int, log: bool, step: int = 1) -> int:
        return high

    def float(self, name: str, low: float, high: float, log: bool) -> float:
        return high

    def choice(self, name: str, choices: tuple[Any, ...]) -> Any:
        return choices[-1]


def check_counts(fam: OwnFamily, space: Any, io: Any, budget: int) -> None:
    """The stated count against the module built on the meta device, on the smallest
    configuration and the largest within the budget."""
    if fam.stated is None:
        return
    count = lambda c: fam.count_params(c, io)  # noqa: E731
    configs = [smallest_config(space, io, count)]
    largest = suggest_config(space, io, budget, count, _Largest())
    if isinstance(largest, dict):
        configs.append(largest)
    for config in configs:
        stated, built = fam.count_params(config, io), fam.meta_count(config, io)
        if built == 0:
            continue  # the builder cannot build it: that trial will fail with the builder's error
        if stated != built:
            raise UserError(
                f"{fam.owner}: count gives {stated:,} parameters for {config} but the module it builds has {built:,}"
            )


def check_fit(fam: Any, task: Any, space: Any, io: Any, data: Any) -> None:
    """The smallest model on two validation samples: output shape against the targets'
    and the task's loss on them (a user's task from arrays, or a user's family)."""
    import torch

    from tasks.own import OwnTask

    if data is None or not hasattr(data, "split"):
        return
    config = smallest_config(space, io, lambda c: fam.count_params(c, io))
    x, y = data.split("val")
    x, y = x[:2].cpu(), y[:2].cpu()
    where = _where(task, fam)
    try:
        model = fam.build(config, io, seed=0)
    except Exception as e:
        raise UserError(
            f"{where}: the smallest model {config} cannot be built: {one_line(e, with_type=True)}"
        ) from None
    try:
        with torch.no_grad():
            pred = model(x)
    except Exception as e:
        raise UserError(
            f"{where}: the smallest model {config} cannot take the data's inputs "
            f"{tuple(x.shape)}: {one_line(e, with_type=True)}"
        ) from None
    if not isinstance(pred, torch.Tensor):
        raise UserError(f"{where}: the model returned {type(pred).__name__}, not a tensor")
    if isinstance(task, OwnTask):
        want = (len(x), io.d_out) if io.output == "logits" else tuple(y.shape)
        if tuple(pred.shape) != want:
            raise UserError(
                f"{where}: the model maps inputs {tuple(x.shape)} to {tuple(pred.shape)}, but the targets need {want}"
            )
    try:
        task.loss(pred, y)
    except Exception as e:
        raise UserError(
            f"{where}: the task's loss fails on the model's output {tuple(pred.shape)} and targets "
            f"{tuple(y.shape)}: {one_line(e, with_type=True)}"
        ) from None


def _where(task: Any, fam: Any) -> str:
    """'task T and family F (ORIGIN)': a message's subject, naming the plugin(s)."""
    from models import FAMILIES
    from tasks import TASKS

    if TASKS.origin(task.name) == FAMILIES.origin(fam.name):
        return f"task {task.name!r} and family {fam.name!r} ({TASKS.origin(task.name)})"
    return f"task {task.name!r}{TASKS.origin_note(task.name)} and family {fam.name!r}{FAMILIES.origin_note(fam.name)}"


def check_run(fam: Any, task: Any, space: Any, io: Any, data: Any, spec: Any) -> None:
    """One epoch of the smallest model with the user's training function (a FunctionTask):
    it must report, only declared metrics, and return the task's metric."""
    import torch

    from core.trials import TrialSpec
    from tasks.loading import resolve_device
    from tasks.own import PluginError, run_function
    from tasks.train import Hyper, RunLog

    config = smallest_config(space, io, lambda c: fam.count_params(c, io))
    tspec = TrialSpec(
        "check", 0, fam.name, config, task.name, (0,), replace(spec.train, epochs=1), spec.data_dir, spec.task_options
    )
    device = data.device if data is not None else resolve_device(spec.train.device)
    where = f"task {task.name!r} ({task.origin})"
    try:
        hyper = Hyper.resolve(tspec, task)
        torch.manual_seed(0)
        model = fam.build(config, io, seed=0).to(device)
        result = run_function(tspec, task, data, 0, 0, None, RunLog(0), model, hyper, device)
    except PluginError:
        raise
    except Exception as e:
        raise UserError(
            f"{where}: the check run (family {fam.name!r}'s smallest model {config}, one epoch) "
            f"raised {one_line(e, with_type=True)}"
        ) from None
    if result.status != "complete":
        raise UserError(f"{where}: the check run ended {result.status}: {result.error}")


def check_own(prep: Any) -> None:
    """The checks above for a prepared study's families and task, where either is a user's."""
    from tasks import load_data
    from tasks.own import FunctionTask, OwnTask

    task, io, spec = prep.task, prep.io, prep.spec
    own_task = isinstance(task, OwnTask)
    data = None
    for name, fam in prep.families.items():
        own_family = isinstance(fam, OwnFamily)
        if not (own_task or own_family):
            continue
        key = (
            name,
            spec.task,
            repr(sorted(spec.task_options.items())),
            spec.budget,
            str(prep.spaces[name]),
            spec.train.device,
        )
        if key in _done:
            continue
        if own_family:
            check_counts(fam, prep.spaces[name], io, spec.budget)
        if data is None and (own_task and task.source is not None or own_family):
            data = load_data(task, spec.data_dir, spec.train.device)
        if isinstance(task, FunctionTask):
            check_run(fam, task, prep.spaces[name], io, data, spec)
        else:
            check_fit(fam, task, prep.spaces[name], io, data)
        _done.add(key)
