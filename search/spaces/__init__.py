"""Search spaces: what a family's configurations may be, and how a budget-aware draw
picks one.

    space.py     `Dim` and `Space` (ranges, choices, constraints); `PAPER_LRS`
    sizing.py    budget-aware drawing: the smallest model, `suggest_config`, the grid
    defaults.py  the families' default spaces by name (`register_space`, `default_space`)
    files.py     space files (`--space-file`), space-dict entries and `build_spaces`
    size_dims.py which dimensions set the size (counted) and which are free
    defs/        the default spaces, one file per family or group

"""

from search.spaces.defaults import SPACES, default_space, register_space, scale, scaled
from search.spaces.files import (
    CONSTRAINTS_KEY,
    build_spaces,
    load_space_file,
    parse_condition,
    parse_constraint,
    parse_dim,
    parse_dims,
)
from search.spaces.size_dims import classify
from search.spaces.sizing import (
    ConfigCounter,
    Infeasible,
    Suggester,
    check_config,
    grid_configs,
    min_params,
    smallest_config,
    suggest_config,
)
from search.spaces.space import PAPER_LRS, Condition, Dim, Space

__all__ = [
    "CONSTRAINTS_KEY",
    "PAPER_LRS",
    "SPACES",
    "Condition",
    "ConfigCounter",
    "Dim",
    "Infeasible",
    "Space",
    "Suggester",
    "build_spaces",
    "check_config",
    "classify",
    "default_space",
    "grid_configs",
    "load_space_file",
    "min_params",
    "parse_condition",
    "parse_constraint",
    "parse_dim",
    "parse_dims",
    "register_space",
    "scale",
    "scaled",
    "smallest_config",
    "suggest_config",
]
