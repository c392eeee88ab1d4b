"""benchmarks/speed/with_optunas_gp.py `fit_every_trial`: the baseline arm of a GP fit for
every trial, as the benchmarks of two trials from one fit compare it."""

import search.engine.sampling.samplers as samplers
from benchmarks.speed.with_optunas_gp import fit_every_trial


def test_fit_every_trial_builds_an_unpaced_gp_and_puts_the_share_back():
    with fit_every_trial():
        gp = samplers._gp_model(0, 40)
        assert gp.pace is None and not gp.pairs()
    assert samplers.PAIR_SHARE == 1.0
    assert samplers._gp_model(0, 40).pace.share == 1.0
