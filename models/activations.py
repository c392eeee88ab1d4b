"""Activations shared by the FCNet and HanNet families (Yu & Zhang, "A lightweight and
gradient-stable neural layer", Sec. 1.3.1, 2.1 and Table 3), by name in `ACTIVATIONS`.

    abs        |x|, elementwise: HanNet's; its Jacobian diag(sign x) is orthogonal (Prop. 1)
    relu       max(x, 0), elementwise: the paper's FCNet default (authors' README:
               `main.py --model fcnet --activation ReLU`)
    maxmin     GroupSort with groups of 2 (Anil, Lucas & Grosse, "Sorting out Lipschitz
               function approximation", ICML 2019 [8]): each pair (x_2i, x_2i+1) becomes
               (min, max)
    groupsort  GroupSort with groups of 5, Table 3's "GroupSort (5)": each run of 5
               consecutive features is sorted ascending

abs, maxmin and groupsort have Jacobians that are permutation or sign matrices, so they
keep the gradient norm (Table 3: "The latter two can keep the gradient norm unchanged").
Groups are consecutive features (x viewed as (..., d/k, k)), so the width they act on
must be a multiple of the group size k (`check_activation` says so as a UserError).
The authors' code has ABS and ReLU only (checkerboard_experiments/ann.py, utl.py); MaxMin
and GroupSort follow Anil et al. (ascending order within a group; the order is a fixed
permutation, which the next linear layer absorbs).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from core.errors import UserError
from core.registry import Registry


class Abs(nn.Module):
    """The absolute-value activation of HanNet."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.abs()


class GroupSort(nn.Module):
    """Sort each group of `group` consecutive features of the last axis, ascending."""

    def __init__(self, group: int) -> None:
        super().__init__()
        self.group = group

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (..., d) -> (..., d), d % group == 0
        d = x.shape[-1]
        if d % self.group:
            raise ValueError(f"GroupSort({self.group}) needs a width divisible by {self.group}, got {d}")
        grouped = x.reshape(*x.shape[:-1], d // self.group, self.group)
        if self.group == 2:  # MaxMin: min/max of the pairs, cheaper than a sort
            a, b = grouped.unbind(-1)
            return torch.stack((torch.minimum(a, b), torch.maximum(a, b)), -1).reshape(x.shape)
        return grouped.sort(dim=-1).values.reshape(x.shape)

    def extra_repr(self) -> str:
        return f"group={self.group}"


@dataclass(frozen=True)
class Activation:
    """An activation by name: its module factory and how many features it mixes."""

    make: Callable[[], nn.Module]
    group: int = 1  # 1: elementwise; k: groups of k consecutive features (width % k == 0)
    # The init gain that keeps a layer's output variance through this activation, as
    # Kaiming's sqrt(2) does for ReLU (which halves E[x^2]); abs, maxmin and groupsort
    # permute or flip signs, so they keep E[x^2] and their gain is 1.
    gain: float = 1.0


ACTIVATIONS: Registry[Activation] = Registry("activation")
ACTIVATIONS.add("abs", Activation(Abs))
ACTIVATIONS.add("relu", Activation(nn.ReLU, gain=math.sqrt(2.0)))
ACTIVATIONS.add("maxmin", Activation(lambda: GroupSort(2), group=2))
ACTIVATIONS.add("groupsort", Activation(lambda: GroupSort(5), group=5))


def check_activation(name: object, width: int, what: str = "width") -> Activation:
    """The activation called `name` for layers of `width` features; UserError for an
    unknown name (listing the known ones) or a width that is not a multiple of its group."""
    if not isinstance(name, str):
        raise UserError(f"activation must be one of {', '.join(ACTIVATIONS.names())}, got {name!r}")
    act = ACTIVATIONS.get(name)
    if width % act.group:
        raise UserError(
            f"activation {name!r} sorts groups of {act.group} features: "
            f"{what} must be a multiple of {act.group}, got {width}"
        )
    return act


def make_activation(name: str, width: int) -> nn.Module:
    """A fresh module of the activation `name` for layers of `width` features."""
    return check_activation(name, width).make()
