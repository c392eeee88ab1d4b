"""Han layers: O(d) Householder reflection, orthogonal Jacobian, 1-Lipschitz, stable
gradients through depth; HanNet and Han-Mixer structure and counts."""

import pytest
import torch
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models import get_family, trainable_params
from models.han_layer import HanLayer, householder


def han(d, seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    layer = HanLayer(d).to(dtype)
    with torch.no_grad():
        layer.u.normal_()  # any direction, not only the initial one
        layer.bias.normal_()
    return layer


@pytest.mark.parametrize("d", [1, 2, 7, 64])
def test_matches_the_dense_householder_formula(d):
    layer = han(d)
    x = torch.randn(5, d, dtype=torch.float64)
    u = layer.u.detach()
    H = torch.eye(d, dtype=torch.float64) - 2 * torch.outer(u, u) / u.dot(u)
    assert torch.allclose(layer(x), (x @ H.T + layer.bias).abs(), atol=1e-12)
    assert torch.allclose(householder(householder(x, u), u), x, atol=1e-12)  # H is an involution
    assert trainable_params(layer) == 2 * d


@pytest.mark.parametrize("d", [3, 16, 50])
def test_jacobian_is_orthogonal_at_random_inputs(d):
    layer = han(d, seed=d)
    eye = torch.eye(d, dtype=torch.float64)
    for i in range(10):
        x = torch.randn(d, dtype=torch.float64, generator=torch.Generator().manual_seed(i)) * 3
        J = torch.autograd.functional.jacobian(layer, x)
        assert torch.allclose(J.T @ J, eye, atol=1e-10)
        assert torch.allclose(J @ J.T, eye, atol=1e-10)


def test_one_lipschitz():
    layer = han(32, seed=1)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2000, 32, dtype=torch.float64, generator=g)
    y = x + torch.randn(2000, 32, dtype=torch.float64, generator=g) * torch.rand(
        2000, 1, dtype=torch.float64, generator=g
    )
    with torch.no_grad():
        ratio = (layer(x) - layer(y)).norm(dim=1) / (x - y).norm(dim=1)
    assert ratio.max() <= 1 + 1e-12
    assert ratio.max() > 0.99  # tight: near-equality where no sign flips


def test_gradient_norm_is_preserved_through_100_han_layers_but_not_dense_relu():
    torch.manual_seed(0)
    d = 64
    stack = nn.Sequential(*(HanLayer(d) for _ in range(100))).double()
    dense = nn.Sequential(*(m for _ in range(100) for m in (nn.Linear(d, d), nn.ReLU()))).double()
    for net in (stack, dense):
        x = torch.randn(16, d, dtype=torch.float64, requires_grad=True)
        out = net(x)
        g_out = torch.randn_like(out)
        (g_in,) = torch.autograd.grad(out, x, g_out)
        ratio = g_in.norm(dim=1) / g_out.norm(dim=1)
        if net is stack:  # orthogonal Jacobians: exactly norm-preserving, per sample
            assert torch.allclose(ratio, torch.ones_like(ratio), atol=1e-9)
            # the same in float32 (what training uses): neither vanishes nor explodes
            x32 = x.detach().float().requires_grad_()
            out32 = stack.float()(x32)
            (g32,) = torch.autograd.grad(out32, x32, g_out.float())
            r32 = g32.norm(dim=1) / g_out.float().norm(dim=1)
            assert ((r32 > 0.999) & (r32 < 1.001)).all()
            stack.double()
        else:  # PyTorch's default dense init + ReLU: the gradient vanishes
            assert ratio.max() < 1e-6


def test_parameter_gradients_reach_the_first_of_100_layers():
    torch.manual_seed(0)
    fam, io = get_family("han"), IOSpec(2, 2, "logits")
    model = fam.build({"width": 30, "depth": 100}, io)
    out = model(torch.rand(64, 2) * 2 - 1)
    nn.functional.cross_entropy(out, torch.randint(0, 2, (64,))).backward()
    first, last = model.layers[0].bias.grad.norm(), model.layers[-1].bias.grad.norm()
    assert 0.05 < float(first / last) < 20


def test_hannet_structure_count_and_init():
    fam, io = get_family("han"), IOSpec(2, 2, "logits")
    cfg = {"width": 30, "depth": 20}  # the authors' checkerboard HanNet
    model = fam.build(cfg, io)
    assert fam.count_params(cfg, io) == trainable_params(model) == 2 * 30 + 30 + 20 * 60 + 30 * 2 + 2
    assert sum(isinstance(m, HanLayer) for m in model.modules()) == 20
    assert sum(isinstance(m, nn.Linear) for m in model.modules()) == 2
    w = model.w_in.weight  # orthogonal init: orthonormal columns (30 x 2)
    assert torch.allclose(w.T @ w, torch.eye(2), atol=1e-5)
    assert all(torch.isclose(m.u.norm(), torch.tensor(1.0)) for m in model.layers)
    breakdown = fam.param_breakdown(cfg, io)
    assert breakdown["han layers"] == 1200 and breakdown["dense equivalent of the han layers"] == 20 * 930
    img = fam.build(cfg, IOSpec(64, 64, "image"))(torch.rand(3, 64))
    assert ((img > 0) & (img < 1)).all()  # sigmoid for image outputs


