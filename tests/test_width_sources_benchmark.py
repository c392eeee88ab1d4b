"""benchmarks/verdicts/width_sources.py: searches that are independent draws spread as the simulated
ones do; the default bootstrap of a maximum is wider the more packed the top of the
configurations' values."""

import numpy as np

import benchmarks.verdicts.width_sources as ws
from verdicts.candidates import Candidates

SHAPES = {  # a search's configurations' values, by the shape of the top of their distribution
    "normal": lambda rng, k: rng.normal(size=k),  # thins out above
    "uniform": lambda rng, k: rng.uniform(size=k),  # a flat top below a ceiling
    "shortfall": lambda rng, k: -rng.exponential(size=k),  # packed below a ceiling (the synthetic setting's model)
}


def _search(rng: np.random.Generator, shape: str = "normal", k: int = 20) -> Candidates:
    """k configurations drawn independently: sizes log-uniform in 1K-100K, values of the
    shape whatever the size, one run each with a negligible known seed noise."""
    return Candidates(
        family="a",
        numbers=np.arange(k),
        params=np.exp(rng.uniform(np.log(1e3), np.log(1e5), k)),
        means=SHAPES[shape](rng, k),
        stds=np.full(k, 1e-6),
        runs=np.ones(k, dtype=int),
        configs=[{}] * k,
        dof=np.full(k, 10),
    )


def _ratio(rng, shape: str) -> float:
    """The default half-width at the full budget (median of 60 searches) over the real
    spread of 300 searches."""
    searches = [_search(rng, shape) for _ in range(300)]
    budgets = np.array([1e5])
    real = np.std([ws.value(c.params, c.means, budgets, 1.0)[0] for c in searches], ddof=1)
    return float(np.median([ws.default_half_width(c, "a", budgets, 1.0)[0] for c in searches[:60]]) / real)


def test_the_bootstrap_of_a_maximum_is_wider_the_more_packed_the_top() -> None:
    rng = np.random.default_rng(1)
    ratios = {shape: _ratio(rng, shape) for shape in SHAPES}
    assert 1.4 < ratios["normal"] < 2.2  # about calibrated (1.96) where the top thins out
    for bounded in ("uniform", "shortfall"):  # a top packed below a ceiling: the 2.5% tail is far below
        assert ratios[bounded] > max(2.3, ratios["normal"] + 0.5)


def test_independent_searches_spread_as_their_simulation_and_strata_narrow_the_bootstrap() -> None:
    rng = np.random.default_rng(1)
    searches = [_search(rng) for _ in range(300)]
    budgets = np.array([1e5])
    real = np.std([ws.value(c.params, c.means, budgets, 1.0)[0] for c in searches], ddof=1)

    def one(p):
        return np.zeros(len(p), dtype=int)

    simulated = ws.simulated_spread(searches, budgets, 1.0, one, rng, 3000)[0]
    assert 0.85 < simulated / real < 1.15  # B/A about 1 where searches are independent draws
    half = np.median([ws.default_half_width(c, "a", budgets, 1.0)[0] for c in searches[:40]])

    edges = np.geomspace(1e3, 1e5 * 1.0001, 3)

    def two(p):
        return np.clip(np.searchsorted(edges, p, side="right") - 1, 0, 1)

    strata = np.median([ws.strata_half_width(c, "a", budgets, 1.0, two, rng, draws=400)[0] for c in searches[:40]])
    assert 0 < strata < half  # resampling within bins holds each bin's count: narrower
