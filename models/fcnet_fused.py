"""K FCNets of one shape as one batched program (issue 62): the seeds of a trial
(`--repeats R`), or trials that differ only in their learning rate or weight decay.

Member k's network is models/fcnet.py's, each layer one batched product over the member
axis (h has shape (K, B, width)):

    h_1 = act(x W_1,k^T + b_1,k);  h_l = act(h_{l-1} W_l,k^T + b_l,k);  y = h W_out,k^T + b_out,k

and its orthogonal regulariser, member by member (`member_regularization`: (K,)):

    orth_reg * sum_{l=2..depth} ||W_l,k^T W_l,k - I||_F^2

which the fused trainer adds to each member's loss, as the alone trainer adds the
model's `regularization()`. Only identical shapes fuse (the fusion key is the parsed
configuration without the learning rate and weight decay): without a residual a padded
layer is the identity only for some activations, and on a CPU packs of different shapes
do not pay (docs/benchmarks.md §21).
"""

from __future__ import annotations

import torch
from torch import nn

from models.fused import FusedModel, StackedLinear


class FusedFCNet(FusedModel):
    def __init__(self, members: list[nn.Module]) -> None:
        """members: models/fcnet.py's FCNets of one configuration (any seeds)."""
        super().__init__(members)
        first = members[0]
        self.sigmoid_out, self.act, self.orth_reg = first.sigmoid_out, first.act, first.orth_reg
        self.w_in = StackedLinear([m.w_in for m in members])
        self.hidden = nn.ModuleList(StackedLinear([m.hidden[i] for m in members]) for i in range(len(first.hidden)))
        self.w_out = StackedLinear([m.w_out for m in members])

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (K, B, d_x) -> (K, B, d_out)
        h = self.act(self.w_in(x))
        for layer in self.hidden:
            h = self.act(layer(h))
        y = self.w_out(h)
        return torch.sigmoid(y) if self.sigmoid_out else y

    def member_regularization(self) -> torch.Tensor | None:
        """Each member's orthogonal penalty, (K,); None without one (as `regularization`)."""
        if self.orth_reg == 0 or not len(self.hidden):
            return None
        w = torch.stack([layer.weight for layer in self.hidden], dim=1)  # (K, n, d, d): each W^T
        gram = w @ w.transpose(-1, -2)  # W^T W of each member's layer (the orientation of a square W does not matter)
        eye = torch.eye(w.shape[-1], dtype=w.dtype, device=w.device)
        return self.orth_reg * (gram - eye).pow(2).sum(dim=(1, 2, 3))

    def write_members(self) -> None:
        self.w_in.write([m.w_in for m in self.members])
        for i, layer in enumerate(self.hidden):
            layer.write([m.hidden[i] for m in self.members])
        self.w_out.write([m.w_out for m in self.members])
