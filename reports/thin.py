"""Moved to verdicts/thin.py: import `verdicts.thin`. This alias of the old path
`reports.thin` warns (DeprecationWarning) and will be removed."""

import warnings

from verdicts.thin import *  # noqa: F403
from verdicts.thin import Thin, thin_at, untried_at  # noqa: F401

warnings.warn("reports.thin moved to verdicts.thin", DeprecationWarning, stacklevel=2)
