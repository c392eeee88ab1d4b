"""A user's own model family in the product's study (issue 29, item 2): known by its
exact parameter count only (`count_params`), so that `budgeted_searcher`
(search/tune/api.py) proposes and budgets it while the user's trainable builds and trains
it; and `prepare_with_own`, search/engine/study.py's `prepare` with the same checks for
such families and a dict's overrides of the product's spaces."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from core.budget import format_count
from core.errors import UserError
from core.io import IOSpec
from models import Family
from search.engine.prepare import Prepared, classify_spaces, prepare
from search.engine.specs import RunSpec
from search.executors import check_executor
from search.plugins.families import user_count
from search.spaces import CONSTRAINTS_KEY, Space, min_params, parse_constraint, parse_dim
from search.tune.trainable import TuneInputError

CountParams = Callable[[dict[str, Any]], int]


class CountedFamily(Family):
    """A user's model family, known to the study by its exact parameter count only: the
    user's trainable builds and trains it, the study proposes and budgets it."""

    paper = "the user's own"
    key_dims: tuple[str, ...] = ()
    param_convention = "parameters (count_params)"

    def __init__(self, name: str, count: CountParams, task: str) -> None:
        self.name = name  # type: ignore[misc]
        self.description = f"{name}: the user's own family (count_params)"  # type: ignore[misc]
        self.default_task = task  # type: ignore[misc]
        self._count = count

    def fits(self, io: IOSpec) -> bool:
        return True

    def parse(self, config: dict[str, Any], io: IOSpec) -> dict[str, Any]:
        return dict(config)

    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> Any:
        raise UserError(f"{self.name!r} is the user's own family: the user's trainable builds it")

    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        return user_count(lambda: self._count(dict(config)), f"count_params({config}) of {self.name!r}")


def prepare_with_own(spec: RunSpec, space: Any, own: dict[str, CountParams]) -> Prepared:
    """`prepare` (search/engine/study.py) for the product's families, the same checks for
    the user's own (a space from its keys, its smallest model against the budget), then
    the dict's overrides of the product's spaces."""
    from tasks import get_task

    product = tuple(n for n in spec.spaces if n not in own)
    tables = {n: dict(t) for n, t in space.items()} if isinstance(space, Mapping) else {}
    if own and spec.budget_of != "params":
        raise TuneInputError("your own family is budgeted in parameters (count_params)")
    if product:
        base = prepare(replace(spec, spaces=product))
        task, io, families, spaces = base.task, base.io, dict(base.families), dict(base.spaces)
    else:
        task = get_task(spec.task, spec.task_options)
        check_executor(spec.executor, spec.executor_options)
        io, families, spaces = task.io(), {}, {}
    for name, count in own.items():
        families[name] = CountedFamily(name, count, spec.task)
    for name in spec.spaces:
        table = tables.get(name, {})
        constraints = table.pop(CONSTRAINTS_KEY, None)
        dims = {k: parse_dim(k, v) for k, v in table.items()}
        if name in own:
            spaces[name] = Space(name, tuple(dims.values()))
        elif dims:
            spaces[name] = spaces[name].with_overrides(dims)
        if constraints is not None:
            if not isinstance(constraints, (list, tuple)):
                raise TuneInputError(f"space {name!r}: {CONSTRAINTS_KEY} must be a list of 'LEFT OP [SCALE *] RIGHT'")
            rules = () if name in own else tuple(families[name].shape_rules)
            spaces[name] = spaces[name].with_constraints(tuple(parse_constraint(c) for c in constraints), rules)
    prep = Prepared(spec, task, io, {n: families[n] for n in spec.spaces}, {n: spaces[n] for n in spec.spaces})
    classify_spaces(prep)
    for name in spec.spaces:
        if name in product and name not in tables:
            continue  # prepare checked it
        smallest = min_params(prep.spaces[name], io, lambda c, n=name: prep.count(n, c))
        if math.isinf(smallest):
            raise TuneInputError(
                f"family {name!r}: its space allows no configuration on {spec.task!r}: check its ranges"
            )
        if smallest > spec.budget:
            raise TuneInputError(
                f"budget {format_count(spec.budget)} is below the smallest {name} model on "
                f"{spec.task} ({smallest:,} {prep.convention})"
            )
    return prep
