"""Size dimensions and free dimensions (issue 80): which keys of a space change the count is
counted; free keys are drawn over their whole declared range, never narrowed or fixed by
the budget; conditional keys exist only where their condition holds."""

import math
import warnings

import numpy as np
import optuna
import pytest

from core.errors import UserError
from core.io import IOSpec
from search.engine.sampling import Proposal, make_sampler
from search.engine.sampling.optuna_draw import TrialDraw
from search.spaces import Infeasible, Space, classify, parse_dim, parse_dims, suggest_config
from search.spaces.size_dims import moves_count

IO = IOSpec(64, 10)
BUDGET = 300_000


def funnel_widths(config):
    """The funnel of the issue: layer i has max_units / 2**i units (at least 4)."""
    return [max(4, config["max_units"] >> i) for i in range(config["num_layers"])]


def funnel_count(config):
    widths = [IO.d_in, *funnel_widths(config), IO.d_out]
    return sum(a * b + b for a, b in zip(widths, widths[1:]))


FUNNEL = {
    "num_layers": {"low": 1, "high": 5},
    "max_units": {"low": 64, "high": 1024, "log": True},
    "lr": {"low": 1e-4, "high": 1e-1, "log": True},
    "batch_size": {"low": 16, "high": 512, "log": True},
    "max_dropout": {"low": 0.0, "high": 1.0},
    "momentum": {"low": 0.1, "high": 0.99},
    "weight_decay": {"low": 1e-5, "high": 0.1, "log": True},
    "activation": ["relu", "tanh", "gelu"],
}
FREE = ("lr", "batch_size", "max_dropout", "momentum", "weight_decay", "activation")


def funnel_space(table=None):
    return Space("funnel", tuple(parse_dim(k, v) for k, v in (table or FUNNEL).items()))


def test_counting_tells_size_from_free():
    space = classify(funnel_space(), IO, funnel_count)
    assert space.sized == {"num_layers", "max_units"}
    assert space.free == FREE


def test_a_size_override_is_kept_and_a_contradicted_one_refused():
    table = dict(FUNNEL, momentum={"low": 0.1, "high": 0.99, "size": True})
    assert "momentum" in classify(funnel_space(table), IO, funnel_count).sized
    table = dict(FUNNEL, max_units={"low": 64, "high": 1024, "log": True, "size": False})
    with pytest.raises(UserError, match=r"^family 'funnel': dimension 'max_units' is declared \"size\": false"):
        classify(funnel_space(table), IO, funnel_count)


def deciles(dim, values):
    lo, hi = float(dim.low), float(dim.high)
    f = (lambda v: math.log(v)) if dim.log else float
    u = (np.array([f(v) for v in values]) - f(lo)) / (f(hi) - f(lo))
    return set(np.minimum((u * 10).astype(int), 9).tolist())


@pytest.mark.parametrize("sampler", ["tpe", "random"])
def test_free_dimensions_are_searched_over_their_whole_range(sampler):
    """The issue's complaint: every trial after the first ran with each free key at its upper
    bound. Now, in the first 200 proposals of a search, each free range's draws fall in at
    least 8 of its 10 deciles (log deciles for a log range), each choice is drawn, no
    proposal is over the budget, and Optuna warns of nothing."""
    space = classify(funnel_space(), IO, funnel_count)
    proposer = make_sampler(
        sampler, {"funnel": space}, IO, BUDGET, lambda f, c: funnel_count(c), direction="maximize", seed=0, trials=200
    )
    got = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an Optuna warning fails the test
        while len(got) < 200:
            p = proposer.ask()
            assert isinstance(p, Proposal), p
            assert p.params == funnel_count(p.config) <= BUDGET
            # an objective in which the free keys matter: an optimum inside each range
            score = -abs(math.log10(p.config["lr"]) + 2.5) - abs(p.config["max_dropout"] - 0.3)
            proposer.tell(p, score + 0.1 * math.log(p.params), p.params)
            got.append(p.config)
    for name in FREE:
        dim = space.dim(name)
        values = [c[name] for c in got]
        if dim.kind == "choice":
            assert set(values) == set(dim.choices)
        else:
            assert len(deciles(dim, values)) >= 8, (name, sorted(deciles(dim, values)))


