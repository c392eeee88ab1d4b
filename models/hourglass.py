"""Hourglass (wide-narrow-wide) residual MLP.

Chen et al., "Rethinking the shape convention of an MLP" (2025): residual blocks whose
hidden layer is NARROWER than the residual stream (d_h < d_z), on a stream WIDER than the
input (d_z > d_x). Network, bias-free linears, affine-free BatchNorm1d and the parameter
count are in models/residual_mlp.py.
"""

from __future__ import annotations

from typing import Any

from core.shape_rules import Constraint
from models.families import register_family
from models.residual_mlp import ResidualMLPFamily

# Plain-data presets (the benchmark's MNIST configuration among them).
PRESETS: dict[str, dict[str, Any]] = {
    "mnist-small": {"d_z": 1150, "d_h": 115, "L": 10},
    "digits-small": {"d_z": 256, "d_h": 32, "L": 4},
}


@register_family
class Hourglass(ResidualMLPFamily):
    name = "hourglass"
    description = "wide-narrow-wide residual MLP (d_z > d_x, d_h < d_z), Chen et al. 2025"
    paper = "Chen et al., Rethinking the shape convention of an MLP"
    default_task = "mnist-denoise"

    shape_rules = (Constraint("d_z", ">", "d_x"), Constraint("d_h", "<", "d_z"))
