"""Moved to verdicts/front_fit.py: import `verdicts.front_fit`. This alias of the old path
`reports.front_fit` warns (DeprecationWarning) and will be removed."""

import warnings

from verdicts.front_fit import *  # noqa: F403
from verdicts.front_fit import front_fit, tricube  # noqa: F401

warnings.warn("reports.front_fit moved to verdicts.front_fit", DeprecationWarning, stacklevel=2)
