"""Moved to verdicts/compare.py: import `verdicts.compare`. This alias of the old path
`reports.compare` warns (DeprecationWarning) and will be removed."""

import warnings

from verdicts.compare import *  # noqa: F403
from verdicts.compare import (  # noqa: F401
    DEFAULT_CONFIDENCE,
    DEFAULT_DRAWS,
    Verdict,
    compare_at,
    compare_replicates,
    percentile_interval,
)

warnings.warn("reports.compare moved to verdicts.compare", DeprecationWarning, stacklevel=2)
