"""The U-shaped diffusion families' exact parameter counts (by hand and against the built
model), their presets and their one-line errors (the rest: tests/models/test_ubackbone.py)."""

import random

import pytest

from core.errors import UserError
from core.io import IOSpec
from models import get_family, trainable_params
from tests.models.test_ubackbone import CIFAR, DIGITS, FAMILIES, MNIST, PRESETS, WIDE


def test_count_formulas_by_hand():
    """MNIST, patch 4 (N = 49, L = 51), D = 64, h = 256, depth 5, 10 classes."""
    D, h, L, p, K, depth = 64, 256, 51, 4, 10, 5  # (N = 49 patches: L - 2)
    cfg = {"D": D, "depth": depth, "patch": p, "mlp_ratio": 4, "skip": "add"}
    shared = (p * p * D + D) + (K + 1) * D + L * D + (2 * D + D * p * p + p * p + 9 + 1)
    mlp_p = 2 * D * h + h + D
    blocks = {
        "lmlp": 2 * D * D + 2 * D * h + h + 5 * D + L * L + 3 * L,
        "uvit": 4 * D * D + 2 * D * h + h + 6 * D,
        "mixer-block": 4 * D + (2 * L * 102 + 102 + L) + mlp_p,  # h_t = int(2 * 51)
    }
    for family, block in blocks.items():
        fam = get_family(family)
        assert fam.count_params(cfg, MNIST) == shared + depth * block, family
        concat = dict(cfg, skip="concat")
        assert fam.count_params(concat, MNIST) == shared + depth * block + 2 * (2 * D * D + D), family
    lmlp = get_family("lmlp")
    assert lmlp.count_params(dict(cfg, mlp_norm="separate"), MNIST) == shared + depth * (blocks["lmlp"] + 2 * D)
    parts = lmlp.param_breakdown(cfg, MNIST)
    assert parts["token mixing (in blocks)"] == depth * (L * L + 3 * L)
    assert sum(v for k, v in parts.items() if k != "token mixing (in blocks)") == lmlp.count_params(cfg, MNIST)
    # each family's default long skip: U-ViT's concat for uvit, the L-MLP code's add otherwise
    plain = {k: v for k, v in cfg.items() if k != "skip"}
    assert get_family("uvit").count_params(plain, MNIST) == get_family("uvit").count_params(
        dict(cfg, skip="concat"), MNIST
    )
    assert lmlp.count_params(plain, MNIST) == lmlp.count_params(cfg, MNIST)
    assert get_family("mixer-block").count_params(plain, MNIST) == get_family("mixer-block").count_params(cfg, MNIST)


