"""Many models of one family trained as one batched program (issue 62).

A small trial's step is bound by per-operation overhead, not arithmetic: a digits model of
16.5K parameters takes about 6 ms a step for about a microsecond of maths. A `FusedModel`
holds K such models ("members") with their parameters stacked along a leading member axis,
so one forward, one backward and one optimiser step serve all K.

The interface the fused trainer (tasks/fused_train.py) uses:

    forward(x)         (K, B, *input) -> (K, B, *output): member k sees x[k] only
    stacked()          the trainable stacked tensors, each of shape (K, ...), so that a
                       per-member learning rate broadcasts along dim 0
    write_members()    copy the current stacked state into the K member modules, which
                       are the models `family.build` made (evaluation, the kept state and
                       the test run on them, exactly as for a trial trained alone)
    member_regularization()   optional: each member's `regularization()` term, (K,), or
                       None; the fused trainer adds it to each member's loss

A family that can fuse returns a key from `Family.fusion_key(config, io)` (members with
equal keys fuse) and builds the fused model in `Family.fuse(members, configs, io)`; the
default key is None (the family trains one model at a time).
"""

from __future__ import annotations

import torch
from torch import nn


class FusedModel(nn.Module):
    """Base of a family's fused model: the members are kept beside, not registered, so
    `parameters()` are the stacked tensors only."""

    def __init__(self, members: list[nn.Module]) -> None:
        super().__init__()
        if not members:
            raise ValueError("a fused model needs at least one member")
        self._members = list(members)

    @property
    def members(self) -> list[nn.Module]:
        return self._members

    @property
    def size(self) -> int:
        """K, the number of members."""
        return len(self._members)

    def stacked(self) -> list[torch.Tensor]:
        """The trainable stacked tensors, each (K, ...)."""
        return [p for p in self.parameters() if p.requires_grad]

    def write_members(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class StackedLinear(nn.Module):
    """K members' `nn.Linear(d_in, d_out)` (with bias) as one batched product:
    weight (K, d_in, d_out) (each member's W^T) and bias (K, 1, d_out), so that

        forward(h) = h @ W_k^T + b_k   for h of shape (K, B, d_in), as one `baddbmm`.
    """

    def __init__(self, linears: list[nn.Linear]) -> None:
        super().__init__()
        first = linears[0]
        if any(m.weight.shape != first.weight.shape or m.bias is None for m in linears):
            raise ValueError("stacked linears must have one shape and a bias each")
        self.weight = nn.Parameter(torch.stack([m.weight.detach().t() for m in linears]).contiguous())
        self.bias = nn.Parameter(torch.stack([m.bias.detach() for m in linears]).unsqueeze(1).contiguous())

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (K, B, d_in) -> (K, B, d_out)
        return torch.baddbmm(self.bias, h, self.weight)

    @torch.no_grad()
    def write(self, linears: list[nn.Linear]) -> None:
        """Copy member k's slice back into linears[k]."""
        for k, m in enumerate(linears):
            m.weight.copy_(self.weight[k].t())
            m.bias.copy_(self.bias[k, 0])
