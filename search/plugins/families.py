"""A user's own model family (issue 60, item 2): a name, a search space, a builder
`(config, io) -> torch.nn.Module` and optionally an exact parameter count.

    import search

    @search.family("my-cnn", space={"width": {"low": 4, "high": 64, "log": True},
                                    "depth": {"low": 1, "high": 4}, "lr": [1e-3, 3e-3]})
    def build(config, io):
        ...                                   # a torch.nn.Module for this configuration

Registration goes through the same two registries as the built-in families
(`models.FAMILIES`, whose built-ins register with `models.register_family`, and
`search.spaces.SPACES`, whose built-in spaces register with `register_space`), so a name
is unique across both and says where it came from (`search spaces`).

The count: `count(config, io) -> int` when given (checked against the built module by
search/plugins/checks.py before a study starts, and again when each trial builds its
model); otherwise the module built on PyTorch's meta device (no memory, no arithmetic)
is counted, before any training: trainable parameters, `requires_grad` only. A
configuration the builder cannot build counts 0, so its trial is proposed and then fails
with the builder's error while the study goes on.

The space: one entry per configuration key, in drawing order, as in a space file
(search/spaces/files.py): `{"low": .., "high": .., "log": bool, "step": int}` for a range
(integers when both bounds are integers), a list for choices, a scalar for a fixed value;
or a `Dim`. `rules` are 'LEFT OP [SCALE *] RIGHT' between keys and the io sizes `d_x`
(inputs) and `d_out` (outputs), e.g. 'd_h < d_z'. The budget-aware draw bisects on the
count, so a count must not decrease when any integer key grows. `space` may also be a
function of the task's `IOSpec` returning such a dict (ranges that scale with the data).
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable, Mapping
from typing import Any

from core.errors import UserError, one_line
from core.io import IOSpec
from core.registry import origin_of
from core.shape_rules import Constraint
from core.trials import TRAINING_KEYS
from models import FAMILIES, Family, trainable_params
from search.spaces import SPACES, Dim, Space, parse_constraint, parse_dims

Builder = Callable[[dict[str, Any], IOSpec], Any]
Count = Callable[[dict[str, Any], IOSpec], int]
SpaceSpec = Mapping[str, Any] | Callable[[IOSpec], Mapping[str, Any]]


class OwnFamily(Family):
    """A user's family: the user's builder, an optional stated count, a space."""

    paper = "the user's own"

    def __init__(
        self,
        name: str,
        build: Builder,
        count: Count | None,
        rules: tuple[Constraint, ...],
        key_dims: tuple[str, ...],
        description: str,
        default_task: str,
        outputs: tuple[str, ...] | None,
        origin: str,
    ) -> None:
        self.name = name  # type: ignore[misc]
        self.description = description  # type: ignore[misc]
        self.default_task = default_task  # type: ignore[misc]
        self.key_dims = key_dims  # type: ignore[misc]
        self.shape_rules = rules  # type: ignore[misc]
        self.param_convention = "trainable parameters"  # type: ignore[misc]
        self.builder, self.stated, self.origin, self._outputs = build, count, origin, outputs
        self.__module__ = getattr(build, "__module__", None) or "__main__"

    @property
    def owner(self) -> str:
        return f"family {self.name!r} ({self.origin})"

    def fits(self, io: IOSpec) -> bool:
        return self._outputs is None or io.output in self._outputs

    def parse(self, config: dict[str, Any], io: IOSpec) -> dict[str, Any]:
        return dict(config)

    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> Any:
        """The user's module for `config`; UserError (the trial fails with it) when the
        builder returns no module or a module whose count disagrees with the stated one."""
        from torch import nn

        model = self.builder(dict(config), io)
        if not isinstance(model, nn.Module):
            raise UserError(f"{self.owner}: the builder returned {type(model).__name__}, not a torch.nn.Module")
        if self.stated is not None:
            stated, built = self._stated(config, io), trainable_params(model)
            if stated != built:
                raise UserError(
                    f"{self.owner}: count gives {stated:,} parameters for {config} but the built module has {built:,}"
                )
        return model

    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        if self.stated is not None:
            return self._stated(config, io)
        return self.meta_count(config, io)

    def meta_count(self, config: dict[str, Any], io: IOSpec) -> int:
        """Trainable parameters of the module built on the meta device (0 when the builder
        fails or returns no module: that configuration's trial fails when it builds)."""
        import torch
        from torch import nn

        try:
            with torch.device("meta"):
                model = self.builder(dict(config), io)
        except Exception:
            return 0
        return trainable_params(model) if isinstance(model, nn.Module) else 0

    def _stated(self, config: dict[str, Any], io: IOSpec) -> int:
        return user_count(lambda: self.stated(dict(config), io), f"{self.owner}: count({config})")  # type: ignore[misc]


def user_count(call: Callable[[], Any], what: str) -> int:
    """A user's count function's answer as an int >= 0; UserError '<what> raised ...' or
    '<what> must return a count >= 0' otherwise. The one rule for a user's stated counts
    (here and search/tune/user_family.py)."""
    try:
        n = call()
    except Exception as e:
        raise UserError(f"{what} raised {one_line(e, with_type=True)}") from None
    n = n.item() if hasattr(n, "item") else n
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise UserError(f"{what} must return a count >= 0, got {n!r}")
    return int(n)


def space_of(name: str, spec: SpaceSpec, rules: tuple[Constraint, ...], io: IOSpec) -> Space:
    """The Space of a user's spec on `io` (a dict of entries, or a function of io giving one)."""
    table = spec(io) if callable(spec) else spec
    if not isinstance(table, Mapping) or not table:
        raise UserError(f"family {name!r}: space must be a non-empty dict of key -> range, choices or value")
    dims: tuple[Dim, ...] = ()
    try:
        for k, d in table.items():
            dims += (d,) if isinstance(d, Dim) else parse_dims(str(k), d, dims)
    except UserError as e:
        raise UserError(f"family {name!r}: {e}") from None
    keys = {d.name for d in dims} | {"d_x", "d_out"}
    for rule in rules:
        bad = [k for k in (rule.left, rule.right) if k not in keys]
        if bad:
            raise UserError(f"family {name!r}: rule '{rule}' names {', '.join(bad)}, not a key of its space")
    return Space(name, dims, rules)


def _positional_arity(fn: Callable[..., Any]) -> int | None:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params)


