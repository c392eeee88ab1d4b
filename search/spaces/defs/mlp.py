"""Default spaces of the hourglass and conventional MLPs (Chen et al., MNIST ranges)."""

from __future__ import annotations

from core.io import IOSpec
from models import get_family
from search.spaces import PAPER_LRS, Dim, Space, register_space, scaled

MIN_SIZE = 64  # tasks with fewer inputs and outputs (2-D checkerboard, sines) get digits-sized ranges


def _w(v: float, io: IOSpec) -> int:
    """`scaled(v, io)`, but as if max(d_x, d_out) were at least MIN_SIZE."""
    return scaled(v, IOSpec(max(io.d_in, MIN_SIZE), max(io.d_out, MIN_SIZE)))


def _geometric_ints(lo: int, hi: int, n: int = 4) -> tuple[int, ...]:
    """n log-spaced integers from lo to hi: the conventional grid's d_h values, all wide
    enough for the shape rule d_h > d_z at the smaller d_z grid values (a grid over the
    whole d_h range would leave it one valid d_h)."""
    return tuple(sorted({round(lo * (hi / lo) ** (i / (n - 1))) for i in range(n)}))


def _d_z_low(io: IOSpec, above_input: int) -> int:
    """The narrowest stream d_z: `above_input` over d_x (1 for the hourglass, whose stream is
    wider than its input; 0 for the conventional, Table 1's d_z = d_x rows), and where the
    input is narrower than the output (super-resolution: d_x = 196 on MNIST) at least the
    start of A.3.2's range for every MNIST task, 785 (scaled)."""
    low = max(io.d_in + above_input, 5)
    return max(low, _w(785, io)) if io.d_in < io.d_out else low


@register_space("hourglass")
def hourglass_space(io: IOSpec) -> Space:
    """d_z in [785, 4500], d_h in [4, 2500], L in [1, 40], the paper's lr set (widths scaled
    by max(d_x, d_out)/784); hourglass shape: d_z > d_x and d_h < d_z. The ranges are A.3.2's
    for every MNIST task, super-resolution included: there d_x = 196, and d_z still starts
    at 785 (scaled), not above d_x (a space file with a lower d_z widens it)."""
    return Space(
        "hourglass",
        (
            Dim("fixed_w_in", "choice", choices=(False,)),
            Dim("L", "int", 1, 40, log=True, grid=(1, 2, 5, 10, 20, 40)),
            Dim("d_z", "int", _d_z_low(io, 1), max(io.d_in + 1, _w(4500, io)), log=True),
            Dim("d_h", "int", 4, _w(2500, io), log=True),
            Dim("lr", "choice", choices=PAPER_LRS),
        ),
        get_family("hourglass").shape_rules,
    )


@register_space("conventional")
def conventional_space(io: IOSpec) -> Space:
    """The paper's ranges for both shapes (Chen et al., MNIST): d_z in [784, 4500], d_h in
    [4, 2500], L in [1, 40], the paper's lr set (widths scaled by max(d_x, d_out)/784);
    conventional shape: d_h > d_z, so the stream is never narrower than the input and the
    blocks are wider than the stream. d_z starts at d_x, not above it: every conventional
    row of the paper's Table 1 (denoising, d_x = 3072) has d_z = d_x = 3072, with a trained
    W_in in its count (37.77M at d_h 3075, L 1 = 3072^2 + 2 * 3072 * 3075 + 3072^2); A.3's
    "d_z > d_x" is stated for the hourglass. Where the input is narrower than the output
    (super-resolution, d_x = 196 on MNIST), d_z starts at 785 (scaled) as A.3.2's range
    for every MNIST task says."""
    return Space(
        "conventional",
        (
            Dim("fixed_w_in", "choice", choices=(False,)),
            Dim("L", "int", 1, 40, log=True, grid=(1, 2, 5, 10, 20, 40)),
            Dim("d_z", "int", _d_z_low(io, 0), max(io.d_in + 1, _w(4500, io)), log=True),
            Dim(
                "d_h",
                "int",
                4,
                max(io.d_in + 2, _w(2500, io)),
                log=True,
                grid=_geometric_ints(io.d_in + 2, max(io.d_in + 2, _w(2500, io))),
            ),
            Dim("lr", "choice", choices=PAPER_LRS),
        ),
        get_family("conventional").shape_rules,
    )


@register_space("conventional-noproj")
def conventional_noproj_space(io: IOSpec) -> Space:
    """No input projection: d_z = d_x; d_h in [4, 2500] (scaled) above d_z, L in [1, 40]."""
    return Space(
        "conventional-noproj",
        (
            Dim("L", "int", 1, 40, log=True, grid=(1, 2, 5, 10, 20, 40)),
            Dim("d_z", "int", io.d_in, io.d_in),
            Dim("d_h", "int", 4, max(io.d_in + 1, _w(2500, io)), log=True),
            Dim("lr", "choice", choices=PAPER_LRS),
        ),
        get_family("conventional-noproj").shape_rules,
    )


@register_space("conventional-narrow")
def conventional_narrow_space(io: IOSpec) -> Space:
    """Narrow stream, wide blocks (an ablation, not the paper's space): d_z in [64, 1024],
    d_h in [d_z+1, 4500] (scaled), L in [1, 40]; shape: d_h > d_z."""
    return Space(
        "conventional-narrow",
        (
            Dim("fixed_w_in", "choice", choices=(False,)),
            Dim("L", "int", 1, 40, log=True, grid=(1, 2, 5, 10, 20, 40)),
            Dim("d_z", "int", _w(64, io), _w(1024, io), log=True),
            Dim("d_h", "int", _w(64, io) + 1, _w(4500, io), log=True),
            Dim("lr", "choice", choices=PAPER_LRS),
        ),
        get_family("conventional-narrow").shape_rules,
    )
