"""U-ViT (Bao et al., "All are worth words: a ViT backbone for diffusion models", CVPR
2023): the attention baseline of the U-shaped diffusion families.

The block follows U-ViT's code (github baofff/U-ViT, libs/uvit.py, classes Block and
Attention), which the L-MLP authors compare against (github zizhao-hu/L-MLP); the
backbone is shared with lmlp and mixer-block (models/ubackbone.py). On x (B, L, D):

    x = skip_linear(cat[x, skip])  (out-blocks; U-ViT's skip, the default here; skip="add":
                                   x = x + skip as the L-MLP code)
    x = x + Attn(LN(x))            qkv Linear(D, 3D, bias=False) (U-ViT's qkv_bias=False),
                                   softmax(q k^T / sqrt(d_head)) v over n_heads heads,
                                   proj Linear(D, D) with bias
    x = x + Mlp(LN(x))             D -> int(D mlp_ratio) -> D, GELU

Heads: n_heads = max(1, D // head_dim), head_dim default 64 (U-ViT's 512 / 8); D must be
divisible by n_heads. Attention by F.scaled_dot_product_attention (U-ViT's "flash" mode).

Trainable parameters of one block (h = int(D mlp_ratio)):
    4D^2 + 2Dh + h + 6D,
of which the attention (the token-mixing part) is 4D^2 + D; the backbone adds its shared
part (models/ubackbone.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
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
    positive_int,
)

PRESETS = UBACKBONE_PRESETS  # the sizes the three diffusion backbones share (models/ubackbone.py)


@dataclass(frozen=True)
class UViTConfig(UBackboneConfig):
    # U-ViT's own long skip (skip_linear on cat[x, skip]) is this family's default; the
    # L-MLP code's additive skip is `skip="add"`. Measured: a depth-13 U-ViT (D 128, patch
    # 4, 800 steps on MNIST, same seed) reaches validation loss 0.058 with "concat" and
    # 0.30 with "add" (docs/benchmarks.md, section 12).
    skip: SkipMode = "concat"
    head_dim: int = 64

    def __post_init__(self) -> None:
        super().__post_init__()
        positive_int("head_dim", self.head_dim)
        if self.D % self.n_heads:
            raise UserError(
                f"D={self.D} is not divisible by its n_heads = max(1, D // head_dim) = {self.n_heads} "
                f"(head_dim {self.head_dim})"
            )

    @property
    def n_heads(self) -> int:
        return max(1, self.D // self.head_dim)


class Attention(nn.Module):
    """Multi-head self-attention over the L tokens: (B, L, D) -> (B, L, D)."""

    def __init__(self, D: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(D, 3 * D, bias=False)
        self.proj = nn.Linear(D, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, L, D = x.shape
        qkv = self.qkv(x).reshape(B, L, 3, self.n_heads, D // self.n_heads).permute(2, 0, 3, 1, 4)
        x = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])  # (B, H, L, d_head)
        return self.proj(x.transpose(1, 2).reshape(B, L, D))


class UViTBlock(UBlock):
    """(B, L, D) -> (B, L, D): U-ViT's pre-LN transformer block."""

    def __init__(self, D: int, n_heads: int, hidden: int, skip: SkipMode | None) -> None:
        super().__init__(D, skip)
        self.norm1 = nn.LayerNorm(D)
        self.attn = Attention(D, n_heads)
        self.norm2 = nn.LayerNorm(D)
        self.mlp = Mlp(D, hidden)

    def forward(self, x: torch.Tensor, skip: torch.Tensor | None = None) -> torch.Tensor:
        x = self.merge_skip(x, skip)
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


@register_family
class UViT(UBackboneFamily):
    name = "uvit"
    description = "U-ViT diffusion denoiser: pre-LN attention blocks (head_dim 64) on a U-shaped token backbone"
    paper = "Bao et al., All are worth words: a ViT backbone for diffusion models (U-ViT)"
    config_cls = UViTConfig

    def make_block(self, cfg: UViTConfig, L: int) -> BlockFactory:
        return lambda skip: UViTBlock(cfg.D, cfg.n_heads, cfg.hidden, skip)

    def block_counts(self, cfg: UViTConfig, L: int) -> tuple[int, int]:
        D = cfg.D
        attn = 3 * D * D + D * D + D  # qkv (no bias) + proj
        return 4 * D + attn + mlp_params(D, cfg.hidden), attn
