"""Default spaces of the Transformer LMs (Liao et al., "Revisiting the shape convention of
Transformer language models"): the papers' axes, with their findings as the ranges.

Keys, in sampling order (budget-aware: each integer is cut to what still fits):
  lr        learning rate, a choice (AdamW peak of the cosine schedule)
  K         hourglass sub-blocks per layer, 1..10 (Table 1 sweeps K in {5, 6, 8, 10}; the
            conventional FFN: K = 1)
  n_heads   1..16 heads of HEAD_DIM = 64 features: d_model is pinned to 64 * n_heads by
            two constraints, so every d_model is a multiple of 64 that n_heads divides
            with an even head dimension (RoPE), and both are stored config keys
  d_model   64..1024 (= 64 * n_heads)
  L         layers, with d_model / L between 32 and 256, i.e. d_model / 256 <= L <=
            d_model / 32: wide enough for every configuration of the paper's Tables 1-3
            (d_model / L from 42.7, 1024 / 24, to 248, 1488 / 6). The paper's sweet spot
            of 100 to 250 (Sec. 4.2.4, Figure 4, at 113M) is a finding to test, not a rule:
            the earlier 50..250 excluded its own 403M baseline and capped L at 2 at 300K
  d_h       hourglass: 0.1 * d_model <= d_h < d_model (the papers find d_h/d_model ~ 0.4
            best); conventional: 2 * d_model <= d_h <= 4 * d_model (Llama: 8/3)
  tied, qk_norm   fixed to false (untied embeddings and no QK-norm, as in Llama); a space
            file can search them: `tied = [false, true]`.
Ratios are `Constraint(..., scale=r)`: left op r * right. Every count is monotone in each
key, so the budget-aware sampler never proposes an over-budget model.
"""

from __future__ import annotations

from core.io import IOSpec
from core.shape_rules import Constraint
from models import get_family
from search.spaces import Dim, Space, register_space

HEAD_DIM = 64
LM_LRS = (5e-4, 1e-3, 2e-3, 4e-3)
ASPECT = (32, 256)  # d_model / L: contains every configuration of Liao et al.'s Tables 1-3


def _common(K: Dim, d_h: Dim) -> tuple[Dim, ...]:
    return (
        Dim("tied", "choice", choices=(False,)),
        Dim("qk_norm", "choice", choices=(False,)),
        Dim("lr", "choice", choices=LM_LRS),
        K,
        Dim("n_heads", "int", 1, 16, log=True, grid=(1, 2, 4, 8, 16)),
        Dim("d_model", "int", HEAD_DIM, 16 * HEAD_DIM, grid=(64, 128, 256, 512, 1024)),
        Dim("L", "int", 1, 48, log=True, grid=(1, 2, 4, 8, 16)),
        d_h,
    )


_SHAPE = (
    Constraint("d_model", ">=", "n_heads", scale=HEAD_DIM),
    Constraint("d_model", "<=", "n_heads", scale=HEAD_DIM),
    Constraint("L", ">=", "d_model", scale=1 / ASPECT[1]),
    Constraint("L", "<=", "d_model", scale=1 / ASPECT[0]),
)


@register_space("transformer-hourglass")
def transformer_hourglass_space(io: IOSpec) -> Space:
    """K in 1..10 sub-blocks (Table 1's sweep reaches 10) of width 0.1 * d_model <= d_h < d_model."""
    return Space(
        "transformer-hourglass",
        _common(
            Dim("K", "int", 1, 10, grid=(1, 2, 4, 8, 10)),
            Dim("d_h", "int", 7, 1023, log=True, grid=(16, 32, 64, 128, 256, 512)),
        ),
        _SHAPE + get_family("transformer-hourglass").shape_rules + (Constraint("d_h", ">=", "d_model", scale=0.1),),
    )


@register_space("transformer")
def transformer_space(io: IOSpec) -> Space:
    """One SwiGLU per layer (K = 1) of width 2 * d_model <= d_h <= 4 * d_model."""
    return Space(
        "transformer",
        _common(
            Dim("K", "choice", choices=(1,)),
            Dim("d_h", "int", 128, 4096, log=True, grid=(128, 256, 512, 1024, 2048, 4096)),
        ),
        _SHAPE
        + get_family("transformer").shape_rules
        + (Constraint("d_h", ">=", "d_model", scale=2), Constraint("d_h", "<=", "d_model", scale=4)),
    )
