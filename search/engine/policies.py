"""How an Optuna proposer (search/engine/proposers.py: `OptunaProposer`) places a study's
trials: the names and defaults of its two policies. They live here, apart from the
proposer, so that the spec, the sampler registry and the CLI can check a name without
importing Optuna, and so that the proposers need nothing from the registry that builds
them.

- spread (`--spread`): "size" draws a target size first and aims the configuration at it
  (the accepted models spread over the parameter axis); "none" does not.
- share (`--share`): "equal" gives the families of a multi-family study turns (each
  family's front is a result of its own); "free" lets the sampler choose the family like
  any other parameter.
"""
from __future__ import annotations

SPREADS = ("size", "none")
DEFAULT_SPREAD = "size"
SHARES = ("equal", "free")
DEFAULT_SHARE = "equal"
