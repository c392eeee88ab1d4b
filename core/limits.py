"""Limits that more than one layer states (the CLI's defaults and the layer that enforces them)."""

from __future__ import annotations

SQL_TIMEOUT_S = 30.0  # `search sql` stops a query after this long (storage.sql enforces it)
# `search run --storage-wait`: how long a search waits for a database that went away
# (storage/waiting.py enforces it)
DEFAULT_STORAGE_WAIT_S = 300.0
# `search compare --min-near`: configurations of a family needed near a budget to read it
# there (measured: docs/benchmarks.md, "Verdicts that survive a second search"; used by
# verdicts/uncertainty.py)
DEFAULT_MIN_NEAR = 1
# `search compare --noise`: a configuration's seed noise, "pooled" (its family's, over every
# configuration run twice or more: verdicts/compare.py `Candidates.pooled`), "near" (over
# those that scored nearest it: `Candidates.near`), "own", or "trend" (read at its mean from
# how the noise of the configurations run twice or more changes with their mean: `with_noise`)
NOISE_MODELS = ("pooled", "near", "own", "trend")
DEFAULT_NOISE = "pooled"
# `search compare --interval-form`: how an interval is read off its bootstrap draws
# (verdicts/uncertainty.py `interval`; measured: docs/benchmarks.md §30)
INTERVAL_FORMS = ("percentile", "normal")
DEFAULT_FORM = "percentile"
ESTIMATES = ("best", "fit")  # a family's value at a budget: verdicts/front_reading.py estimate_at
DEFAULT_ESTIMATE = "best"
# `search run --corners`: the model sizes a new study visits first, per option (the sampler
# visits them: search/engine/sampling; the readers keep the smallest, which every such search
# trains, in every bootstrap resample: verdicts/candidates.py `smallest_by_design`)
CORNER_SIZES = {"both": ("smallest", "budget"), "smallest": ("smallest",), "none": (), "last": ("smallest",)}
# `search compare --levels`: how many log-spaced budgets it reads when none are given
# (verdicts/candidates.py `log_levels`); seed checks in the "budgets" order check the same ones
DEFAULT_LEVELS = 5
