"""MLP-Mixer (Tolstikhin et al., "MLP-Mixer: An all-MLP architecture for vision", 2021),
with the token count S free as in Hayase & Karakida's sparse-MLP reading of it.

Per-patch linear embedding, L blocks of token- and channel-mixing MLPs (expansion gamma,
GELU) with pre-LayerNorm and residuals, global average pooling, linear head. Network,
initialisation and counts in models/mixer_net.py. Trainable parameters (S_in = P for the
first block, S after; h_n = round(gamma * n)):
    (c p^2 + 1) C + sum_blocks [S_in h_S + h_S + h_S S + S + 2 C h_C + h_C + C + 4C]
    + 2C + C K + K.
"""

from __future__ import annotations

from typing import Any

from models.families import register_family
from models.mixer_net import MixerFamily

PRESETS: dict[str, dict[str, Any]] = {
    "digits-small": {"S": 16, "C": 16, "gamma": 2, "L": 2, "patch": 2},
    "mnist-small": {"S": 49, "C": 64, "gamma": 4, "L": 4, "patch": 4},
}


@register_family
class Mixer(MixerFamily):
    name = "mixer"
    description = "MLP-Mixer: token/channel-mixing MLPs (expansion gamma), LayerNorm, residuals; S tokens, C channels"
