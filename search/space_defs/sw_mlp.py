"""Default space of the SW-MLP (Hayase & Karakida): width and mask density, the paper's
axes, and the number of sparse layers. The density is drawn first (a float: never cut by
the budget), then L, then the width, cut to what fits the non-zero-parameter budget."""
from __future__ import annotations

from core.io import IOSpec
from search.spaces import PAPER_LRS, Dim, Space, register_space


@register_space("sw-mlp")
def sw_mlp_space(io: IOSpec) -> Space:
    """p in [0.01, 1] (log), L in [1, 8], width in [16, 2048] (log), lr."""
    return Space("sw-mlp", (
        Dim("p", "float", 0.01, 1.0, log=True, grid=(0.01, 0.05, 0.2, 1.0)),
        Dim("L", "int", 1, 8, log=True, grid=(1, 2, 4)),
        Dim("width", "int", 16, 2048, log=True, grid=(64, 256, 1024)),
        Dim("lr", "choice", choices=PAPER_LRS),
    ))
