"""A study's trained models: written where they train, kept by `--keep`, read back.

location.py   the artifact store of a URL (Optuna's folder and S3 stores), `--keep`
weights.py    one run's weights as a safetensors file and its record (`write_weights`)
keep.py       `--keep pareto|all|none` as the study grows (`Keeper`)
load.py       a trial's weights read and checked (`read_weights`), its model (`load_model`)
export.py     `search model`'s folder: weights, configuration, a loader script
"""

from __future__ import annotations

from search.artifacts.location import DEFAULT_KEEP, KEEP, open_location, weights_location
from search.artifacts.weights import WEIGHTS, weights_sink, write_weights

__all__ = ["DEFAULT_KEEP", "KEEP", "WEIGHTS", "open_location", "weights_location", "weights_sink", "write_weights"]