def test_the_smallest_corner_fixes_size_dimensions_only():
    space = classify(funnel_space(), IO, funnel_count)
    firsts = []
    for seed in range(4):
        proposer = make_sampler(
            "tpe",
            {"funnel": space},
            IO,
            BUDGET,
            lambda f, c: funnel_count(c),
            direction="maximize",
            seed=seed,
            trials=20,
        )
        p = proposer.ask()
        assert (p.config["num_layers"], p.config["max_units"]) == (1, 64)
        firsts.append(p.config["lr"])
    assert len(set(firsts)) == 4  # drawn, not the range's low end each time


def test_the_count_cache_keys_on_size_dimensions_only():
    space = classify(funnel_space(), IO, funnel_count)
    calls = []

    def counted(config):
        calls.append(config)
        return funnel_count(config)

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    for _ in range(3):
        t = study.ask()
        calls.clear()
        config = suggest_config(space, IO, BUDGET, counted, TrialDraw(t, "funnel"), target=50_000)
        assert not isinstance(config, Infeasible)
        keys = {tuple(sorted((k, v) for k, v in c.items() if k in space.sized)) for c in calls}
        assert len(keys) == len(calls)  # never the same size twice for another free value
        study.tell(t, 0.0)


def per_layer_space():
    dims = ()
    for name, spec in {
        "depth": {"low": 1, "high": 4},
        "width": {"low": 8, "high": 256, "log": True, "per": "depth"},
        "opt": ["adam", "sgd"],
        "momentum": {"low": 0.0, "high": 0.99, "if": "opt == 'sgd'"},
    }.items():
        dims += parse_dims(name, spec, dims)
    return Space("stack", dims)


def stack_count(config):
    widths = [IO.d_in] + [config[f"width_{i}"] for i in range(1, config["depth"] + 1)] + [IO.d_out]
    return sum(a * b + b for a, b in zip(widths, widths[1:]))


def test_conditional_dimensions_exist_only_where_their_condition_holds():
    space = classify(per_layer_space(), IO, stack_count)
    assert [d.name for d in space.dims] == ["depth", "width_1", "width_2", "width_3", "width_4", "opt", "momentum"]
    assert space.conditional and space.dim("width_1").when is None and str(space.dim("width_3").when) == "depth >= 3"
    assert space.sized == {"depth", "width_1", "width_2", "width_3", "width_4"}
    proposer = make_sampler(
        "tpe", {"stack": space}, IO, 60_000, lambda f, c: stack_count(c), direction="maximize", seed=0, trials=60
    )
    depths, momenta = set(), 0
    for _ in range(60):
        p = proposer.ask()
        assert isinstance(p, Proposal), p
        c = p.config
        assert {k for k in c if k.startswith("width_")} == {f"width_{i}" for i in range(1, c["depth"] + 1)}
        assert ("momentum" in c) == (c["opt"] == "sgd")
        assert p.params == stack_count(c) <= 60_000
        depths.add(c["depth"])
        momenta += "momentum" in c
        proposer.tell(p, -math.log(p.params), p.params)
    assert depths == {1, 2, 3, 4} and 0 < momenta < 60


