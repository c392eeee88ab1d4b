"""Moved to verdicts/undecided.py: import `verdicts.undecided`. This alias of the old path
`reports.undecided` warns (DeprecationWarning) and will be removed."""

import warnings

from verdicts.undecided import *  # noqa: F403
from verdicts.undecided import DECIDED, MOST_EVIDENCE, next_step, undecided, what_it_takes  # noqa: F401

warnings.warn("reports.undecided moved to verdicts.undecided", DeprecationWarning, stacklevel=2)
