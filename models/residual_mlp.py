"""The residual MLP shared by the hourglass and conventional families.

Chen et al., "Rethinking the shape convention of an MLP":
    z_0 = W_in x
    z_{i+1} = z_i + W2_i ReLU(W1_i BN(z_i))        for i < L
    y = sigmoid(W_out z_L)                          (image outputs)
W1_i: d_h x d_z, W2_i: d_z x d_h. As in the authors' code every linear is bias-free and
BN is BatchNorm1d(affine=False), so the only trainable parameters are the weights:
    d_x*d_z [if W_in is trained] + 2*L*d_z*d_h + d_z*d_out.
A fixed W_in is a random Gaussian projection N(0, 1/d_x) regenerated from the trial's
seed and kept as a buffer (frozen, not a trainable parameter). `no_w_in` drops W_in
(z_0 = x, so d_z = d_x): the paper's conventional MLP without an input projection. Weights use PyTorch's
default nn.Linear initialisation (the paper does not specify another).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models.base import Family, model_keys
from models.residual_mlp_fused import FusedResidualMLP


@dataclass(frozen=True)
class MLPConfig:
    d_z: int  # width of the residual stream
    d_h: int  # hidden width inside each block
    L: int  # number of residual blocks
    fixed_w_in: bool = False  # frozen random input projection instead of a trained one
    no_w_in: bool = False  # no input projection at all: z_0 = x (needs d_z = d_x)

    def __post_init__(self) -> None:
        for name in ("d_z", "d_h", "L"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UserError(f"{name} must be a positive integer, got {v!r}")
        for name in ("fixed_w_in", "no_w_in"):
            if not isinstance(getattr(self, name), bool):
                raise UserError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.fixed_w_in and self.no_w_in:
            raise UserError("fixed_w_in and no_w_in exclude each other (a fixed projection, or none)")

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> MLPConfig:
        """Take the model keys from a trial config (training keys like lr are ignored)."""
        return cls(**model_keys(cls, config, ("d_z", "d_h", "L")))


class ResidualBlock(nn.Module):
    """z + W2 ReLU(W1 BN(z)); BN without affine, linears without bias."""

    def __init__(self, d_z: int, d_h: int) -> None:
        super().__init__()
        self.norm = nn.BatchNorm1d(d_z, affine=False)
        self.up = nn.Linear(d_z, d_h, bias=False)  # W1: d_h x d_z
        self.down = nn.Linear(d_h, d_z, bias=False)  # W2: d_z x d_h

    def forward(self, z: torch.Tensor) -> torch.Tensor:  # (B, d_z) -> (B, d_z)
        return z + self.down(torch.relu(self.up(self.norm(z))))


class ResidualMLP(nn.Module):
    def __init__(self, cfg: MLPConfig, io: IOSpec, seed: int = 0) -> None:
        super().__init__()
        self.sigmoid_out = io.output == "image"
        self.identity_in = cfg.no_w_in
        self.w_in = None
        if cfg.no_w_in:
            pass  # z_0 = x
        elif cfg.fixed_w_in:
            g = torch.Generator().manual_seed(int(seed))
            w = torch.randn(cfg.d_z, io.d_in, generator=g) / io.d_in**0.5
            self.register_buffer("w_in_fixed", w)
        else:
            self.w_in = nn.Linear(io.d_in, cfg.d_z, bias=False)
        self.blocks = nn.ModuleList(ResidualBlock(cfg.d_z, cfg.d_h) for _ in range(cfg.L))
        self.w_out = nn.Linear(cfg.d_z, io.d_out, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, d_x) -> (B, d_out)
        if self.identity_in:
            z = x
        else:
            z = self.w_in(x) if self.w_in is not None else x @ self.w_in_fixed.t()
        for block in self.blocks:
            z = block(z)
        y = self.w_out(z)
        return torch.sigmoid(y) if self.sigmoid_out else y


def count_residual_mlp(cfg: MLPConfig, io: IOSpec) -> int:
    """d_x*d_z [trained W_in] + 2*L*d_z*d_h + d_z*d_out (BN has no affine parameters)."""
    w_in = 0 if cfg.fixed_w_in or cfg.no_w_in else io.d_in * cfg.d_z
    return w_in + 2 * cfg.L * cfg.d_z * cfg.d_h + cfg.d_z * io.d_out


class ResidualMLPFamily(Family):
    """Shared parse/build/count of the residual-MLP families; subclasses set the
    registry attributes and their shape rule (`shape_violation`)."""

    key_dims = ("d_z", "d_h", "L")
    outputs = ("image", "logits", "regression")
    fuses = "any shape"

    def parse(self, config: dict[str, Any], io: IOSpec) -> MLPConfig:
        cfg = MLPConfig.from_dict(config)
        if cfg.no_w_in and cfg.d_z != io.d_in:
            raise UserError(f"no_w_in needs d_z = d_x = {io.d_in} (the stream is the input), got d_z={cfg.d_z}")
        return cfg

    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> nn.Module:
        return ResidualMLP(self.parse(config, io), io, seed)

    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        return count_residual_mlp(self.parse(config, io), io)

    def fusion_key(self, config: dict[str, Any], io: IOSpec) -> tuple[str, bool, bool]:
        """Any widths and depths of one family fuse (padding is exact,
        models/residual_mlp_fused.py); the input projection's kind must match. The fused
        model could hold hourglass and conventional members together, but a pack pads every
        member to the largest d_z, d_h and L of the pack, and the two shapes are wide where
        the other is narrow: a mixed pack of 4 took 3.8x the wall time of one trial at a
        time on the quickstart search, a pack per family less (docs/benchmarks.md §21)."""
        cfg = self.parse(config, io)
        return (self.name, cfg.fixed_w_in, cfg.no_w_in)

    def fuse(self, members: list[nn.Module], configs: list[dict[str, Any]], io: IOSpec) -> nn.Module:
        return FusedResidualMLP(members)
