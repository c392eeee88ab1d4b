"""Default spaces of the U-shaped diffusion families (lmlp, uvit, mixer-block).

One space for all three, so their fronts are drawn over the same shapes and differ only
in the block (models/ubackbone.py). Keys, in sampling order (budget-aware: each integer
is cut to the largest value that still fits):
  patch      sides that tile the image into 16..256 patches (28x28: 2, 4, 7; 32x32: 2, 4, 8)
  mlp_ratio  MLP hidden = int(D * mlp_ratio): 2 or 4 (U-ViT's 4)
  depth      blocks, odd (1..13, step 2): depth // 2 in, 1 middle, depth // 2 out
             (U-ViT: 13, 17)
  D          token width 64..512 in steps of 64, so uvit's heads (head_dim 64, n_heads =
             D // 64) always divide it
No lr: the task's default learning rate is used (a space file may add one).
"""

from __future__ import annotations

from core.errors import UserError
from core.io import IOSpec
from models.mixer_net import patch_choices
from search.spaces import Dim, Space, register_space

MLP_RATIOS = (2, 4)


def diffusion_space(family: str, io: IOSpec) -> Space:
    """The shared space of the U-shaped diffusion families on `io`'s images."""
    if io.input_shape is None or len(io.input_shape) != 3:
        raise UserError(f"{family} needs image inputs (C, H, W); this task's input shape is {io.input_shape}")
    return Space(
        family,
        (
            Dim("patch", "choice", choices=patch_choices(io, min_patches=16, max_patches=256)),
            Dim("mlp_ratio", "choice", choices=MLP_RATIOS),
            Dim("depth", "int", 1, 13, step=2, grid=(1, 3, 5, 9, 13)),
            Dim("D", "int", 64, 512, step=64, grid=(64, 128, 256, 512)),
        ),
    )


@register_space("lmlp")
def lmlp_space(io: IOSpec) -> Space:
    """UL-MLP: patch, mlp_ratio 2/4, odd depth 1..13, D 64..512 (step 64)."""
    return diffusion_space("lmlp", io)


@register_space("uvit")
def uvit_space(io: IOSpec) -> Space:
    """U-ViT: as lmlp (every D is divisible by its n_heads at head_dim 64)."""
    return diffusion_space("uvit", io)


@register_space("mixer-block")
def mixer_block_space(io: IOSpec) -> Space:
    """Mixer blocks on the U backbone: as lmlp."""
    return diffusion_space("mixer-block", io)
