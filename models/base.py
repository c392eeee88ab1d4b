"""The Family interface: one model family per file in `models/`.

A family turns a config dict into a module (`build`) and counts that module's
trainable parameters analytically (`count_params`), so a proposal's size is known
before anything is trained. `count_params(config, io)` must equal
`sum(p.numel() for p in build(config, io, seed).parameters() if p.requires_grad)`.

A built module may define `regularization() -> scalar tensor`: a penalty the supervised
trainer adds to the task's loss at every step (tasks/train.py, `model_regularizer`),
e.g. the orthogonal regulariser of models/fcnet.py. Modules without it train on the
task's loss alone.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable
from dataclasses import fields
from typing import TYPE_CHECKING, Any, ClassVar

from torch import nn

from core.errors import UserError
from core.io import IOSpec
from core.shape_rules import Constraint, first_violation

if TYPE_CHECKING:
    from models.fused import FusedModel


def model_keys(config_cls: type, config: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    """The keys of a trial `config` that are fields of the config dataclass `config_cls`
    (training keys such as lr are left out); UserError naming the `required` keys that
    are missing. What every family's `Config.from_dict` starts from."""
    missing = [n for n in required if n not in config]
    if missing:
        raise UserError(f"config is missing {', '.join(missing)}")
    names = {f.name for f in fields(config_cls)}
    return {k: v for k, v in config.items() if k in names}


class Family(ABC):
    """A model family: its name, paper and default task, the config keys its tables show,
    how to build a `torch.nn.Module` for a configuration and its exact parameter count
    before building (`count_params`), which tasks it fits, its shape rules and, where it
    fuses, how several members train as one batched model."""

    name: ClassVar[str]
    description: ClassVar[str]  # one line, shown by `search spaces`
    paper: ClassVar[str]
    default_task: ClassVar[str]
    key_dims: ClassVar[tuple[str, ...]]  # config keys stored as columns and shown in tables
    param_convention: ClassVar[str] = "trainable parameters"
    outputs: ClassVar[tuple[str, ...]] = ("image",)  # IOSpec.output kinds the family fits
    # which trials fuse (`fusion_key`): "any shape" (padded exactly), "identical shapes", or None (none)
    fuses: ClassVar[str | None] = None

    @abstractmethod
    def parse(self, config: dict[str, Any], io: IOSpec) -> Any:
        """Validate a config dict into the family's typed config; UserError if invalid."""

    @abstractmethod
    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> nn.Module:
        """The model. `seed` regenerates anything fixed-random (e.g. a frozen W_in)."""

    @abstractmethod
    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        """Exact analytic count of the budgeted parameters of `build(config, io)`."""

    # Other sizes a study's budget may be counted in (`--budget-of NAME`): name -> the
    # convention's label, shown on the pages' axes; `count_as` computes them.
    budget_measures: ClassVar[dict[str, str]] = {}

    def count_as(self, measure: str, config: dict[str, Any], io: IOSpec) -> int:
        """The config's size in `measure` ("params": `count_params`; others: a name of
        `budget_measures`, computed by the family)."""
        if measure == "params":
            return self.count_params(config, io)
        raise NotImplementedError(f"{self.name} has no {measure!r} measure")

    def param_breakdown(self, config: dict[str, Any], io: IOSpec) -> dict[str, int]:
        """Named parts of the count that `search params` prints beside the budgeted count
        (e.g. total/embedding/non-embedding, attention/FFN, non-zero vs. tensor size)."""
        return {}

    # The family's shape as rules over config keys and io sizes (its search space reuses
    # them as constraints); `shape_subject` names the shape in the messages.
    shape_rules: ClassVar[tuple[Constraint, ...]] = ()
    shape_subject: ClassVar[str | None] = None  # default: the family's name

    def shape_violation(self, config: dict[str, Any], io: IOSpec) -> str | None:
        """Why `config` breaks the family's shape rules on `io`, or None (after `parse`
        has validated it)."""
        self.parse(config, io)
        return first_violation(self.shape_subject or self.name, self.shape_rules, config, io)

    def fits(self, io: IOSpec) -> bool:
        return io.output in self.outputs

    # Fused training (models/fused.py, tasks/fused_train.py): members whose keys are equal
    # train as one batched program, whichever family they belong to, so a key names a
    # structure that either family's `fuse` can hold (each family has keys of its own
    # today: models/residual_mlp.py says why); None (the default) trains the model alone.
    def fusion_key(self, config: dict[str, Any], io: IOSpec) -> Hashable | None:
        """What members must share to fuse with `config`, or None if it cannot fuse."""
        return None

    def fuse(self, members: list[nn.Module], configs: list[dict[str, Any]], io: IOSpec) -> FusedModel:
        """The fused model of `members` (built by `build` from `configs`, equal keys)."""
        raise NotImplementedError(f"{self.name} does not fuse")
