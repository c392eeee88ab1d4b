"""Conventional (narrow-wide-narrow) residual MLP, the baseline of Chen et al. 2025.

The same network as the hourglass (models/residual_mlp.py) with blocks whose hidden layer
is WIDER than the residual stream (d_h > d_z). The paper searches both shapes over the
same ranges (d_z in [785, 4500], d_h in [4, 2500] on MNIST), so the baseline's stream is
never narrower than the input (search/spaces/defs/mlp.py); its input projection is trained
(or a fixed random one with `fixed_w_in`).

Two explicit variants, each its own family so that its front is labelled as such:
- `conventional-noproj`: no input projection (z_0 = x, d_z = d_x), as the authors' code
  allows (`no_w_in`).
- `conventional-narrow`: the stream may be narrower than the input (d_z from 64 to 1024
  on MNIST, scaled): bottleneck models the paper never compares, kept for ablations.
"""

from __future__ import annotations

from typing import Any

from core.io import IOSpec
from core.shape_rules import Constraint
from models.families import register_family
from models.residual_mlp import MLPConfig, ResidualMLPFamily

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


@register_family
class ConventionalNoProjection(ResidualMLPFamily):
    name = "conventional-noproj"
    description = "conventional residual MLP without input projection (z_0 = x, d_z = d_x, d_h > d_z)"
    paper = "Chen et al., Rethinking the shape convention of an MLP (baseline, no W_in)"
    default_task = "mnist-denoise"
    shape_subject = "the conventional MLP without input projection"

    shape_rules = (Constraint("d_z", ">=", "d_x"), Constraint("d_z", "<=", "d_x"), Constraint("d_h", ">", "d_z"))

    def parse(self, config: dict[str, Any], io: IOSpec) -> MLPConfig:
        return super().parse({**config, "no_w_in": True}, io)


@register_family
class ConventionalNarrow(ResidualMLPFamily):
    name = "conventional-narrow"
    description = "conventional residual MLP whose stream may be narrower than the input (not the paper's baseline)"
    paper = "ablation of Chen et al.'s baseline (d_z below d_x allowed)"
    default_task = "mnist-denoise"

    shape_rules = (Constraint("d_h", ">", "d_z"),)
