"""S-Mixer: the MLP-Mixer with single-layer mixing (Hayase & Karakida, "Understanding
MLP-Mixer as a wide and sparse MLP", ICML 2024).

Each token and channel mixing is one linear layer and a GELU, U = X + GELU(W LN(X)^T)^T,
Y = U + GELU(LN(U) V): vec(Y) is a wide MLP layer of width S*C whose weight is the
Kronecker product V^T (x) I + I (x) W, i.e. a sparse, structured S*C x S*C matrix. No
gamma. Network and counts in models/mixer_net.py (mixing="single").
"""

from __future__ import annotations

from typing import Any

from models.families import register_family
from models.mixer_net import MixerFamily

PRESETS: dict[str, dict[str, Any]] = {"digits-small": {"S": 16, "C": 16, "L": 2, "patch": 2}}


@register_family
class SMixer(MixerFamily):
    name = "s-mixer"
    description = "S-Mixer: MLP-Mixer whose token and channel mixing are single layers"
    mixings = ("single",)
