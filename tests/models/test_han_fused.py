"""The fused HanNet and FCNet (models/han_fused.py, models/fcnet_fused.py): K members of
one shape as one batched program compute each member's own function and gradients, give
each its own regulariser, and write their state back into the members."""

import pytest
import torch

import models
from core.io import IOSpec

IO = IOSpec(d_in=16, d_out=10, output="logits")
CASES = [
    ("han", {"width": 12, "depth": 4}, IO),
    ("han", {"width": 16, "depth": 3, "input_layer": False}, IOSpec(d_in=16, d_out=16, output="image")),
    ("han", {"width": 10, "depth": 4, "dense_layers": "authors", "activation": "groupsort"}, IO),
    ("han", {"width": 8, "depth": 2, "activation": "maxmin"}, IOSpec(d_in=16, d_out=3, output="regression")),
    ("fcnet", {"width": 12, "depth": 3}, IO),
    ("fcnet", {"width": 10, "depth": 1, "activation": "abs"}, IOSpec(d_in=16, d_out=16, output="image")),
    ("fcnet", {"width": 8, "depth": 4, "orth_reg": 0.1, "init": "orthogonal"}, IO),
]


def members(family, config, io, k=3):
    fam = models.get_family(family)
    built = []
    for seed in range(k):
        torch.manual_seed(seed)
        built.append(fam.build(config, io, seed=seed))
    return fam, built


@pytest.mark.parametrize("family,config,io", CASES)
def test_each_member_computes_its_own_network_and_gradients(family, config, io):
    fam, built = members(family, config, io)
    fused = fam.fuse(built, [config] * 3, io)
    x = torch.randn(3, 7, io.d_in)
    y = fused(x)
    assert y.shape == (3, 7, io.d_out)
    y.square().sum().backward()
    for k, m in enumerate(built):
        out = m(x[k])
        torch.testing.assert_close(y[k], out, rtol=1e-5, atol=1e-6)
        out.square().sum().backward()
    fused_grads = {n: p.grad for n, p in fused.named_parameters()}
    # every member parameter's gradient sits in its slice of a stacked tensor
    assert sum(g.numel() for g in fused_grads.values()) == 3 * sum(p.numel() for p in built[0].parameters())
    total = sum(float(g.abs().sum()) for g in fused_grads.values())
    alone = sum(float(p.grad.abs().sum()) for m in built for p in m.parameters())
    assert total == pytest.approx(alone, rel=1e-4)


@pytest.mark.parametrize("family,config,io", CASES)
def test_write_members_copies_the_stacked_state_back(family, config, io):
    fam, built = members(family, config, io)
    fused = fam.fuse(built, [config] * 3, io)
    with torch.no_grad():
        for p in fused.parameters():
            p.add_(0.1 * torch.randn_like(p))
    x = torch.randn(3, 5, io.d_in)
    y = fused(x)
    fused.write_members()
    for k, m in enumerate(built):
        torch.testing.assert_close(m(x[k]), y[k], rtol=1e-5, atol=1e-6)


def test_each_fcnet_member_gets_its_own_orthogonal_penalty():
    config = {"width": 8, "depth": 4, "orth_reg": 0.1}
    fam, built = members("fcnet", config, IO)
    fused = fam.fuse(built, [config] * 3, IO)
    penalty = fused.member_regularization()
    assert penalty.shape == (3,)
    torch.testing.assert_close(penalty, torch.stack([m.regularization() for m in built]))
    assert len(set(penalty.tolist())) == 3  # the members' own weights, not one member's
    plain = {"width": 8, "depth": 4}
    fam, built = members("fcnet", plain, IO)
    assert fam.fuse(built, [plain] * 3, IO).member_regularization() is None


def test_only_identical_shapes_share_a_key_and_the_rate_is_each_members_own():
    han, fc = models.get_family("han"), models.get_family("fcnet")
    a = {"width": 12, "depth": 4}
    assert han.fusion_key(a, IO) == han.fusion_key({**a, "lr": 0.01, "weight_decay": 0.1}, IO)
    assert han.fusion_key(a, IO) == han.fusion_key({**a, "activation": "abs"}, IO)  # the default, spelt out
    assert han.fusion_key(a, IO) != han.fusion_key({**a, "depth": 5}, IO)
    assert han.fusion_key(a, IO) != fc.fusion_key(a, IO)
    assert fc.fusion_key(a, IO) != fc.fusion_key({**a, "orth_reg": 0.1}, IO)
