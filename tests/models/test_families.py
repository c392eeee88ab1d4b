"""Every family in the registry: builds, runs forward/backward, counts exactly."""

import random

import pytest
import torch

from core.errors import UserError
from core.io import IOSpec
from models import get_family, trainable_params

IOS = [
    IOSpec(784, 784, "image"),
    IOSpec(196, 784, "image"),
    IOSpec(64, 64, "image"),
    IOSpec(16, 64, "image"),
    IOSpec(64, 10, "logits"),
]


def random_config(rng: random.Random) -> dict:
    return {
        "d_z": rng.randint(1, 300),
        "d_h": rng.randint(1, 300),
        "L": rng.randint(1, 6),
        "fixed_w_in": rng.random() < 0.5,
    }


MLP_FAMILIES = ["hourglass", "conventional"]


@pytest.mark.parametrize("family", MLP_FAMILIES)
def test_count_params_matches_built_model_over_random_configs(family):
    fam, rng = get_family(family), random.Random(0)
    for _ in range(60):
        io, cfg = rng.choice(IOS), random_config(rng)
        assert fam.count_params(cfg, io) == trainable_params(fam.build(cfg, io, seed=1)), (cfg, io)


@pytest.mark.parametrize("family", MLP_FAMILIES)
def test_paper_formula(family):
    io = IOSpec(784, 784, "image")
    d_z, d_h, L = 1150, 115, 10
    cfg = {"d_z": d_z, "d_h": d_h, "L": L}
    assert get_family(family).count_params(cfg, io) == 784 * d_z + 2 * L * d_z * d_h + d_z * 784
    assert get_family(family).count_params(dict(cfg, fixed_w_in=True), io) == 2 * L * d_z * d_h + d_z * 784


@pytest.mark.parametrize("family", MLP_FAMILIES)
@pytest.mark.parametrize("io", IOS, ids=lambda io: f"{io.d_in}-{io.d_out}-{io.output}")
def test_forward_backward(family, io):
    torch.manual_seed(0)
    model = get_family(family).build({"d_z": 96, "d_h": 24, "L": 3}, io)
    x = torch.rand(8, io.d_in)
    y = model(x)
    assert y.shape == (8, io.d_out) and torch.isfinite(y).all()
    if io.output == "image":
        assert ((y > 0) & (y < 1)).all()  # sigmoid output
    y.square().mean().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())


def test_paper_details_bias_free_and_affine_free_bn():
    model = get_family("hourglass").build({"d_z": 100, "d_h": 10, "L": 2}, IOSpec(64, 64))
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)]
    assert len(linears) == 2 + 2 * 2 and all(m.bias is None for m in linears)
    assert len(norms) == 2 and all(not m.affine for m in norms)


def test_fixed_w_in_is_frozen_and_regenerated_from_seed():
    fam, io = get_family("hourglass"), IOSpec(64, 64)
    cfg = {"d_z": 100, "d_h": 10, "L": 1, "fixed_w_in": True}
    a, b, c = fam.build(cfg, io, seed=3), fam.build(cfg, io, seed=3), fam.build(cfg, io, seed=4)
    assert torch.equal(a.w_in_fixed, b.w_in_fixed) and not torch.equal(a.w_in_fixed, c.w_in_fixed)
    assert all(p is not a.w_in_fixed for p in a.parameters())
    x = torch.rand(4, 64)
    a.train()
    a(x).sum().backward()  # W_in receives no gradient: it is a buffer
    assert "w_in_fixed" in dict(a.named_buffers())


def test_shape_rules():
    io = IOSpec(784, 784)
    hg, conv = get_family("hourglass"), get_family("conventional")
    assert hg.shape_violation({"d_z": 1000, "d_h": 50, "L": 1}, io) is None
    assert "d_z > d_x" in hg.shape_violation({"d_z": 500, "d_h": 50, "L": 1}, io)
    assert "d_h < d_z" in hg.shape_violation({"d_z": 1000, "d_h": 1000, "L": 1}, io)
    assert conv.shape_violation({"d_z": 256, "d_h": 1024, "L": 1}, io) is None
    assert "d_h > d_z" in conv.shape_violation({"d_z": 256, "d_h": 100, "L": 1}, io)


@pytest.mark.parametrize(
    "bad",
    [
        {"d_z": 0, "d_h": 1, "L": 1},
        {"d_z": 10, "d_h": 1.5, "L": 1},
        {"d_z": 10, "d_h": 5},
        {"d_z": 10, "d_h": 5, "L": 1, "fixed_w_in": "yes"},
    ],
)
def test_invalid_configs_are_user_errors(bad):
    with pytest.raises(UserError):
        get_family("hourglass").count_params(bad, IOSpec(8, 8))


def test_unknown_family_lists_known():
    with pytest.raises(UserError, match="hourglass"):
        get_family("resnet")


def test_the_old_module_name_is_the_registry_itself():
    """`models.registry` (the module's name until 2026-12-06) is kept as an alias."""
    import models
    import models.registry
    from models.registry import FAMILIES, register_family

    assert models.registry is models.families and FAMILIES is models.FAMILIES
    assert register_family is models.register_family
