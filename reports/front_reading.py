"""Moved to verdicts/front_reading.py: import `verdicts.front_reading`. This alias of the old path
`reports.front_reading` warns (DeprecationWarning) and will be removed."""

import warnings

from verdicts.front_reading import *  # noqa: F403
from verdicts.front_reading import best_within, estimate_at, rests_on_one  # noqa: F401

warnings.warn("reports.front_reading moved to verdicts.front_reading", DeprecationWarning, stacklevel=2)
