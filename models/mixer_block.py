"""MLP-Mixer blocks (Tolstikhin et al., "MLP-Mixer: an all-MLP architecture for vision",
2021) on the U-shaped diffusion backbone: the all-MLP control beside lmlp and uvit.

The block is Tolstikhin's, applied to the backbone's whole token matrix x (B, L, D),
L = 2 + N (time, label and the N patches); the backbone is shared with lmlp and uvit
(models/ubackbone.py):

    x = x + skip                           (out-blocks; skip="concat": U-ViT's skip_linear)
    x = x + TokenMLP(LN(x)^T)^T            Linear(L, h_t) -> GELU -> Linear(h_t, L)
    x = x + ChannelMLP(LN(x))              Linear(D, h) -> GELU -> Linear(h, D), h = int(D mlp_ratio)

h_t = max(1, int(token_mlp_ratio * L)); token_mlp_ratio defaults to mlp_ratio / 2,
following Mixer-B/16's proportions (token MLP D_S = 384 ~ 2S for S = 196 patches, channel
MLP D_C = 3072 = 4C), so the default mlp_ratio 4 gives h_t ~ 2L.

For a like-for-like comparison the backbone's conventions hold here too: U-ViT's init
(Linear trunc-normal std .02, zero bias), LayerNorm eps 1e-5, exact GELU. Tolstikhin's
LeCun-normal init, eps 1e-6 and tanh GELU (models/mixer_net.py) are not used.

Trainable parameters of one block (h = int(D mlp_ratio)):
    2Dh + h + 5D + 2 L h_t + h_t + L,
of which the token MLP (the token-mixing part) is 2 L h_t + h_t + L; the backbone adds
its shared part (models/ubackbone.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

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
    positive_number,
)

PRESETS = UBACKBONE_PRESETS  # the sizes the three diffusion backbones share (models/ubackbone.py)


@dataclass(frozen=True)
class MixerBlockConfig(UBackboneConfig):
    token_mlp_ratio: float | None = None  # None: mlp_ratio / 2 (Mixer-B/16's D_S ~ 2S vs D_C = 4C)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.token_mlp_ratio is not None:
            positive_number("token_mlp_ratio", self.token_mlp_ratio)

    def token_hidden(self, L: int) -> int:
        ratio = self.mlp_ratio / 2 if self.token_mlp_ratio is None else self.token_mlp_ratio
        return max(1, int(ratio * L))


class MixerTokenBlock(UBlock):
    """(B, L, D) -> (B, L, D): token-mixing MLP then channel-mixing MLP, pre-LN residuals."""

    def __init__(self, D: int, L: int, token_hidden: int, hidden: int, skip: SkipMode | None) -> None:
        super().__init__(D, skip)
        self.norm1 = nn.LayerNorm(D)
        self.token_mlp = Mlp(L, token_hidden)
        self.norm2 = nn.LayerNorm(D)
        self.mlp = Mlp(D, hidden)

    def forward(self, x: torch.Tensor, skip: torch.Tensor | None = None) -> torch.Tensor:
        x = self.merge_skip(x, skip)  # (B, L, D)
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)  # mixes along L
        return x + self.mlp(self.norm2(x))


@register_family
class MixerBlockFamily(UBackboneFamily):
    name = "mixer-block"
    description = (
        "MLP-Mixer blocks (token MLP over the L tokens, channel MLP) as a diffusion denoiser "
        "on the U-shaped token backbone"
    )
    paper = "Tolstikhin et al., MLP-Mixer; backbone: Bao et al., U-ViT, as in Hu & Rostami's UL-MLP"
    config_cls = MixerBlockConfig

    def make_block(self, cfg: MixerBlockConfig, L: int) -> BlockFactory:
        return lambda skip: MixerTokenBlock(cfg.D, L, cfg.token_hidden(L), cfg.hidden, skip)

    def block_counts(self, cfg: MixerBlockConfig, L: int) -> tuple[int, int]:
        D = cfg.D
        token = mlp_params(L, cfg.token_hidden(L))
        return 4 * D + token + mlp_params(D, cfg.hidden), token
