"""The families' default spaces by name: `@register_space("family")` in
search/spaces/defs/ (one file per family or group), `default_space(family, io)` to build one.

Defaults are the papers' ranges (Chen et al., MNIST, for the MLPs), scaled by
max(d_x, d_out)/784 for tasks of another size (e.g. 64-pixel digits).
"""

from __future__ import annotations

from collections.abc import Callable

from core.errors import UserError
from core.io import IOSpec
from core.registry import Registry, import_submodules
from search.spaces.space import Space

# per family or group), registered with `@register_space("family")`.
SPACES: Registry[Callable[[IOSpec], Space]] = Registry("search space")


def register_space(family: str) -> Callable[[Callable[[IOSpec], Space]], Callable[[IOSpec], Space]]:
    """Decorator: register a function of the task's `IOSpec` giving `family`'s default space."""
    return SPACES.register(family)


def scale(io: IOSpec, reference: int = 784) -> float:
    """Widths of a paper's ranges are for its input size; scale them for other sizes."""
    return max(io.d_in, io.d_out) / reference


def scaled(v: float, io: IOSpec, reference: int = 784, minimum: int = 4) -> int:
    """Width `v` of a paper's range, scaled from its input size to `io`'s (at least `minimum`)."""
    return max(minimum, int(round(v * scale(io, reference))))


def default_space(family: str, io: IOSpec) -> Space:
    """`family`'s default space on `io` (its paper's ranges); UserError when it has none."""
    import_submodules("search.spaces.defs")
    if family not in SPACES:
        raise UserError(f"family {family!r} has no search space")
    return SPACES.get(family)(io)
