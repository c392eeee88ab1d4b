import math

import numpy as np
import optuna
import pytest

from core.errors import UserError
from core.io import IOSpec
from models import get_family
from search.engine.sampling.optuna_draw import TrialDraw
from search.spaces import (
    Infeasible,
    build_spaces,
    check_config,
    default_space,
    grid_configs,
    load_space_file,
    min_params,
    suggest_config,
)

MNIST = IOSpec(784, 784)
DIGITS = IOSpec(64, 64)


def draw_many(family, io, budget, n=200, seed=0, space=None):
    space = space or default_space(family, io)
    fam = get_family(family)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    out = []
    for _ in range(n):
        t = study.ask()
        out.append(suggest_config(space, io, budget, lambda c: fam.count_params(c, io), TrialDraw(t, family)))
        study.tell(t, 0.0)
    return out


@pytest.mark.parametrize("family", ["hourglass", "conventional", "conventional-noproj", "conventional-narrow"])
@pytest.mark.parametrize("io,budget", [(MNIST, 3_000_000), (MNIST, 80_000_000), (DIGITS, 100_000)])
def test_never_over_budget_and_always_in_shape(family, io, budget):
    fam = get_family(family)
    configs = draw_many(family, io, budget)
    assert not any(isinstance(c, Infeasible) for c in configs)
    for c in configs:
        assert fam.count_params(c, io) <= budget
        assert fam.shape_violation(c, io) is None


@pytest.mark.parametrize("family", ["hourglass", "conventional"])
def test_accepted_models_spread_over_the_range(family):
    """Not piled up at the budget: the counts cover the range between the smallest model
    and the budget on a log scale (every third of the log range gets a share)."""
    io, budget = MNIST, 80_000_000
    fam = get_family(family)
    counts = np.array([fam.count_params(c, io) for c in draw_many(family, io, budget, n=300)])
    lo = min_params(default_space(family, io), io, lambda c: fam.count_params(c, io))
    edges = np.exp(np.linspace(math.log(lo), math.log(budget), 4))
    shares = np.histogram(counts, bins=edges)[0] / len(counts)
    assert (shares > 0.1).all(), shares
    assert (counts > 0.9 * budget).mean() < 0.2


def test_paper_ranges_and_scaling():
    s = default_space("hourglass", MNIST)
    assert (s.dim("d_z").low, s.dim("d_z").high) == (785, 4500)
    assert (s.dim("d_h").low, s.dim("d_h").high) == (4, 2500)
    assert (s.dim("L").low, s.dim("L").high) == (1, 40)
    assert s.dim("lr").choices == (1e-4, 5e-4, 1e-3, 5e-3)
    d = default_space("hourglass", DIGITS)
    assert d.dim("d_z").low == 65 and d.dim("d_z").high == round(4500 * 64 / 784)


def test_super_resolution_streams_start_where_the_papers_range_does():
    """A.3.2 gives one range for every MNIST task, d_z in [785, 4500]; on super-resolution
    the input is 14x14 = 196 wide, and the stream still starts at 785 (not at d_x + 1), for
    both shapes; scaled on digits (4x4 -> 8x8: 785 * 64 / 784 = 64). Where input and output
    are as wide (denoising), the start stays d_x + 1 (hourglass) and d_x (conventional)."""
    for family in ("hourglass", "conventional"):
        assert default_space(family, IOSpec(196, 784)).dim("d_z").low == 785
        assert default_space(family, IOSpec(16, 64)).dim("d_z").low == 64
        assert default_space(family, IOSpec(196, 784)).dim("d_z").high == 4500
    assert default_space("hourglass", MNIST).dim("d_z").low == 785
    assert default_space("conventional", MNIST).dim("d_z").low == 784
    assert default_space("hourglass", IOSpec(2, 2)).dim("d_z").low == 5  # the checkerboard: as before
    for c in draw_many("hourglass", IOSpec(196, 784), 3_000_000, n=50) + draw_many(
        "conventional", IOSpec(196, 784), 3_000_000, n=50
    ):
        assert 785 <= c["d_z"] <= 4500, c


def test_conventional_space_is_the_papers():
    """Chen et al. search both shapes over d_z in [785, 4500] and d_h in [4, 2500] (MNIST),
    the conventional one with d_h > d_z: its stream is never narrower than the input, and
    may equal it (Table 1's conventional rows: d_z = d_x = 3072)."""
    s = default_space("conventional", MNIST)
    assert (s.dim("d_z").low, s.dim("d_z").high) == (784, 4500)
    assert (s.dim("d_h").low, s.dim("d_h").high) == (4, 2500)
    for io, budget in ((MNIST, 80_000_000), (DIGITS, 100_000), (IOSpec(196, 784), 3_000_000)):
        for c in draw_many("conventional", io, budget, n=100):
            assert c["d_z"] >= io.d_in and c["d_h"] > c["d_z"], c
        for c in grid_configs(default_space("conventional", io), 0):
            if check_config(default_space("conventional", io), io, c) is None:
                assert c["d_z"] >= io.d_in and c["d_h"] > c["d_z"], c


