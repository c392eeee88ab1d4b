"""Moved to verdicts/uncertainty.py: import `verdicts.uncertainty`. This alias of the old path
`reports.uncertainty` warns (DeprecationWarning) and will be removed."""

import warnings

from verdicts.uncertainty import *  # noqa: F403
from verdicts.uncertainty import (  # noqa: F401
    DEFAULT_METHOD,
    DEFAULT_WINDOW,
    ESTIMATE_TEXT,
    EXACT_UP_TO,
    FIXED_TEXT,
    FORM_TEXT,
    METHOD_TEXT,
    MIN_DRAWS,
    NOISE_TEXT,
    POOLED_SHORT,
    POOLED_TEXT,
    SHORT_TEXT,
    SYMMETRIC,
    UNTRIED_TEXT,
    WORK,
    check_method,
    draws_for,
    front_draws,
    interval,
    nearest_noise,
    pooled_noise,
    resample_mask,
    seed_noise,
    stream,
    t_interval,
    trend_noise,
)

warnings.warn("reports.uncertainty moved to verdicts.uncertainty", DeprecationWarning, stacklevel=2)
