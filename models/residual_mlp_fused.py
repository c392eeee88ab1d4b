"""K residual MLPs (hourglass, conventional) as one batched program, padded to the
largest member (issue 62).

Padding is exact for this network. With D = max d_z, H = max d_h and L_max = max L, member
k's weights sit in the top-left corner of zero tensors, one tensor per block (a stacked
(K, L_max, ...) tensor would cost O(L) memory traffic per block in the backward):

    W_in^T  (K, d_x, D)            columns d_z..D zero
    W1_i    (K, H, D), i < L_max   rows d_h..H, columns d_z..D zero; zero for i >= L
    W2_i^T  (K, H, D)              likewise
    W_out^T (K, D, d_out)          rows d_z..D zero

(W1 as nn.Linear stores it and W2 transposed: the fastest of the four layouts of the
block's two batched products on one CPU thread, 42 ms against 45-50 ms a step for 8
members of d_z 190, d_h 5, L 40.)

A padded stream coordinate stays 0 (its W_in row and every W2 row are 0), BatchNorm maps a
constant-0 coordinate to 0, ReLU(0) = 0 so a padded hidden unit contributes nothing, and a
padded block adds W2 ReLU(.) = 0: it is the identity. Every padded weight therefore gets a
gradient of exactly 0, and AdamW leaves it at 0 (zero moments, a decay of 0). The forward
pass is per member the network of models/residual_mlp.py:

    z_0 = W_in x;  z_{i+1} = z_i + W2_i ReLU(W1_i BN(z_i));  y = [sigmoid] W_out z_L

with BN the training-mode batch norm over member k's own batch (affine-free, as the
members' `nn.BatchNorm1d`), computed for all members at once by one `F.batch_norm` over
the (B, K * D) matrix, whose channels are the members' coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from models.fused import FusedModel


@dataclass(frozen=True)
class _Dims:
    """A member's sizes, read from its module."""

    d_z: int
    d_h: int
    L: int

    @classmethod
    def of(cls, m: nn.Module) -> _Dims:
        return cls(m.w_out.weight.shape[1], m.blocks[0].up.out_features if len(m.blocks) else 1, len(m.blocks))


class FusedResidualMLP(FusedModel):
    def __init__(self, members: list[nn.Module]) -> None:
        """members: models/residual_mlp.py's ResidualMLPs, of any of the residual families
        (their sizes are read from the modules, so hourglass and conventional members fuse)."""
        super().__init__(members)
        self.configs = [_Dims.of(m) for m in members]
        configs = self.configs
        first = members[0]
        kind = lambda m: (m.sigmoid_out, m.identity_in, m.w_in is None)  # noqa: E731
        if any(kind(m) != kind(first) for m in members):
            raise ValueError("members differ in their input projection or output (see fusion_key)")
        self.sigmoid_out, self.identity_in = first.sigmoid_out, first.identity_in
        self.fixed_in = first.w_in is None and not first.identity_in
        K, d_out = len(members), first.w_out.weight.shape[0]
        self.D = max(c.d_z for c in configs)
        self.H = max(c.d_h for c in configs)
        self.L = max(c.L for c in configs)
        like = first.w_out.weight

        def zeros(*shape: int) -> torch.Tensor:
            return torch.zeros(*shape, dtype=like.dtype, device=like.device)

        self.w_in: nn.Parameter | None = None
        if self.fixed_in:
            self.register_buffer("w_in_fixed", zeros(K, first.w_in_fixed.shape[1], self.D))
        elif not self.identity_in:
            self.w_in = nn.Parameter(zeros(K, first.w_in.weight.shape[1], self.D))
        self.w1 = nn.ParameterList(nn.Parameter(zeros(K, self.H, self.D)) for _ in range(self.L))
        self.w2 = nn.ParameterList(nn.Parameter(zeros(K, self.H, self.D)) for _ in range(self.L))
        self.w_out = nn.Parameter(zeros(K, self.D, d_out))
        # BatchNorm statistics: block i's (K, D) slice is contiguous, one F.batch_norm channel each
        self.register_buffer("running_mean", zeros(self.L, K, self.D))
        self.register_buffer("running_var", torch.ones(self.L, K, self.D, dtype=like.dtype, device=like.device))
        self.register_buffer("batches", torch.zeros(self.L, K, dtype=torch.long, device=like.device))
        norm = first.blocks[0].norm if len(first.blocks) else nn.BatchNorm1d(1)
        self.momentum, self.eps = norm.momentum, norm.eps
        self._copy(to_members=False)

    @torch.no_grad()
    def _copy(self, to_members: bool) -> None:
        """Member k's tensors <-> its corner of the stacked ones."""

        def move(member: torch.Tensor, corner: torch.Tensor) -> None:
            (member if to_members else corner).copy_(corner if to_members else member)

        for k, (m, c) in enumerate(zip(self.members, self.configs)):
            if self.w_in is not None:
                move(m.w_in.weight, self.w_in[k, :, : c.d_z].t())
            elif self.fixed_in:
                move(m.w_in_fixed, self.w_in_fixed[k, :, : c.d_z].t())
            for i, block in enumerate(m.blocks):
                move(block.up.weight, self.w1[i][k, : c.d_h, : c.d_z])
                move(block.down.weight, self.w2[i][k, : c.d_h, : c.d_z].t())
                move(block.norm.running_mean, self.running_mean[i, k, : c.d_z])
                move(block.norm.running_var, self.running_var[i, k, : c.d_z])
                move(block.norm.num_batches_tracked, self.batches[i, k])
            move(m.w_out.weight, self.w_out[k, : c.d_z].t())

    def write_members(self) -> None:
        self._copy(to_members=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (K, B, d_x) -> (K, B, d_out)
        K, B = x.shape[0], x.shape[1]
        if self.identity_in:
            z = x
        else:
            z = torch.bmm(x, self.w_in if self.w_in is not None else self.w_in_fixed)
        w1, w2 = list(self.w1), list(self.w2)  # (plain lists: no module look-ups per block)
        means, variances = self.running_mean.view(self.L, -1), self.running_var.view(self.L, -1)
        if self.training:
            self.batches += 1
        for i in range(self.L):
            flat = z.transpose(0, 1).reshape(B, K * self.D)  # channels: (member, coordinate)
            normed = (
                F.batch_norm(flat, means[i], variances[i], training=self.training, momentum=self.momentum, eps=self.eps)
                .view(B, K, self.D)
                .transpose(0, 1)
            )
            z = torch.baddbmm(z, torch.relu(torch.bmm(normed, w1[i].transpose(1, 2))), w2[i])  # z + h W2^T
        y = torch.bmm(z, self.w_out)
        return torch.sigmoid(y) if self.sigmoid_out else y
