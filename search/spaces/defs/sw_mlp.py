"""Default space of the SW-MLP (Hayase & Karakida).

On image inputs the paper's SW-MLP (appendix A.2.5, `stem = "patch"`): mask density p,
patch side, depth L and channels per patch C (width = patches * C), on the Mixer
spaces' ranges (search/spaces/defs/mixer.py) so a Mixer and its sparse twin are searched
alike. The readout is stored with every config, as the Mixers' `readout` is (patch-stem
configs stored before issue 23 have no `readout` and were read out by "flatten"). Its
only choice on classification tasks is "pool", the paper's global average pooling over
tokens (Table S.1); on image outputs (denoising, super-resolution: ours, the paper's
SW-MLP only classifies) it is "flatten", a head over all P*C features, since pooling
would leave C numbers to make every output pixel from. A space file may set either. A
space file may set `p = ["s-mixer"]` for the density of the S-Mixer with the same
tokens and channels, (1/S + 1/C)/2: the paper's equal-width comparison. On other inputs
our dense-stem wide MLP (`stem = "dense"`): p, L and the width. The density is drawn
before the depth and the width (or C), each cut to what can still fit the
non-zero-parameter budget (search.spaces.suggest_config cuts float ranges too).
"""

from __future__ import annotations

from core.io import IOSpec
from models.mixer_net import patch_choices
from search.spaces import PAPER_LRS, Dim, Space, register_space


@register_space("sw-mlp")
def sw_mlp_space(io: IOSpec) -> Space:
    """Images: readout ("pool" for logits, "flatten" for image outputs), patch (tiling
    choices), p in [0.01, 1] (log), L in [1, 8], C in [4, 256] (log), lr. Otherwise: p,
    L in [1, 8], width in [16, 2048] (log), lr."""
    p = Dim("p", "float", 0.01, 1.0, log=True, grid=(0.01, 0.05, 0.2, 1.0))
    if io.input_shape is not None and len(io.input_shape) == 3:
        return Space(
            "sw-mlp",
            (
                Dim("stem", "choice", choices=("patch",)),
                Dim("readout", "choice", choices=("pool",) if io.output == "logits" else ("flatten",)),
                Dim("patch", "choice", choices=patch_choices(io)),
                p,
                Dim("L", "int", 1, 8, log=True, grid=(1, 2, 4)),
                Dim("C", "int", 4, 256, log=True, grid=(8, 16, 32, 64)),
                Dim("lr", "choice", choices=PAPER_LRS),
            ),
        )
    return Space(
        "sw-mlp",
        (
            Dim("stem", "choice", choices=("dense",)),
            p,
            Dim("L", "int", 1, 8, log=True, grid=(1, 2, 4)),
            Dim("width", "int", 16, 2048, log=True, grid=(64, 256, 1024)),
            Dim("lr", "choice", choices=PAPER_LRS),
        ),
    )
