"""Moved to verdicts/candidates.py: import `verdicts.candidates`. This alias of the old path
`reports.candidates` warns (DeprecationWarning) and will be removed."""

import warnings

from verdicts.candidates import *  # noqa: F403
from verdicts.candidates import (  # noqa: F401
    Candidates,
    candidates,
    default_levels,
    log_levels,
    redraw_means,
    smallest_by_design,
    with_noise,
)

warnings.warn("reports.candidates moved to verdicts.candidates", DeprecationWarning, stacklevel=2)
