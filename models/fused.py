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
