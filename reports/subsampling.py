"""Moved to verdicts/subsampling.py: import `verdicts.subsampling`. This alias of the old path
`reports.subsampling` warns (DeprecationWarning) and will be removed."""

import warnings

from verdicts.subsampling import *  # noqa: F403
from verdicts.subsampling import subsample_draws, subsample_mask  # noqa: F401

warnings.warn("reports.subsampling moved to verdicts.subsampling", DeprecationWarning, stacklevel=2)
