"""SW-MLP: a wide MLP with fixed random sparse weights (Hayase & Karakida, "Understanding
MLP-Mixer as a wide and sparse MLP", ICML 2024).

    h_0 = GELU(W_in x + b_in)                         (d_x -> width, dense)
    h_l = GELU((M_l * W_l) h_{l-1} + b_l)             for l = 1..L (width -> width)
    y   = W_out h_L + b_out                           (width -> d_out; sigmoid for images)

M_l is a fixed random 0/1 mask of density p: exactly k = round(p * width^2) of its entries
are 1, at positions drawn uniformly (a Bernoulli(p) mask conditioned on its number of
ones, so the count is known before the model is built). Masks are buffers regenerated
from the trial's seed and the layer index; masked weights are zero from initialisation
and get zero gradients, so under (Adam)W they stay exactly zero.

Budget convention (the paper's): the budget counts the FREE parameters, i.e. non-zero
weights plus biases:
    d_x*width + width + L*(k + width) + width*d_out + d_out,
while the weight tensors hold L*width^2 entries; `search params` shows both.
Choices of ours (the paper's text does not fix them): the input and output layers are
dense (as the Mixer's patch embedding and head sit outside its mixing layers); GELU as in
the Mixer; PyTorch's default init with the hidden weights scaled by 1/sqrt(p) so a unit's
pre-activation variance does not shrink with the density.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models.base import Family
from models.registry import register_family

PRESETS: dict[str, dict[str, Any]] = {
    "digits-small": {"width": 512, "L": 2, "p": 0.05},
}


@dataclass(frozen=True)
class SWMLPConfig:
    width: int
    L: int  # number of sparse hidden layers (width x width)
    p: float  # density of each mask

    def __post_init__(self) -> None:
        for name in ("width", "L"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UserError(f"{name} must be a positive integer, got {v!r}")
        if isinstance(self.p, bool) or not isinstance(self.p, (int, float)) or not 0 < self.p <= 1:
            raise UserError(f"p (mask density) must be a number in (0, 1], got {self.p!r}")

    @property
    def nonzeros(self) -> int:
        """Ones in each mask: round(p * width^2), at least 1."""
        return max(1, int(self.p * self.width * self.width + 0.5))

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> "SWMLPConfig":
        missing = [n for n in ("width", "L", "p") if n not in config]
        if missing:
            raise UserError(f"config is missing {', '.join(missing)}")
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in config.items() if k in names})


def random_mask(n_out: int, n_in: int, nonzeros: int, generator: torch.Generator) -> torch.Tensor:
    """(n_out, n_in) float 0/1 mask with exactly `nonzeros` ones at uniform positions."""
    mask = torch.zeros(n_out * n_in)
    mask[torch.randperm(n_out * n_in, generator=generator)[:nonzeros]] = 1.0
    return mask.view(n_out, n_in)


class MaskedLinear(nn.Module):
    """y = (M * W) x + b with a fixed 0/1 mask M (a buffer, part of the state dict)."""

    def __init__(self, n_in: int, n_out: int, mask: torch.Tensor) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_out, n_in))
        self.bias = nn.Parameter(torch.empty(n_out))
        self.register_buffer("mask", mask)
        density = float(mask.mean())
        bound = 1.0 / math.sqrt(n_in * density)
        with torch.no_grad():
            nn.init.uniform_(self.weight, -bound, bound).mul_(self.mask)
            nn.init.uniform_(self.bias, -1.0 / math.sqrt(n_in), 1.0 / math.sqrt(n_in))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight * self.mask, self.bias)

    def free_params(self) -> int:
        return int(self.mask.count_nonzero()) + self.bias.numel()


class SWMLP(nn.Module):
    def __init__(self, cfg: SWMLPConfig, io: IOSpec, seed: int = 0) -> None:
        super().__init__()
        self.sigmoid_out = io.output == "image"
        self.w_in = nn.Linear(io.d_in, cfg.width)
        layers = []
        for i in range(cfg.L):
            g = torch.Generator().manual_seed(int(seed) * 1_000_003 + i)
            layers.append(MaskedLinear(cfg.width, cfg.width, random_mask(cfg.width, cfg.width, cfg.nonzeros, g)))
        self.layers = nn.ModuleList(layers)
        self.w_out = nn.Linear(cfg.width, io.d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, d_x) -> (B, d_out)
        h = F.gelu(self.w_in(x))
        for layer in self.layers:
            h = F.gelu(layer(h))
        y = self.w_out(h)
        return torch.sigmoid(y) if self.sigmoid_out else y

    def budgeted_params(self) -> int:
        """Free parameters, read off the module: dense layers' numel + masks' ones + biases."""
        dense = sum(p.numel() for m in (self.w_in, self.w_out) for p in m.parameters())
        return dense + sum(layer.free_params() for layer in self.layers)


def count_sw_mlp(cfg: SWMLPConfig, io: IOSpec) -> int:
    w = cfg.width
    return io.d_in * w + w + cfg.L * (cfg.nonzeros + w) + w * io.d_out + io.d_out


@register_family
class SparseWideMLP(Family):
    name = "sw-mlp"
    description = "wide MLP with fixed random sparse (density p) hidden weights; budget = non-zero parameters"
    paper = "Hayase & Karakida, Understanding MLP-Mixer as a wide and sparse MLP"
    default_task = "digits-classify"
    key_dims = ("width", "L")
    param_convention = "non-zero parameters"
    outputs = ("image", "logits", "regression")

    def parse(self, config: dict[str, Any], io: IOSpec) -> SWMLPConfig:
        return SWMLPConfig.from_dict(config)

    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> nn.Module:
        return SWMLP(self.parse(config, io), io, seed)

    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        return count_sw_mlp(self.parse(config, io), io)

    def param_breakdown(self, config: dict[str, Any], io: IOSpec) -> dict[str, int]:
        c = self.parse(config, io)
        free = count_sw_mlp(c, io)
        tensor = free + c.L * (c.width * c.width - c.nonzeros)
        return {
            "tensor size (all weight entries + biases)": tensor,
            "masked (always zero)": tensor - free,
            "non-zero connections per sparse layer": c.nonzeros,
            "non-zero connections (weights only)": free - (c.width * (c.L + 1) + io.d_out),
        }
