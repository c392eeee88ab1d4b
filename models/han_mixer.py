"""Han-Mixer: Mixer blocks followed by Han-Mixer blocks (Yu & Zhang, "A lightweight and
gradient-stable neural layer", image experiments; Han layer in models/han_layer.py).

    X_0 = patches(x) W_e + b_e                   (P x C, per-patch linear; S = P tokens)
    mixer_L Mixer blocks (models/mixer_net.py, expansion gamma)
    L Han-Mixer blocks:  X <- Han_S2(Han_S1(X^T))^T ;  X <- Han_C2(Han_C1(X))
    y = head(mean_tokens(LN(X)))

A Han-Mixer block mixes tokens, then channels, each with two Han layers |H(u) z + b|
(4S + 4C parameters per block), with |.| as the activation, no norm and no residual, as
in the authors' code (image_experiments/hanmixer.py, WORESHanMixerBlock; their
HanMlpBlock is Han, ABS, Han, ABS). Also theirs: a final LayerNorm, mean over tokens and
a linear head, every linear weight and Han vector initialised with orthogonal_. Ours:
the per-patch linear embedding of the Mixer instead of their convolutional stem, so that
the comparison with the Mixer families isolates the mixing layers; the number of tokens is
the number of patches (Han layers are square). Trainable parameters:
    (c p^2 + 1) C + [Mixer blocks, as models/mixer.py with S = P] + L (4P + 4C) + 2C + C K + K.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models.base import Family, model_keys
from models.families import register_family
from models.han_layer import HanLayer, han_params
from models.mixer_net import LN_EPS, MixerBlock, MixerConfig, PatchEmbed, mixer_counts, patch_grid

PRESETS: dict[str, dict[str, Any]] = {"digits-small": {"C": 32, "patch": 2, "L": 4, "mixer_L": 0}}


@dataclass(frozen=True)
class HanMixerConfig:
    C: int
    L: int  # Han-Mixer blocks
    patch: int
    mixer_L: int = 0  # Mixer blocks before them
    # Expansion of those Mixer blocks: 1 (square) as the authors' code, whose Mixer blocks in
    # CnnStemHanMixer take channels_mlp_dim = hidden_dim (image_experiments/train.py).
    gamma: float = 1

    def __post_init__(self) -> None:
        for name, low in (("C", 1), ("L", 1), ("patch", 1), ("mixer_L", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise UserError(f"{name} must be an integer >= {low}, got {v!r}")
        # gamma is checked by MixerConfig

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> HanMixerConfig:
        return cls(**model_keys(cls, config, ("C", "L", "patch")))

    def mixer_part(self, P: int) -> MixerConfig:
        """The Mixer blocks' config (S = P tokens)."""
        return MixerConfig(S=P, C=self.C, L=max(self.mixer_L, 1), patch=self.patch, gamma=self.gamma)


class HanMixerBlock(nn.Module):
    """(B, S, C) -> (B, S, C): two Han layers over tokens, then two over channels."""

    def __init__(self, S: int, C: int) -> None:
        super().__init__()
        self.token_mix = nn.Sequential(HanLayer(S), HanLayer(S))
        self.channel_mix = nn.Sequential(HanLayer(C), HanLayer(C))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.token_mix(x.transpose(1, 2)).transpose(1, 2)
        return self.channel_mix(x)


class HanMixerNet(nn.Module):
    def __init__(self, cfg: HanMixerConfig, io: IOSpec) -> None:
        super().__init__()
        _, P, _ = patch_grid(io, cfg.patch)
        self.embed = PatchEmbed(io.input_shape, cfg.patch, cfg.C)  # type: ignore[arg-type]
        self.blocks = nn.Sequential(
            *(MixerBlock(P, P, cfg.C, cfg.gamma, "mlp") for _ in range(cfg.mixer_L)),
            *(HanMixerBlock(P, cfg.C) for _ in range(cfg.L)),
        )
        self.norm = nn.LayerNorm(cfg.C, eps=LN_EPS)
        self.head = nn.Linear(cfg.C, io.d_out)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, d_x) -> (B, classes)
        return self.head(self.norm(self.blocks(self.embed(x))).mean(1))


def han_mixer_counts(cfg: HanMixerConfig, io: IOSpec) -> dict[str, int]:
    _, P, pd = patch_grid(io, cfg.patch)
    m = mixer_counts(cfg.mixer_part(P), io)
    per_mixer_block = (m["token mixing"] + m["channel mixing"] + m["layer norms"] - 2 * cfg.C) // max(cfg.mixer_L, 1)
    parts = {
        "patch embedding": m["patch embedding"],
        "mixer blocks": per_mixer_block * cfg.mixer_L,
        "han-mixer blocks": cfg.L * 2 * (han_params(P) + han_params(cfg.C)),
        "layer norm + head": 2 * cfg.C + cfg.C * io.d_out + io.d_out,
    }
    return {**parts, "total": sum(parts.values())}


@register_family
class HanMixer(Family):
    name = "han-mixer"
    description = (
        "Han-Mixer: optional Mixer blocks, then token/channel mixing by Han layers (|.|, no norm, no residual)"
    )
    paper = "Yu & Zhang, A lightweight and gradient-stable neural layer"
    default_task = "digits-classify"
    key_dims = ("C", "L", "patch")
    outputs = ("logits",)

    def fits(self, io: IOSpec) -> bool:
        return io.output in self.outputs and io.input_shape is not None and len(io.input_shape) == 3

    def parse(self, config: dict[str, Any], io: IOSpec) -> HanMixerConfig:
        cfg = HanMixerConfig.from_dict(config)
        _, P, _ = patch_grid(io, cfg.patch)
        cfg.mixer_part(P)  # checks gamma
        return cfg

    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> nn.Module:
        return HanMixerNet(self.parse(config, io), io)

    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        return han_mixer_counts(self.parse(config, io), io)["total"]

    def param_breakdown(self, config: dict[str, Any], io: IOSpec) -> dict[str, int]:
        parts = han_mixer_counts(self.parse(config, io), io)
        del parts["total"]
        return parts