@pytest.mark.parametrize(
    "build, message",
    [
        (
            lambda: Space("stack", (parse_dim("w", {"low": 1, "high": 4, "if": "depth >= 2"}),)),
            "family 'stack': dimension 'w' is conditional on 'depth', no dimension of its space",
        ),
        (
            lambda: Space(
                "stack",
                (parse_dim("w", {"low": 1, "high": 4, "if": "depth >= 2"}), parse_dim("depth", {"low": 1, "high": 3})),
            ),
            "family 'stack': dimension 'w' is conditional on 'depth', a later dimension",
        ),
        (lambda: parse_dim("lr", {"low": 0.1, "high": 1e-3}), "lr: need low <= high"),
        (lambda: parse_dim("w", {"low": 1, "high": 4, "if": "depth ~ 2"}), "w: 'if' must be 'PARENT OP VALUE'"),
        (lambda: parse_dim("w", {"low": 1, "high": 4, "size": "yes"}), "w: size must be true or false"),
        (lambda: parse_dims("w", {"low": 1, "high": 4, "per": "depth"}), "w: 'per' must name an earlier integer"),
    ],
)
def test_bad_dimensions_are_one_line_errors(build, message):
    with pytest.raises(UserError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        build()


def test_a_dimension_found_to_move_the_count_later_is_told():
    """`moves_count` at one configuration: the check the study runs on its first proposals."""
    space = classify(funnel_space(), IO, funnel_count)
    config = {"num_layers": 2, "max_units": 128, **{k: space.dim(k).low for k in FREE if k != "activation"}}
    config["activation"] = "relu"
    assert moves_count(space, IO, config, "max_units", funnel_count)
    assert not moves_count(space, IO, config, "lr", funnel_count)


def test_a_built_in_familys_range_lr_from_a_space_file_is_searched_over_its_range(tmp_path):
    """The same rule for the built-in families: `lr` as a range in a space file is a free
    dimension, drawn over the whole range (not narrowed to its top by the size draw)."""
    from search.engine.prepare import prepare
    from search.engine.specs import RunSpec

    path = tmp_path / "space.toml"
    path.write_text("[hourglass]\nlr = {low = 1e-4, high = 1e-2, log = true}\n")
    prep = prepare(RunSpec(spaces=("hourglass",), task="digits-denoise", budget=100_000, space_file=str(path)))
    space = prep.spaces["hourglass"]
    assert "lr" in space.free and space.sized == {"L", "d_z", "d_h"}
    proposer = make_sampler(
        "random", prep.spaces, prep.io, 100_000, prep.count, direction="maximize", seed=0, trials=100
    )
    lrs = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        while len(lrs) < 100:
            p = proposer.ask()
            assert isinstance(p, Proposal) and p.params <= 100_000
            proposer.tell(p, -math.log(p.params), p.params)
            lrs.append(p.config["lr"])
    assert len(deciles(space.dim("lr"), lrs)) >= 8


def test_a_space_with_free_ranges_draws_its_shape_as_itself_unless_told():
    """prepare's `route_sampler`: the GP's default "modelled" shape draw (40 trials, one
    family) becomes "random" where a space has free ranges, and says so; a shape draw the
    user chose is kept."""
    from search.engine.prepare import route_sampler
    from search.engine.specs import RunSpec

    spaces = {"hourglass": classify(funnel_space(), IO, funnel_count)}
    spec = RunSpec(spaces=("hourglass",), task="digits-denoise", budget=BUDGET, trials=40)
    assert spec.shape_draw == "modelled" and not spec.shape_draw_given
    routed = route_sampler(spec, spaces)
    assert routed.shape_draw == "random" and "has free ranges: shape draw random" in routed.routed
    chosen = RunSpec(spaces=("hourglass",), task="digits-denoise", budget=BUDGET, trials=40, shape_draw="modelled")
    assert route_sampler(chosen, spaces).shape_draw == "modelled"
    sizes_only = {
        "hourglass": classify(funnel_space({k: FUNNEL[k] for k in ("num_layers", "max_units")}), IO, funnel_count)
    }
    assert route_sampler(spec, sizes_only) is spec


@pytest.mark.parametrize("family, key", [("transformer", "d_model"), ("conventional-noproj", "d_z")])
def test_a_key_a_rule_ties_to_a_size_key_is_a_size_key(family, key):
    """`d_model = 64 * n_heads` pins d_model once n_heads is drawn, so moving it alone moves
    no count; tied to a size key by a rule, it is sized with it (and the shape draw stays)."""
    from models import get_family
    from search.engine.prepare import prepare
    from search.engine.specs import RunSpec

    prep = prepare(RunSpec(spaces=(family,), task=get_family(family).default_task, budget=10**12))
    assert key in prep.spaces[family].sized and prep.spec.routed is None
