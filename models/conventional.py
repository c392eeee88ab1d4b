"""Conventional (narrow-wide-narrow) residual MLP, the baseline of Chen et al. 2025.

The same network as the hourglass (models/residual_mlp.py) with blocks whose hidden layer
is WIDER than the residual stream (d_h > d_z). The paper gives it an input projection;
here it is trained by default or a fixed random projection with `fixed_w_in`.
"""
from __future__ import annotations

from typing import Any

from core.shape_rules import Constraint
from models.registry import register_family
from models.residual_mlp import ResidualMLPFamily

PRESETS: dict[str, dict[str, Any]] = {
    "mnist-small": {"d_z": 512, "d_h": 2048, "L": 4},
    "digits-small": {"d_z": 64, "d_h": 256, "L": 4},
}


@register_family
class Conventional(ResidualMLPFamily):
    name = "conventional"
    description = "narrow-wide-narrow residual MLP (d_h > d_z), the usual MLP shape"
    paper = "Chen et al., Rethinking the shape convention of an MLP (baseline)"
    default_task = "mnist-denoise"

    shape_rules = (Constraint("d_h", ">", "d_z"),)
