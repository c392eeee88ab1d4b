"""Lateralization MLP (Hu & Rostami, "Lateralization MLP: a simple brain-inspired
architecture for diffusion", 2024), in its U-shaped form (UL-MLP) for class-conditional
diffusion.

The block follows the authors' code (github zizhao-hu/L-MLP, libs/f2.py, class LMLP) line
by line; the backbone around it (models/ubackbone.py) is their ULMLP, i.e. U-ViT's, with a
class token in place of their 77 text tokens. Their L is hard-coded (334 = 1 + 77 + 256);
here L = 2 + N follows the task's image and the patch. On tokens x (B, L, D):

    x  = x + skip                                   (out-blocks; skip="add", as LMLP)
    xp = LN_L(x^T)                                  norm2 over the L tokens  (B, D, L)
    xn = LN_D(x)                                    norm1                    (B, L, D)
    l  = Linear(L, L)(xp)^T                         the token ("left") path
    r  = Linear(D, D)(xn)                           the channel ("right") path
    x  = xn + Linear(D, D)(l + r)                   proj
    x  = x + Mlp(LN_D(x))                           Mlp: D -> int(D mlp_ratio) -> D, GELU

Two details of the authors' code that we keep by default and say so:
  * `residual="normed"`: the code overwrites x with norm1(x) before the residual, so the
    first residual adds to LN_D(x), not to the block input. `residual="input"` adds to
    the block input instead (x = x + proj(l + r), a plain pre-LN residual, as
    DESIGN.md writes the block); it has the same parameters.
  * `mlp_norm="shared"`: the MLP reuses norm1 (the code's norm3 is commented out);
    "separate" gives the MLP its own LayerNorm(D) (2D more parameters per block).

Trainable parameters of one block (h = int(D mlp_ratio)):
    2D^2 + 2Dh + h + 5D + L^2 + 3L  (+ 2D with mlp_norm="separate"),
of which the token-mixing part (Linear(L, L) and LN_L) is L^2 + 3L; the backbone adds
its shared part (models/ubackbone.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from core.errors import UserError
from models.families import register_family
from models.ubackbone import (
    UBACKBONE_PRESETS,
    BlockFactory,
    Mlp,
    SkipMode,
    UBackboneConfig,
    UBackboneFamily,
    UBlock,
    mlp_params,
)

PRESETS = UBACKBONE_PRESETS  # the sizes the three diffusion backbones share (models/ubackbone.py)


@dataclass(frozen=True)
class LMLPConfig(UBackboneConfig):
    mlp_norm: Literal["shared", "separate"] = "shared"
    residual: Literal["normed", "input"] = "normed"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mlp_norm not in ("shared", "separate"):
            raise UserError(f"mlp_norm must be 'shared' or 'separate', got {self.mlp_norm!r}")
        if self.residual not in ("normed", "input"):
            raise UserError(f"residual must be 'normed' or 'input', got {self.residual!r}")


class LMLPBlock(UBlock):
    """(B, L, D) -> (B, L, D): the authors' LMLP block (see the module docstring)."""

    def __init__(
        self, D: int, L: int, hidden: int, skip: SkipMode | None, mlp_norm: str = "shared", residual: str = "normed"
    ) -> None:
        super().__init__(D, skip)
        self.norm1 = nn.LayerNorm(D)
        self.norm2 = nn.LayerNorm(L)
        self.norm3 = nn.LayerNorm(D) if mlp_norm == "separate" else None
        self.l = nn.Linear(L, L)
        self.r = nn.Linear(D, D)
        self.proj = nn.Linear(D, D)
        self.mlp = Mlp(D, hidden)
        self.normed_residual = residual == "normed"

    def forward(self, x: torch.Tensor, skip: torch.Tensor | None = None) -> torch.Tensor:
        x = self.merge_skip(x, skip)  # (B, L, D)
        xn = self.norm1(x)
        left = self.l(self.norm2(x.transpose(1, 2))).transpose(1, 2)  # (B, D, L) -> (B, L, D)
        right = self.r(xn)
        x = (xn if self.normed_residual else x) + self.proj(left + right)
        return x + self.mlp((self.norm1 if self.norm3 is None else self.norm3)(x))


@register_family
class LMLP(UBackboneFamily):
    name = "lmlp"
    description = (
        "UL-MLP diffusion denoiser: L-MLP blocks (token Linear(L,L) + channel Linear(D,D), "
        "then MLP) on a U-ViT backbone with long skips"
    )
    paper = (
        "Hu & Rostami, Lateralization MLP: a simple brain-inspired architecture for diffusion "
        "(code: zizhao-hu/L-MLP); Bao et al., U-ViT"
    )
    config_cls = LMLPConfig

    def make_block(self, cfg: LMLPConfig, L: int) -> BlockFactory:
        return lambda skip: LMLPBlock(cfg.D, L, cfg.hidden, skip, cfg.mlp_norm, cfg.residual)

    def block_counts(self, cfg: LMLPConfig, L: int) -> tuple[int, int]:
        D = cfg.D
        token = (L * L + L) + 2 * L  # l and norm2
        norms = 2 * D * (2 if cfg.mlp_norm == "separate" else 1)
        return token + norms + 2 * (D * D + D) + mlp_params(D, cfg.hidden), token