def random_config(family, rng):
    io = rng.choice([MNIST, DIGITS, CIFAR, WIDE])
    _, h, w = io.input_shape
    patch = rng.choice([p for p in range(1, 9) if h % p == 0 and w % p == 0 and (h // p) * (w // p) <= 200])
    cfg = {
        "D": rng.randint(2, 48),
        "depth": rng.choice([1, 3, 5, 7]),
        "patch": patch,
        "mlp_ratio": rng.choice([0.5, 1, 1.7, 2, 3.3, 4]),
        "skip": rng.choice(["add", "concat"]),
    }
    if family == "lmlp":
        cfg["mlp_norm"] = rng.choice(["shared", "separate"])
        cfg["residual"] = rng.choice(["normed", "input"])
    elif family == "uvit":
        cfg["head_dim"] = rng.choice([4, 8, 16, 64])
        heads = max(1, cfg["D"] // cfg["head_dim"])
        cfg["D"] -= cfg["D"] % heads
    elif rng.random() < 0.5:
        cfg["token_mlp_ratio"] = rng.choice([0.3, 1, 2.5])
    return cfg, io


@pytest.mark.parametrize("family", FAMILIES)
def test_count_params_matches_built_model_over_random_configs(family):
    fam, rng = get_family(family), random.Random(family)
    for _ in range(40):
        cfg, io = random_config(family, rng)
        assert fam.count_params(cfg, io) == trainable_params(fam.build(cfg, io, seed=1)), (cfg, io.input_shape)


@pytest.mark.parametrize("family", FAMILIES)
def test_counts_grow_with_width_depth_and_mlp_ratio(family):
    fam = get_family(family)
    base = {"D": 64, "depth": 3, "patch": 4, "mlp_ratio": 2}
    for key, values in [("D", [32, 64, 96, 128, 192]), ("depth", [1, 3, 5, 7]), ("mlp_ratio", [1, 2, 4])]:
        counts = [fam.count_params(dict(base, **{key: v}), MNIST) for v in values]
        assert all(a < b for a, b in zip(counts, counts[1:])), key


def test_mixer_block_token_hidden_defaults_to_half_the_mlp_ratio():
    fam = get_family("mixer-block")
    model = fam.build({"D": 32, "depth": 1, "patch": 4, "mlp_ratio": 4}, MNIST)  # L = 51
    assert model.mid_block.token_mlp.fc1.out_features == 102 and model.mid_block.mlp.fc1.out_features == 128
    model = fam.build({"D": 32, "depth": 1, "patch": 4, "mlp_ratio": 4, "token_mlp_ratio": 0.5}, MNIST)
    assert model.mid_block.token_mlp.fc1.out_features == 25


def test_presets_are_valid():
    for family, presets in PRESETS.items():
        for name, cfg in presets.items():
            io = CIFAR if name.startswith("cifar") else DIGITS if name.startswith("digits") else MNIST
            assert get_family(family).count_params(cfg, io) > 0
            assert get_family(family).shape_violation(cfg, io) is None


# ---------------------------------------------------------------- errors and fits


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(
    "cfg,io,match",
    [
        ({"D": 32, "depth": 4, "patch": 4}, MNIST, "depth must be odd"),
        ({"D": 32, "depth": 3, "patch": 3}, MNIST, "does not tile"),
        ({"D": 32, "depth": 3, "patch": 5}, CIFAR, "does not tile"),
        ({"D": 0, "depth": 3, "patch": 4}, MNIST, "D must be a positive integer"),
        ({"D": 32, "depth": 3}, MNIST, "missing patch"),
        ({"D": 32, "depth": 3, "patch": 4, "mlp_ratio": 0}, MNIST, "mlp_ratio"),
        ({"D": 32, "depth": 3, "patch": 4, "mlp_ratio": 0.01}, MNIST, "empty MLP"),
        ({"D": 32, "depth": 3, "patch": 4, "skip": "mul"}, MNIST, "skip must be"),
        ({"D": 32, "depth": 3, "patch": 4}, IOSpec(64, 10, "logits", None, (1, 8, 8)), "class-conditional"),
        ({"D": 32, "depth": 3, "patch": 4}, IOSpec(64, 64, "noise"), "image inputs"),
    ],
)
def test_invalid_configs_are_one_line_user_errors(family, cfg, io, match):
    fam = get_family(family)
    for call in (fam.count_params, fam.build, fam.param_breakdown):
        with pytest.raises(UserError, match=match) as e:
            call(cfg, io)
        assert "\n" not in str(e.value)
    assert match in fam.shape_violation(cfg, io)


def test_family_specific_errors():
    uvit = get_family("uvit")
    for D in (129, 224, 480):  # 2, 3 and 7 heads of head_dim 64 do not divide D
        with pytest.raises(UserError, match="not divisible by its n_heads") as e:
            uvit.count_params({"D": D, "depth": 3, "patch": 4}, MNIST)
        assert "\n" not in str(e.value)
    assert "n_heads" in uvit.shape_violation({"D": 224, "depth": 3, "patch": 4}, MNIST)
    assert uvit.shape_violation({"D": 96, "depth": 3, "patch": 4}, MNIST) is None  # one head of 96
    assert uvit.build({"D": 320, "depth": 1, "patch": 7}, MNIST).mid_block.attn.n_heads == 5
    with pytest.raises(UserError, match="mlp_norm"):
        get_family("lmlp").count_params({"D": 32, "depth": 3, "patch": 4, "mlp_norm": "none"}, MNIST)
    with pytest.raises(UserError, match="residual"):
        get_family("lmlp").count_params({"D": 32, "depth": 3, "patch": 4, "residual": "post"}, MNIST)
    with pytest.raises(UserError, match="token_mlp_ratio"):
        get_family("mixer-block").count_params({"D": 32, "depth": 3, "patch": 4, "token_mlp_ratio": -1}, MNIST)
