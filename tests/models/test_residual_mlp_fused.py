"""The fused residual MLP (models/residual_mlp_fused.py): K members of any widths and
depths padded into one batched program compute each member's own function, and every
padded weight gets a zero gradient (so training never moves it)."""

import pytest
import torch

import models
from core.io import IOSpec

IO = IOSpec(d_in=16, d_out=16, output="image")
CONFIGS = [{"d_z": 24, "d_h": 4, "L": 3}, {"d_z": 20, "d_h": 6, "L": 5}, {"d_z": 32, "d_h": 2, "L": 1}]


def members(family, configs, io=IO):
    fam = models.get_family(family)
    built = []
    for seed, c in enumerate(configs):
        torch.manual_seed(seed)
        built.append(fam.build(c, io, seed=seed))
    return fam, built


@pytest.mark.parametrize(
    "family,configs,io",
    [
        ("hourglass", CONFIGS, IO),
        ("hourglass", [{**c, "fixed_w_in": True} for c in CONFIGS], IO),
        (
            "conventional",
            [{"d_z": 8, "d_h": 20, "L": 2}, {"d_z": 12, "d_h": 30, "L": 4}],
            IOSpec(d_in=16, d_out=10, output="logits"),
        ),
        ("conventional-noproj", [{"d_z": 16, "d_h": 20, "L": 2}, {"d_z": 16, "d_h": 40, "L": 3}], IO),
    ],
)
@pytest.mark.parametrize("training", [True, False])
def test_each_member_computes_its_own_network(family, configs, io, training):
    fam, built = members(family, configs, io)
    fused = fam.fuse(built, configs, io)
    for m in built:
        m.train(training)
    fused.train(training)
    x = torch.randn(len(built), 7, io.d_in)
    y = fused(x)
    assert y.shape == (len(built), 7, io.d_out)
    for k, m in enumerate(built):
        torch.testing.assert_close(y[k], m(x[k]), rtol=1e-5, atol=1e-6)
    if training:  # the batch statistics moved as the members' own did
        fused.write_members()
        again = members(family, configs, io)[1]
        for k, m in enumerate(again):
            m.train()(x[k])
            for a, b in zip(m.state_dict().values(), built[k].state_dict().values()):
                torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_hourglass_and_conventional_members_fuse_in_one_pack():
    configs = [{"d_z": 24, "d_h": 4, "L": 3}, {"d_z": 12, "d_h": 30, "L": 2}]
    built = []
    for seed, (name, c) in enumerate(zip(("hourglass", "conventional"), configs)):
        torch.manual_seed(seed)
        built.append(models.get_family(name).build(c, IO, seed=seed))
    fused = models.get_family("hourglass").fuse(built, configs, IO)
    assert (fused.D, fused.H, fused.L) == (24, 30, 3)
    x = torch.randn(2, 7, 16)
    y = fused(x)
    for k, m in enumerate(built):
        torch.testing.assert_close(y[k], m(x[k]), rtol=1e-5, atol=1e-6)


def test_padded_weights_get_no_gradient_and_stay_zero():
    fam, built = members("hourglass", CONFIGS)
    fused = fam.fuse(built, CONFIGS, IO)
    fused(torch.randn(3, 9, 16)).square().sum().backward()
    for k, c in enumerate(CONFIGS):
        for i in range(fused.L):
            g1, g2 = fused.w1[i].grad[k], fused.w2[i].grad[k]
            live = i < c["L"]
            assert (g1[c["d_h"] :].abs().sum() + g1[:, c["d_z"] :].abs().sum()) == 0
            assert (g2[c["d_h"] :].abs().sum() + g2[:, c["d_z"] :].abs().sum()) == 0
            assert (g1.abs().sum() > 0) == live  # a padded block is the identity
        assert fused.w_in.grad[k][:, c["d_z"] :].abs().sum() == 0
        assert fused.w_out.grad[k][c["d_z"] :].abs().sum() == 0


def test_write_members_copies_the_stacked_state_back():
    fam, built = members("hourglass", CONFIGS)
    fused = fam.fuse(built, CONFIGS, IO)
    with torch.no_grad():
        for p in fused.parameters():
            p.add_(1.0)
    fused.write_members()
    assert torch.equal(built[1].blocks[4].up.weight, fused.w1[4][1, :6, :20])
    assert torch.equal(built[2].w_out.weight, fused.w_out[2, :32].t())


def test_families_that_fuse_and_those_that_do_not():
    """The residual MLPs fuse (any widths and depths, one key per input projection kind),
    HanNet and FCNet identical shapes (tests/models/test_han_fused.py); the others train
    one model at a time (fusion_key None)."""
    io = IOSpec(d_in=64, d_out=64, output="image")
    hg = models.get_family("hourglass")
    assert hg.fusion_key({"d_z": 80, "d_h": 4, "L": 2}, io) == hg.fusion_key({"d_z": 99, "d_h": 9, "L": 7}, io)
    assert hg.fusion_key({"d_z": 80, "d_h": 4, "L": 2}, io) != hg.fusion_key(
        {"d_z": 80, "d_h": 4, "L": 2, "fixed_w_in": True}, io
    )
    conv = models.get_family("conventional")
    # one family a pack (a mixed pack pads each member to the other shape's wide side)
    assert conv.fusion_key({"d_z": 40, "d_h": 90, "L": 3}, io) != hg.fusion_key({"d_z": 80, "d_h": 4, "L": 2}, io)
    noproj = models.get_family("conventional-noproj")
    assert noproj.fusion_key({"d_z": 64, "d_h": 90, "L": 3}, io) != conv.fusion_key({"d_z": 64, "d_h": 90, "L": 3}, io)
    fusing = {
        name
        for name in models.FAMILIES.names()
        if models.get_family(name).fusion_key.__func__ is not models.base.Family.fusion_key
    }
    assert fusing == {"hourglass", "conventional", "conventional-noproj", "conventional-narrow", "han", "fcnet"}