def family(
    name: str,
    *,
    space: SpaceSpec,
    build: Builder | None = None,
    count: Count | None = None,
    rules: tuple[str, ...] | list[str] = (),
    key_dims: tuple[str, ...] | None = None,
    description: str | None = None,
    default_task: str = "",
    outputs: tuple[str, ...] | None = None,
) -> Any:
    """Register a model family of your own; use it as a decorator on the builder or call it
    with `build=`. Returns the builder (decorator) or the registered family.

    - name: what `--space NAME` / `search.run(space=NAME)` call it; unique among the
      built-in families and every plugin's.
    - space: key -> {"low", "high", "log", "step"} (a range), a list (choices) or a scalar
      (fixed), in drawing order; or a function of the task's IOSpec returning that dict.
      A key `lr` (or `weight_decay`) is searched as the learning rate (weight decay). Keys
      that change the count are sized toward the budget, the others (free keys) drawn over
      their whole range (counted; `"size": true/false` overrides). `"if": "depth >= 3"`
      makes a key conditional, `"per": "depth"` makes one key per layer (NAME_1..NAME_H).
    - build(config, io) -> torch.nn.Module: `io` is the task's IOSpec (d_in, d_out,
      input_shape, output "logits"/"regression"/..., num_classes).
    - count(config, io) -> int, optional: the exact trainable parameter count; without
      it the module built on the meta device is counted. Either way the budget is checked
      before anything trains.
    - rules: 'LEFT OP [SCALE *] RIGHT' between keys and d_x / d_out, e.g. 'd_h < d_z'.
    - key_dims: the keys the tables show (default: the space's range keys).
    - default_task: the task `--task` defaults to (default: none, so --task is needed).
    - outputs: the IOSpec output kinds the family fits (default: any).
    """
    constraints = tuple(parse_constraint(r) for r in rules)
    if not isinstance(name, str) or not name.strip() or "," in name:
        raise UserError(f"a family's name must be a non-empty string without commas, got {name!r}")

    def register(builder: Builder) -> OwnFamily:
        if not callable(builder):
            raise UserError(f"family {name!r}: build must be a function (config, io) -> torch.nn.Module")
        if _positional_arity(builder) not in (None, 2):
            raise UserError(f"family {name!r}: build must take (config, io)")
        origin = origin_of(builder)
        probe = space_of(name, space, constraints, IOSpec(1, 1)) if not callable(space) else None
        keys = (
            key_dims
            if key_dims is not None
            else tuple(
                d.name for d in (probe.dims if probe else ()) if d.kind != "choice" and d.name not in TRAINING_KEYS
            )
        )
        fam = OwnFamily(
            name,
            builder,
            count,
            constraints,
            tuple(keys),
            description or f"{name}: the user's own family",
            default_task,
            outputs,
            origin,
        )
        FAMILIES.check_free(name, origin)  # both checked first: neither is registered without the other
        SPACES.check_free(name, origin)
        FAMILIES.add(name, fam, origin)
        SPACES.add(name, lambda io: space_of(name, space, constraints, io), origin)
        return fam

    if build is not None:
        return register(build)

    def decorator(builder: Builder) -> Builder:
        register(builder)
        return builder

    return decorator
