"""K HanNets of one shape as one batched program (issue 62): the seeds of a trial
(`--repeats R`), or trials that differ only in their learning rate or weight decay.

Member k's network is models/han.py's, with every layer's tensors stacked along a leading
member axis (h has shape (K, B, width)):

    h_0 = act(h W_in,k^T + b_in,k)                               (or h_0 = x)
    Han layer:  û_k = u_k / (|u_k| + eps);  h <- act(h + b_k - 2 (h û_k) û_k^T)
    dense layer (`dense_layers = "authors"`): h <- act(h W_k^T + b_k)
    y = h W_out,k^T + b_out,k                                    ([sigmoid] for images)

the Han layer's two products as one `bmm` and one rank-1 `baddbmm`, as the member's own
`addmm`. Only identical shapes fuse (the fusion key is the parsed configuration without
the learning rate and weight decay): padding a Han layer is exact in its width but not
in depth under every activation, and on a CPU packs of different shapes do not pay
(docs/benchmarks.md §21).
"""

from __future__ import annotations

import torch
from torch import nn

from models.fused import FusedModel, StackedLinear
from models.han_layer import EPS, HanLayer


class _StackedHan(nn.Module):
    """K members' HanLayers of one width: u (K, d), bias (K, 1, d)."""

    def __init__(self, layers: list[HanLayer]) -> None:
        super().__init__()
        self.act = layers[0].act
        self.u = nn.Parameter(torch.stack([m.u.detach() for m in layers]).contiguous())
        self.bias = nn.Parameter(torch.stack([m.bias.detach() for m in layers]).unsqueeze(1).contiguous())

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (K, B, d) -> (K, B, d)
        u_hat = self.u / (self.u.norm(dim=1, keepdim=True) + EPS)  # (K, d)
        dot = torch.bmm(h, u_hat.unsqueeze(2))  # (K, B, 1)
        return self.act(torch.baddbmm(h + self.bias, dot, u_hat.unsqueeze(1), alpha=-2.0))

    @torch.no_grad()
    def write(self, layers: list[HanLayer]) -> None:
        for k, m in enumerate(layers):
            m.u.copy_(self.u[k])
            m.bias.copy_(self.bias[k, 0])


class _StackedDense(nn.Module):
    """K members' dense hidden layers (nn.Sequential(Linear, activation))."""

    def __init__(self, layers: list[nn.Sequential]) -> None:
        super().__init__()
        self.linear, self.act = StackedLinear([m[0] for m in layers]), layers[0][1]

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.act(self.linear(h))

    def write(self, layers: list[nn.Sequential]) -> None:
        self.linear.write([m[0] for m in layers])


class FusedHanNet(FusedModel):
    def __init__(self, members: list[nn.Module]) -> None:
        """members: models/han.py's HanNets of one configuration (any seeds)."""
        super().__init__(members)
        first = members[0]
        self.sigmoid_out = first.sigmoid_out
        self.act_in = first.act_in
        self.w_in = StackedLinear([m.w_in for m in members]) if first.w_in is not None else None
        self.layers = nn.ModuleList(
            (_StackedHan if isinstance(layer, HanLayer) else _StackedDense)([m.layers[i] for m in members])
            for i, layer in enumerate(first.layers)
        )
        self.w_out = StackedLinear([m.w_out for m in members])

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (K, B, d_x) -> (K, B, d_out)
        h = self.act_in(self.w_in(x)) if self.w_in is not None else x
        for layer in self.layers:
            h = layer(h)
        y = self.w_out(h)
        return torch.sigmoid(y) if self.sigmoid_out else y

    def write_members(self) -> None:
        if self.w_in is not None:
            self.w_in.write([m.w_in for m in self.members])
        for i, layer in enumerate(self.layers):
            layer.write([m.layers[i] for m in self.members])
        self.w_out.write([m.w_out for m in self.members])
