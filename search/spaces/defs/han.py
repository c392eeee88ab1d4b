"""Default space of HanNet (Yu & Zhang): width and depth, the paper's axes (its
checkerboard net is width 30, depth 20; its regression nets width 100, depth 20)."""

from __future__ import annotations

from core.io import IOSpec
from search.spaces import PAPER_LRS, Dim, Space, register_space


@register_space("han")
def han_space(io: IOSpec) -> Space:
    """width in [4, 1024] (log), depth in [1, 100] Han layers (log), lr; with the dense
    input layer (a space file may set `input_layer = [false]` with `width = [d_x]`), |.|
    (a space file may set `activation` to relu, maxmin or groupsort: Table 3 (b)-(d)) and
    every hidden layer after the input a Han layer (`dense_layers = ["authors"]`: the
    authors' checkerboard net, models/han.py)."""
    return Space(
        "han",
        (
            Dim("input_layer", "choice", choices=(True,)),
            Dim("activation", "choice", choices=("abs",)),
            Dim("dense_layers", "choice", choices=("none",)),
            Dim("width", "int", 4, 1024, log=True, grid=(16, 32, 64, 128, 256)),
            Dim("depth", "int", 1, 100, log=True, grid=(1, 5, 20, 50, 100)),
            Dim("lr", "choice", choices=PAPER_LRS),
        ),
    )
