"""search/engine/search_flags.py: a study's search said as the flags that set it, and the
flags a resumed study was created otherwise with."""

import pytest

from core.errors import UserError
from search.engine.sampling.policies import unmet_need
from search.engine.search_flags import FLAGS, applies, changed_flags, format_flags, search_flags, search_settings
from search.engine.specs import RunSpec


def spec(**kw):
    return RunSpec(**({"spaces": ("hourglass",), "task": "digits-denoise", "budget": 100_000, "trials": 40} | kw))


def test_every_setting_has_a_flag_that_search_run_knows():
    import argparse

    from search.cli.main import build_parser

    subs = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    known = {opt for action in subs.choices["run"]._actions for opt in action.option_strings}
    assert set(FLAGS.values()) <= known
    assert set(search_settings(spec())) == set(FLAGS)


def test_one_family_on_the_defaults_says_what_the_defaults_chose():
    flags = dict(search_flags(search_settings(spec()), families=1))
    assert flags["--sampler"] == "gp" and flags["--shape-draw"] == "modelled"  # 40 trials: modelled
    assert "--share" not in flags and "--sampler-scope" not in flags  # one family: no turns to tell
    assert "--prune-grace" not in flags  # the pruner's own grace
    assert dict(search_flags(search_settings(spec(trials=20)), 1))["--shape-draw"] == "random"


def test_several_families_say_their_share_and_scope():
    flags = dict(search_flags(search_settings(spec(spaces=("hourglass", "conventional"), trials=8)), 2))
    assert flags["--share"] == "equal" and flags["--sampler-scope"] == "family" and flags["--shape-draw"] == "modelled"


def test_the_grid_says_only_what_applies_to_it():
    s = search_settings(spec(sampler="grid", pruner="pareto", prune_grace=0.25))
    assert format_flags(search_flags(s, 1)) == (
        "--sampler grid --pruner pareto --prune-grace 0.25 --seed-checks 0.2 --seed-check-order cheapest"
    )
    s = search_settings(spec(spread="none"))
    assert "--corners" not in dict(search_flags(s, 1)) and "--start" not in dict(search_flags(s, 1))


@pytest.mark.parametrize(
    "created, expected",
    [
        ({}, []),  # a study of an older version stored none of them: nothing compared
        ({"pruner": "pareto", "shape_draw": "modelled"}, []),
        (
            {"pruner": "none", "shape_draw": "random", "share": "free"},
            [("--shape-draw", "random"), ("--pruner", "none")],
        ),
        ({"prune_grace": 0.5}, [("--prune-grace", 0.5)]),  # created with a grace; the pruner's own grace now
        ({"prune_grace": None}, []),
    ],
)
def test_changed_flags_are_those_created_otherwise(created, expected):
    running = search_settings(spec())  # one family: --share does not apply
    assert changed_flags(created, running, 1) == expected


def test_a_value_not_set_reads_unset():
    running = search_settings(spec(prune_grace=0.3))
    assert format_flags(changed_flags({"prune_grace": None}, running, 1)) == "--prune-grace unset"


@pytest.mark.parametrize(
    "key, sampler, spread, families, need",
    [
        ("scope", "gp", "size", 1, "families"),
        ("scope", "gp", "size", 2, None),
        ("corners", "grid", "size", 1, "grid"),
        ("corners", "gp", "none", 1, "spread"),
        ("corners", "tpe", "size", 2, None),
        ("start", "gp", "none", 2, "spread"),
        ("revisit", "grid", "none", 1, "grid"),
        ("revisit", "gp", "none", 1, None),
        ("pruner", "grid", "none", 1, None),
    ],
)
def test_unmet_need_is_the_one_rule_of_what_each_setting_needs(key, sampler, spread, families, need):
    assert unmet_need(key, sampler, spread, families) == need


def test_a_setting_run_refuses_for_an_unmet_need_is_one_the_summary_leaves_out():
    """The refusals of `RunSpec` and the summary line read one table: every model-only
    setting that `search run` refuses with the grid is one `applies` drops for the grid."""
    refusals = {
        "corners": "last",
        "start": "ramp",
        "revisit": "train",
        "shape_draw": "modelled",
        "size_scale": "linear",
    }
    for key, value in refusals.items():
        with pytest.raises(UserError):
            RunSpec(spaces=("hourglass",), task="digits-denoise", budget=60_000, sampler="grid", **{key: value})
        assert not applies(key, {"sampler": "grid", "spread": "size", key: value}, 1)
        assert applies(key, {"sampler": "gp", "spread": "size", key: value}, 1)
