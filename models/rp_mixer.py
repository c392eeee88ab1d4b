"""RP-Mixer: the Mixer with random permutations (Hayase & Karakida, "Understanding
MLP-Mixer as a wide and sparse MLP", ICML 2024).

Every mixing sub-layer is wrapped in two fixed random permutations of all the entries
of its S x C input and output, which destroys the Kronecker structure of the equivalent
wide MLP's weights while keeping their sparsity and the parameter/connection counts of
the Mixer of the same shape. The permutations are index tensors (gathers, never an
SC x SC matrix), buffers drawn from the trial's seed. `mixing` is "mlp" (default: the
Mixer with gamma) or "single" (the RP S-Mixer; gamma is then ignored). Network and counts
in models/mixer_net.py.
"""

from __future__ import annotations

from typing import Any

from models.families import register_family
from models.mixer_net import MixerFamily

PRESETS: dict[str, dict[str, Any]] = {"digits-small": {"S": 16, "C": 16, "gamma": 2, "L": 2, "patch": 2}}


@register_family
class RPMixer(MixerFamily):
    name = "rp-mixer"
    description = "RP-Mixer: Mixer with fixed random permutations of all S*C entries around every mixing"
    permute = True
    mixings = ("mlp", "single")
