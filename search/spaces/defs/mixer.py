"""Default spaces of the Mixer families (mixer, s-mixer, rp-mixer, han-mixer).

The sparse-MLP paper's axes (Hayase & Karakida): tokens S and channels C on the same
log range, so S = C (the widest Mixer at a fixed parameter or connection count) is
reachable; expansion gamma; depth L. The patch size is a choice among the sides that tile
the input into 4..256 patches. When S differs from the patch count, the first block's
token residual is the paper's SkipLayer (`skip = "linear"`, models/mixer_net.py). Sampling order S before C:
given S, C is cut to the
largest value that still fits the budget (counts grow with each of S, C, gamma, L).
"""

from __future__ import annotations

from core.errors import UserError
from core.io import IOSpec
from models.mixer_net import patch_choices
from search.spaces import PAPER_LRS, Dim, Space, register_space


def _check(io: IOSpec, family: str) -> None:
    if io.input_shape is None or len(io.input_shape) != 3:
        raise UserError(f"{family} needs image inputs (C, H, W); this task's input shape is {io.input_shape}")


def _patch(io: IOSpec) -> Dim:
    return Dim("patch", "choice", choices=patch_choices(io))


def _skip() -> Dim:
    """The first block's token residual when S != P: the paper's SkipLayer."""
    return Dim("skip", "choice", choices=("linear",))


def _readout() -> Dim:
    """The head's input: the papers' mean over tokens. A space file may add "flatten" (all
    S*C features; a diagnostic option, models/mixer_net.py, that the SW-MLP takes too)."""
    return Dim("readout", "choice", choices=("pool",))


def _tokens_channels() -> tuple[Dim, Dim]:
    grid = (8, 16, 32, 64, 128)
    return Dim("S", "int", 4, 256, log=True, grid=grid), Dim("C", "int", 4, 256, log=True, grid=grid)


@register_space("mixer")
def mixer_space(io: IOSpec) -> Space:
    """patch (tiling choices), L in [1, 8], gamma in [1, 4], S and C in [4, 256] (log), lr."""
    _check(io, "mixer")
    S, C = _tokens_channels()
    return Space(
        "mixer",
        (
            _patch(io),
            _skip(),
            _readout(),
            Dim("L", "int", 1, 8, log=True, grid=(1, 2, 4, 8)),
            Dim("gamma", "int", 1, 4, grid=(1, 2, 4)),
            S,
            C,
            Dim("lr", "choice", choices=PAPER_LRS),
        ),
    )


@register_space("s-mixer")
def s_mixer_space(io: IOSpec) -> Space:
    """As the Mixer without gamma (single-layer mixing)."""
    _check(io, "s-mixer")
    S, C = _tokens_channels()
    return Space(
        "s-mixer",
        (
            _patch(io),
            _skip(),
            _readout(),
            Dim("L", "int", 1, 8, log=True, grid=(1, 2, 4, 8)),
            S,
            C,
            Dim("lr", "choice", choices=PAPER_LRS),
        ),
    )


@register_space("rp-mixer")
def rp_mixer_space(io: IOSpec) -> Space:
    """As the Mixer, mixing "mlp" (a space file may choose "single": the RP S-Mixer)."""
    _check(io, "rp-mixer")
    S, C = _tokens_channels()
    return Space(
        "rp-mixer",
        (
            Dim("mixing", "choice", choices=("mlp",)),
            _patch(io),
            _skip(),
            _readout(),
            Dim("L", "int", 1, 8, log=True, grid=(1, 2, 4, 8)),
            Dim("gamma", "int", 1, 4, grid=(1, 2, 4)),
            S,
            C,
            Dim("lr", "choice", choices=PAPER_LRS),
        ),
    )


@register_space("han-mixer")
def han_mixer_space(io: IOSpec) -> Space:
    """patch, mixer_L in [0, 2] Mixer blocks (square, gamma 1, as the authors' code: their
    channels_mlp_dim is the hidden width), L in [1, 16] Han-Mixer blocks, C in [4, 256]
    (log), lr. A space file may set `gamma = [4]` for the usual Mixer expansion."""
    _check(io, "han-mixer")
    return Space(
        "han-mixer",
        (
            _patch(io),
            Dim("gamma", "choice", choices=(1,)),
            Dim("mixer_L", "int", 0, 2, grid=(0, 1, 2)),
            Dim("L", "int", 1, 16, log=True, grid=(1, 2, 4, 8, 16)),
            Dim("C", "int", 4, 256, log=True, grid=(8, 16, 32, 64, 128)),
            Dim("lr", "choice", choices=PAPER_LRS),
        ),
    )