def test_conventional_variants_are_explicit_families():
    """No projection (the authors' code allows z_0 = x): d_z = d_x, no W_in parameters.
    The narrow-stream ablation reaches d_z below d_x, which the paper's space never does."""
    fam = get_family("conventional-noproj")
    for c in draw_many("conventional-noproj", DIGITS, 100_000, n=50):
        assert c["d_z"] == 64 and c["d_h"] > 64
        n = fam.count_params(c, DIGITS)
        assert n == 2 * c["L"] * 64 * c["d_h"] + 64 * 64  # blocks and W_out only
        model = fam.build(c, DIGITS)
        assert n == sum(p.numel() for p in model.parameters() if p.requires_grad)
    with pytest.raises(UserError, match="no_w_in needs d_z = d_x = 64"):
        fam.count_params({"d_z": 100, "d_h": 200, "L": 1}, DIGITS)
    narrow = [c["d_z"] for c in draw_many("conventional-narrow", DIGITS, 100_000, n=100)]
    assert min(narrow) < 64


def test_space_file_constraints_replace_the_search_constraints_not_the_shape_rules():
    """Liao et al. fix the number of heads and leave the head dimension free; the shipped
    space file (the liao-ffn recipes') does it by replacing the default constraints that
    pin 64 features per head. The family's shape rule (hourglass FFN: d_h < d_model) stays."""
    from search.recipes import RECIPE_DIR
    from tasks import get_task

    io = get_task("lm-shakespeare").io()
    path = str(RECIPE_DIR / "spaces" / "liao-fixed-heads.toml")
    spaces = build_spaces(["transformer", "transformer-hourglass"], io, path)
    space = spaces["transformer-hourglass"]
    assert spaces["transformer"].dim("n_heads").choices == (8,)
    assert [str(c) for c in space.constraints] == [
        "d_h < d_model",
        "L >= 0.00390625 * d_model",
        "L <= 0.03125 * d_model",
        "d_h >= 0.1 * d_model",
    ]
    fam = get_family("transformer-hourglass")
    heads_dims = set()
    for c in draw_many("transformer-hourglass", io, 2_000_000, n=60, space=space):
        assert c["n_heads"] == 8 and c["d_model"] % 16 == 0 and c["d_h"] < c["d_model"]
        assert 32 <= c["d_model"] / c["L"] <= 256 and fam.shape_violation(c, io) is None
        heads_dims.add(c["d_model"] // 8)
    assert len(heads_dims) > 5  # the head dimension is free, not pinned at 64


def test_min_params_is_the_smallest_model():
    fam = get_family("hourglass")
    smallest = min_params(default_space("hourglass", MNIST), MNIST, lambda c: fam.count_params(c, MNIST))
    assert smallest == fam.count_params({"d_z": 785, "d_h": 4, "L": 1}, MNIST)


def test_infeasible_choice_is_reported():
    fam = get_family("hourglass")
    space = default_space("hourglass", DIGITS).with_overrides(load_space_file_from({"L": [40]}))
    small = fam.count_params({"d_z": 65, "d_h": 4, "L": 1}, DIGITS)
    configs = draw_many("hourglass", DIGITS, small + 10, n=3, space=space)
    assert all(isinstance(c, Infeasible) and "budget" in c.reason for c in configs)


def load_space_file_from(table):
    from search.spaces import parse_dim

    return {k: parse_dim(k, v) for k, v in table.items()}


def test_space_file_toml_and_yaml(tmp_path):
    (tmp_path / "s.toml").write_text("[hourglass]\nd_z = {low = 100, high = 200, log = true}\nd_h = [8, 16]\n")
    (tmp_path / "s.yaml").write_text("hourglass:\n  L: {low: 1, high: 3}\n  lr: 0.001\n")
    spaces = build_spaces(["hourglass"], DIGITS, str(tmp_path / "s.toml"))
    assert spaces["hourglass"].dim("d_z").high == 200 and spaces["hourglass"].dim("d_h").choices == (8, 16)
    spaces = build_spaces(["hourglass"], DIGITS, str(tmp_path / "s.yaml"))
    assert spaces["hourglass"].dim("L").high == 3 and spaces["hourglass"].dim("lr").choices == (0.001,)


def test_imagenet_tasks_search_the_papers_learning_rates(tmp_path):
    """Chen et al. A.3: on ImageNet-32 the lr is searched in {1, 3, 5, 7}e-4, not in the
    MNIST set; every family's lr choice follows the task, and a space file still wins."""
    from search.engine.prepare import prepare
    from search.engine.specs import RunSpec

    for family in ("hourglass", "conventional"):
        prep = prepare(RunSpec(spaces=(family,), task="imagenet32-denoise", budget=10**9))
        assert prep.spaces[family].dim("lr").choices == (1e-4, 3e-4, 5e-4, 7e-4)
    mnist = prepare(RunSpec(spaces=("hourglass",), task="mnist-denoise", budget=10**9))
    assert mnist.spaces["hourglass"].dim("lr").choices == (1e-4, 5e-4, 1e-3, 5e-3)
    (tmp_path / "s.toml").write_text("[hourglass]\nlr = [2e-4]\n")
    spaces = build_spaces(["hourglass"], IOSpec(3072, 3072), str(tmp_path / "s.toml"), (1e-4, 3e-4))
    assert spaces["hourglass"].dim("lr").choices == (2e-4,)


@pytest.mark.parametrize(
    "text,match",
    [
        ("[hourglass\nd_z = 3", "malformed"),
        ("[hourglass]\nwidth = [1]", "no key width"),
        ('[hourglass]\nconstraints = ["d_h =< d_z"]', "expected 'LEFT OP"),
        ('[hourglass]\nconstraints = "d_h < d_z"', "must be a list"),
        ('[hourglass]\nconstraints = ["d_h < 0 * d_z"]', "scale must be positive"),
        ('[hourglass]\nconstraints = ["width < d_z"]', "names width, not a key"),
        ("[hourglass]\nd_z = {low = 300, high = 100}", "low <= high"),
        ("[hourglass]\nd_z = {high = 100}", "needs low and high"),
        ("[resnet]\nd_z = [1]", "not searched"),
        ("d_z = 3", "one table per family"),
    ],
)
def test_malformed_space_files(tmp_path, text, match):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(UserError, match=match):
        build_spaces(["hourglass"], DIGITS, str(p))


def test_missing_space_file():
    with pytest.raises(UserError, match="not found"):
        load_space_file("/nonexistent/space.toml")


def test_grid_covers_product_and_constraints():
    space = default_space("hourglass", DIGITS).with_overrides(
        load_space_file_from({"d_z": {"low": 65, "high": 200, "grid": [65, 100, 200]}, "d_h": [8, 100], "L": [1, 2]})
    )
    points = list(grid_configs(space, seed=0))
    assert len(points) == 3 * 2 * 2 * 4
    bad = [p for p in points if check_config(space, DIGITS, p)]
    assert all(p["d_h"] >= p["d_z"] for p in bad) and len(bad) == 2 * 2 * 4  # d_z in {65, 100} with d_h=100, x L x lr


def test_stepped_int_dims_stay_on_their_grid_and_under_budget():
    """An int dim with a step (odd depths, widths in multiples of 64) is cut to the
    largest on-grid value that fits, and Optuna draws only on-grid values."""
    from search.spaces import Dim, Space

    space = Space(
        "hourglass",
        (Dim("L", "int", 1, 13, step=2), Dim("d_z", "int", 785, 785 + 64 * 40, step=64), Dim("d_h", "int", 4, 4)),
    )
    fam = get_family("hourglass")
    count = lambda c: fam.count_params(c, MNIST)  # noqa: E731
    budget = 8_000_000
    seen = set()
    for seed in range(3):
        for c in draw_many("hourglass", MNIST, budget, n=60, seed=seed, space=space):
            assert not isinstance(c, Infeasible), c
            assert c["L"] % 2 == 1 and (c["d_z"] - 785) % 64 == 0
            assert count(c) <= budget
            seen.add(c["L"])
            # the cut is tight: one more step of d_z would be over budget
            if c["d_z"] + 64 <= 785 + 64 * 40:
                bigger = dict(c, d_z=c["d_z"] + 64)
                assert count(bigger) > budget or c["d_z"] < 785 + 64 * 40
    assert len(seen) > 3
    assert space.dim("L").grid_values() == tuple(sorted(set(space.dim("L").grid_values())))
    assert all(v % 2 == 1 for v in space.dim("L").grid_values())


@pytest.mark.parametrize(
    "spec,match",
    [
        ({"low": 1, "high": 9, "step": 0}, "step must be a positive integer"),
        ({"low": 1, "high": 9, "step": 2, "log": True}, "without log"),
        ({"low": 1.0, "high": 9.5, "step": 2}, "integer range"),
    ],
)
def test_bad_steps_are_one_line_errors(spec, match):
    from search.spaces import parse_dim

    with pytest.raises(UserError, match=match):
        parse_dim("x", spec)
