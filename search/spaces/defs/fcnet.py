"""Default space of FCNet (Yu & Zhang, Sec. 4, Fig. 6 and Table 3): width and depth, the
paper's axes (its heat maps: widths 20 to 100 by 10, depths 2 to 30; Table 3's framework
100 x 20; Sec. 4.3's sines nets 200 x 20). `depth` counts the hidden layers including the
input layer (models/fcnet.py)."""

from __future__ import annotations

from core.io import IOSpec
from search.spaces import PAPER_LRS, Dim, Space, register_space


@register_space("fcnet")
def fcnet_space(io: IOSpec) -> Space:
    """width in [4, 1024] (log), depth in [1, 100] hidden layers (log), lr; ReLU, no
    orthogonal regulariser (a space file may set `activation = ["abs"]` or
    `orth_reg = [0.1]`, Table 3's OrthFC, or `init = ["orthogonal"]`; maxmin / groupsort
    need widths divisible by 2 / 5, e.g. `width` as an int range with step 10 and no log)."""
    return Space(
        "fcnet",
        (
            Dim("activation", "choice", choices=("relu",)),
            Dim("orth_reg", "choice", choices=(0.0,)),
            Dim("init", "choice", choices=("kaiming",)),
            Dim("width", "int", 4, 1024, log=True, grid=(20, 50, 100, 200)),
            Dim("depth", "int", 1, 100, log=True, grid=(2, 5, 10, 20, 30)),
            Dim("lr", "choice", choices=PAPER_LRS),
        ),
    )