def test_han_mixer_blocks_have_no_norm_and_no_residual():
    fam, io = get_family("han-mixer"), IOSpec(64, 10, "logits", None, (1, 8, 8))
    cfg = {"C": 8, "L": 3, "patch": 2}
    torch.manual_seed(0)
    model = fam.build(cfg, io)
    assert fam.count_params(cfg, io) == trainable_params(model) == 4 * 8 + 8 + 3 * 4 * (16 + 8) + 2 * 8 + 8 * 10 + 10
    assert sum(isinstance(m, nn.LayerNorm) for m in model.modules()) == 1  # only before the head
    block = model.blocks[0]
    x = torch.randn(5, 16, 8)
    y = block(x)
    assert (y >= 0).all()  # |.| activation last, no residual added
    t = block.token_mix(x.transpose(1, 2)).transpose(1, 2)
    assert torch.equal(y, block.channel_mix(t))
    with_mixer = dict(cfg, mixer_L=2, gamma=2)
    m2 = fam.build(with_mixer, io)
    assert fam.count_params(with_mixer, io) == trainable_params(m2)
    assert sum(isinstance(m, nn.LayerNorm) for m in m2.modules()) == 1 + 2 * 2


@pytest.mark.parametrize(
    "family,bad",
    [
        ("han", {"width": 0, "depth": 3}),
        ("han", {"width": 8}),
        ("han", {"width": 8, "depth": 2.5}),
        ("han-mixer", {"C": 8, "L": 1, "patch": 3}),
        ("han-mixer", {"C": 8, "L": 1, "patch": 2, "mixer_L": -1}),
    ],
)
def test_bad_configs_are_user_errors(family, bad):
    with pytest.raises(UserError):
        get_family(family).count_params(bad, IOSpec(64, 10, "logits", None, (1, 8, 8)))


def test_hannet_without_input_layer_is_the_papers_40k_mnist_net():
    """Yu & Zhang's MNIST HanNet (about 40K parameters) has no dense input layer: the Han
    layers act on the 784 pixels. 20 of them and the dense 784 -> 10 output: 39,210."""
    from models.han import PRESETS

    mnist = IOSpec(784, 10, output="logits")
    fam = get_family("han")
    cfg = PRESETS["mnist-paper"]
    n = fam.count_params(cfg, mnist)
    assert n == 20 * 2 * 784 + 784 * 10 + 10 == 39_210
    model = fam.build(cfg, mnist)
    assert n == sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert model(torch.rand(3, 784)).shape == (3, 10)
    with pytest.raises(UserError, match="input_layer false needs width = d_x = 784"):
        fam.count_params({"input_layer": False, "width": 200, "depth": 20}, mnist)
    assert fam.count_params(PRESETS["regression-200"], IOSpec(8, 1, output="regression")) == (
        8 * 200 + 200 + 20 * 400 + 200 + 1
    )


def test_han_mixers_mixer_blocks_are_square_by_default():
    """The authors' CnnStemHanMixer builds its Mixer blocks with channels_mlp_dim equal to
    the hidden width (image_experiments/train.py): expansion gamma 1, the default here."""
    from search.spaces import default_space

    io = IOSpec(64, 10, output="logits", input_shape=(1, 8, 8))
    assert default_space("han-mixer", io).dim("gamma").choices == (1,)
    fam = get_family("han-mixer")
    cfg = {"patch": 2, "mixer_L": 1, "L": 1, "C": 16}
    assert fam.count_params(cfg, io) < fam.count_params(dict(cfg, gamma=4), io)


def test_default_activation_is_abs_and_leaves_the_net_unchanged():
    """`activation` defaults to "abs": the same parameters, initial values and outputs as
    the HanNet without the key."""
    fam, io = get_family("han"), IOSpec(2, 2, "logits")
    torch.manual_seed(0)
    plain = fam.build({"width": 30, "depth": 5}, io)
    torch.manual_seed(0)
    explicit = fam.build({"width": 30, "depth": 5, "activation": "abs"}, io)
    x = torch.randn(9, 2)
    assert torch.equal(plain(x), explicit(x))
    assert (
        fam.count_params({"width": 30, "depth": 5, "activation": "abs"}, io)
        == fam.count_params({"width": 30, "depth": 5}, io)
        == trainable_params(plain)
    )


