"""The configuration to train at a larger budget (search/spaces/extrapolate.py): fronts
whose shape trends are known, rounded into real spaces, counted exactly."""

from __future__ import annotations

import numpy as np
import pytest

from core.io import IOSpec
from models import get_family
from models.families import trainable_params
from search.spaces import Dim, Space, check_config, default_space
from search.spaces.extrapolate import place, proposals_frame, propose_config
from tasks import get_task

TOY = Space("toy", (Dim("act", "choice", choices=("relu", "gelu")), Dim("L", "int", 1, 8), Dim("d", "int", 4, 64)))
IO = IOSpec(8, 8)


def toy_count(config):
    return config["L"] * config["d"] ** 2


def sqrt_front(depth: int = 2):
    """d = sqrt(N / L) at a fixed depth: the width grows as N^0.5."""
    d = np.array([8, 16, 32, 64])
    configs = [{"act": "gelu", "L": depth, "d": int(x)} for x in d]
    return [toy_count(c) for c in configs], configs


def test_a_sqrt_n_width_at_fixed_depth_is_extended_exactly_beyond_the_searched_range():
    params, configs = sqrt_front()
    p = propose_config("toy", TOY, IO, toy_count, params, configs, 2_000_000)
    assert p.config == {"act": "gelu", "L": 2, "d": 1000} and p.count == 2_000_000
    assert p.factor == pytest.approx(1.0, abs=1e-3)  # the largest factor that still rounds to 1000
    assert "L = 2 (the same on every front configuration)" in p.notes
    assert "d=1000 is above the searched range (at most 64)" in p.notes
    below = propose_config("toy", TOY, IO, toy_count, params, configs, 1_999_999)
    assert below.config["d"] == 999 and below.count <= 1_999_999  # the width shrinks, the depth stays


def test_a_step_is_kept_and_the_count_stays_within_the_target():
    stepped = Space("toy", (Dim("L", "int", 1, 8), Dim("d", "int", 8, 64, step=8)))
    params, configs = sqrt_front()
    p = propose_config(
        "toy", stepped, IO, toy_count, params, [{k: c[k] for k in ("L", "d")} for c in configs], 1_500_000
    )
    assert p.config["d"] % 8 == 0 and p.count == toy_count(p.config) <= 1_500_000
    assert toy_count({"L": 2, "d": p.config["d"] + 8}) > 1_500_000  # the largest step that fits


def test_the_hourglass_proposal_is_a_valid_model_whose_count_is_its_own():
    io = IOSpec(64, 64)
    fam, space = get_family("hourglass"), default_space("hourglass", io)
    configs = [{"fixed_w_in": False, "L": 2, "d_z": z, "d_h": z // 4, "lr": 1e-3} for z in (80, 120, 180, 270, 400)]
    params = [fam.count_params(c, io) for c in configs]
    target = 3 * max(params)
    p = propose_config("hourglass", space, io, lambda c: fam.count_params(c, io), params, configs, target)
    assert p.count <= target and p.count > 0.95 * target
    assert p.count == fam.count_params(p.config, io) == trainable_params(fam.build(p.config, io))
    assert fam.shape_violation(p.config, io) is None and p.config["L"] == 2
    assert p.config["d_z"] / p.config["d_h"] == pytest.approx(4, rel=0.02)
    row = proposals_frame([p]).iloc[0]
    assert row["params"] == p.count and "d_z ~ N^" in row["trends"] and row["config"] == p.config


def test_the_transformer_proposal_keeps_its_head_width_and_aspect_rules():
    io = get_task("lm-shakespeare").io()
    fam, space = get_family("transformer"), default_space("transformer", io)
    configs = [
        {"tied": False, "qk_norm": False, "lr": 1e-3, "K": 1, "n_heads": h, "d_model": 64 * h, "L": h, "d_h": 192 * h}
        for h in (1, 2, 3, 4, 6)
    ]
    params = [fam.count_params(c, io) for c in configs]
    p = propose_config("transformer", space, io, lambda c: fam.count_params(c, io), params, configs, 1e9)
    assert p.count == fam.count_params(p.config, io) <= 1e9 and p.count > 0.9e9
    assert p.config["d_model"] == 64 * p.config["n_heads"] and check_config(space, io, p.config) is None
    assert {t.key: round(t.slope, 2) for t in p.trends if t.kind == "power"}["d_model"] == pytest.approx(0.33, abs=0.02)


def test_one_front_point_scales_its_widths_and_says_no_trend_was_fitted():
    p = propose_config("toy", TOY, IO, toy_count, [128], [{"act": "relu", "L": 2, "d": 8}], 20_000)
    assert p.config == {"act": "relu", "L": 2, "d": 100} and p.count == 20_000
    assert p.front_points == 1 and "d = 8 (1 front points (a trend needs 3); the largest one's)" in p.notes
    assert "widths scaled by 12.6 from the trends' readings to count within the target" in p.notes


def test_a_front_deepening_at_its_narrowest_widths_scales_its_depth_to_fit_a_larger_budget():
    """A digits hourglass front at its narrowest widths (d_z 65, d_h 4) with the depth rising
    along it: read at 60K, the depth trend (L ~ N^1.9) would count above 60K even at the
    narrowest widths; the proposal scales the depth down to the deepest model that fits."""
    io = IOSpec(64, 64)
    fam, space = get_family("hourglass"), default_space("hourglass", io)
    configs = [{"fixed_w_in": False, "L": L, "d_z": 65, "d_h": 4, "lr": 1e-3} for L in (10, 20, 30)]
    params = [fam.count_params(c, io) for c in configs]
    target = 60_000
    p = propose_config("hourglass", space, io, lambda c: fam.count_params(c, io), params, configs, target)
    assert p.config is not None and p.count == fam.count_params(p.config, io) <= target
    assert (p.config["d_z"], p.config["d_h"]) == (65, 4) and p.config["L"] > 30
    assert fam.count_params({**p.config, "L": p.config["L"] + 1}, io) > target  # the deepest that fits
    assert any(n.startswith("depths scaled by") for n in p.notes)


@pytest.mark.parametrize(
    "params,configs,target,note",
    [
        ([10, 20, 40], [{"i": 1}, {"i": 2}, {"i": 3}], 1e6, "the front's configurations lack L, d"),
        (
            [64 * 8, 64 * 8],
            [{"L": 8, "d": 8}, {"L": 8, "d": 8}],
            10,
            "no configuration fits the budget, even at the narrowest widths and the shallowest depths",
        ),
        ([], [], 1e6, "no complete trials"),
    ],
)
def test_no_configuration_says_why(params, configs, target, note):
    p = propose_config("toy", TOY, IO, toy_count, params, configs, target)
    assert p.config is None and p.count is None and any(note in n for n in p.notes)


def test_place_rounds_into_the_constraints_and_skips_a_choice_they_forbid():
    space = Space(
        "toy", (Dim("d", "int", 4, 64), Dim("h", "int", 4, 64)), get_family("hourglass").shape_rules[1:]
    )  # h < d: here d_h < d_z
    renamed = Space("toy", (Dim("d_z", "int", 4, 64), Dim("d_h", "int", 4, 64)), space.constraints)
    assert place(renamed, IO, {"d_z": 100.4, "d_h": 500.0}) == {"d_z": 100, "d_h": 99}
    assert place(renamed, IO, {"d_z": 100.4, "d_h": 500.0}, factor=0.5) == {"d_z": 50, "d_h": 49}
