"""`--sampler gp-lite`: Optuna's GP with a lighter search of its acquisition function."""

from __future__ import annotations

import optuna

from search.engine.sampling import SAMPLERS
from search.engine.sampling.registry import GP_LITE_LOCAL_SEARCHES, GP_LITE_PRELIMINARY, _gp, _gp_lite


def test_optunas_gp_sampler_has_the_settings_gp_lite_sets():
    """gp-lite sets two private attributes of Optuna's GPSampler: if an Optuna this project
    allows renames them, this fails (rather than gp-lite silently being gp)."""
    gp = optuna.samplers.GPSampler(seed=0)
    assert isinstance(gp._n_preliminary_samples, int) and isinstance(gp._n_local_search, int)
    assert gp._n_preliminary_samples > GP_LITE_PRELIMINARY and gp._n_local_search > GP_LITE_LOCAL_SEARCHES


def test_gp_lite_is_gp_with_a_lighter_acquisition_search():
    full, lite = _gp(0, 40).first, _gp_lite(0, 40).first
    assert (lite._n_preliminary_samples, lite._n_local_search) == (GP_LITE_PRELIMINARY, GP_LITE_LOCAL_SEARCHES)
    assert (full._n_preliminary_samples, full._n_local_search) != (GP_LITE_PRELIMINARY, GP_LITE_LOCAL_SEARCHES)
    assert "gp-lite" in SAMPLERS.names()
