"""The attainment surfaces of replicate searches (reports/attainment.py) against the
brute-force definition: a surface point is reached by at least the percentile's searches,
and nothing better at its size is."""

import numpy as np
import pytest

from reports.attainment import attained, attainment_surfaces

pytest.importorskip("moocore")


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_surface_point_is_reached_by_its_share_of_searches_and_no_better_one(direction, seed):
    rng = np.random.default_rng(seed)
    points = [np.column_stack([rng.uniform(3, 5, 6), rng.normal(20, 1, 6)]) for _ in range(4)]
    eps = 1e-6 if direction == "maximize" else -1e-6
    for q, surface in attainment_surfaces(points, direction).items():
        need = int(np.ceil(q / 100 * 4))
        assert len(surface) and (np.diff(surface[:, 0]) >= 0).all()
        for x, y in surface:
            assert attained(points, x, y, direction) >= need
            assert attained(points, x, y + eps, direction) < need  # the boundary: a better value is not reached
        # in the direction of better values, the surfaces are ordered: 25% above 50% above 75%
    s = attainment_surfaces(points, direction)
    best = {q: (surf[:, 1].max() if direction == "maximize" else surf[:, 1].min()) for q, surf in s.items()}
    order = [best[25.0], best[50.0], best[75.0]]
    assert order == sorted(order, reverse=direction == "maximize")


def test_a_search_without_the_family_reaches_nothing():
    one = [np.array([[4.0, 20.0]]), np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2))]
    s = attainment_surfaces(one, "maximize")
    assert s[25.0].tolist() == [[4.0, 20.0]] and len(s[50.0]) == 0 and len(s[75.0]) == 0
    assert all(len(v) == 0 for v in attainment_surfaces([np.zeros((0, 2))] * 3, "maximize").values())