@pytest.mark.parametrize("activation", ["relu", "maxmin", "groupsort"])
def test_table3_householder_rows_with_other_activations(activation):
    """Table 3 rows (b)-(d): Householder layers with ReLU, MaxMin, GroupSort(5) instead of
    ABS, after the input layer and in every Han layer; the count does not change."""
    from models.activations import make_activation

    fam, io = get_family("han"), IOSpec(2, 2, "logits")
    cfg = {"width": 100, "depth": 20, "activation": activation}
    torch.manual_seed(0)
    model = fam.build(cfg, io)
    assert fam.count_params(cfg, io) == trainable_params(model) == fam.count_params({"width": 100, "depth": 20}, io)
    act = make_activation(activation, 100)
    layer = model.layers[3]
    h = torch.randn(6, 100)
    u = layer.u.detach()
    H = torch.eye(100) - 2 * torch.outer(u, u) / u.dot(u)
    assert torch.allclose(layer(h), act(h @ H.T + layer.bias), atol=1e-5)
    x = torch.randn(6, 2)
    assert torch.allclose(model.act_in(model.w_in(x)), act(model.w_in(x)))
    if activation != "relu":  # the sorting activations keep the Han layer's Jacobian orthogonal
        torch.manual_seed(1)
        single = HanLayer(10, activation=activation).double()
        J = torch.autograd.functional.jacobian(single, torch.randn(10, dtype=torch.float64))
        assert torch.allclose(J.T @ J, torch.eye(10, dtype=torch.float64), atol=1e-10)


def test_han_activation_group_size_must_divide_the_width():
    fam, io = get_family("han"), IOSpec(2, 2, "logits")
    assert fam.count_params({"width": 30, "depth": 2, "activation": "groupsort"}, io) > 0
    with pytest.raises(UserError, match="multiple of 2, got 31"):
        fam.count_params({"width": 31, "depth": 2, "activation": "maxmin"}, io)
    with pytest.raises(UserError, match="multiple of 5, got 784"):  # no input layer: the width is d_x
        fam.count_params(
            {"input_layer": False, "width": 784, "depth": 2, "activation": "groupsort"}, IOSpec(784, 10, "logits")
        )
    with pytest.raises(UserError, match="unknown activation 'tanh'"):
        fam.count_params({"width": 30, "depth": 2, "activation": "tanh"}, io)


def test_dense_layers_authors_is_their_checkerboard_householder_net():
    """The authors' HouseholderNet([100]*20) (checkerboard_experiments/ann.py): a dense
    input layer, dense second and last hidden layers, 17 Han layers: 24,102 parameters,
    against 4,502 + ... for the all-Han net of the paper's description."""
    io = IOSpec(2, 2, "logits", None, (2,))
    fam = get_family("han")
    cfg = {"width": 100, "depth": 19, "dense_layers": "authors"}
    by_hand = (2 * 100 + 100) + 2 * (100 * 100 + 100) + 17 * (2 * 100) + (100 * 2 + 2)
    assert by_hand == 24_102 == fam.count_params(cfg, io)
    net = fam.build(cfg, io, seed=0)
    assert trainable_params(net) == 24_102
    kinds = ["dense" if isinstance(m, nn.Sequential) else "han" for m in net.layers]
    assert kinds == ["dense"] + ["han"] * 17 + ["dense"]
    for m in (net.layers[0][0], net.layers[-1][0]):  # orthogonal init, as every nn.Linear of theirs
        assert torch.allclose(m.weight @ m.weight.T, torch.eye(100), atol=1e-5)
    assert torch.isfinite(net(torch.randn(5, 2))).all()
    assert fam.param_breakdown(cfg, io)["dense hidden layers"] == 2 * 10_100
    one = {"width": 30, "depth": 1, "dense_layers": "authors"}  # [30]*2: both hidden layers dense
    assert fam.count_params(one, io) == trainable_params(fam.build(one, io)) == 90 + 930 + 62
    assert fam.count_params({"width": 100, "depth": 19}, io) == 300 + 19 * 200 + 202


@pytest.mark.parametrize(
    "cfg,match",
    [
        ({"width": 8, "depth": 3, "dense_layers": "some"}, "dense_layers must be one of none, authors"),
        ({"width": 2, "depth": 3, "dense_layers": "authors", "input_layer": False}, "needs the dense input layer"),
    ],
)
def test_dense_layers_bad_values_are_user_errors(cfg, match):
    with pytest.raises(UserError, match=match):
        get_family("han").count_params(cfg, IOSpec(2, 2, "logits", None, (2,)))
