"""FCNet (Yu & Zhang, Sec. 4.2-4.3, Table 3): structure, depth convention, exact counts,
init, the shared activations (ReLU, ABS, MaxMin, GroupSort(5)) and the orthogonal
regulariser of OrthFC."""

import random

import pytest
import torch
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models import get_family, trainable_params
from models.activations import ACTIVATIONS, GroupSort, check_activation, make_activation
from models.fcnet import PRESETS

BOARD = IOSpec(2, 2, "logits", None, (2,))  # the checkerboard's io
SINES = IOSpec(2, 1, "regression", None, (2,))


def fcnet(cfg, io=BOARD, seed=0):
    torch.manual_seed(seed)
    return get_family("fcnet").build(cfg, io)


def test_table3_framework_count_by_hand():
    """Table 3's "100x20" FCNet on the checkerboard (d_x = 2, two outputs): the input
    layer 2 -> 100, 19 square 100 x 100 layers, the 100 -> 2 readout, all with biases."""
    fam, cfg = get_family("fcnet"), {"width": 100, "depth": 20}
    by_hand = (2 * 100 + 100) + 19 * (100 * 100 + 100) + (100 * 2 + 2)
    assert by_hand == 192_402
    assert fam.count_params(cfg, BOARD) == trainable_params(fcnet(cfg)) == 192_402
    assert fam.param_breakdown(cfg, BOARD) == {"input layer": 300, "hidden layers": 191_900, "output layer": 202}
    # the authors' checkerboard FCNet, nnstructurenet = [100]*6: 300 + 5 * 10,100 + 202
    assert fam.count_params(PRESETS["checkerboard-authors"], BOARD) == 300 + 5 * 10_100 + 202 == 51_002
    # Sec. 4.3's 200 x 20 on the sines (one output): 600 + 19 * 40,200 + 201
    assert fam.count_params(PRESETS["sines-paper"], SINES) == 600 + 19 * 40_200 + 201 == 764_601
    # depth 1: the input layer is the only hidden layer
    assert fam.count_params({"width": 30, "depth": 1}, BOARD) == 2 * 30 + 30 + 30 * 2 + 2 == 152


def test_count_matches_the_module_over_random_configs():
    fam, rng = get_family("fcnet"), random.Random(0)
    ios = [BOARD, SINES, IOSpec(64, 10, "logits"), IOSpec(16, 64, "image")]
    for _ in range(40):
        act = rng.choice(ACTIVATIONS.names())
        group = ACTIVATIONS.get(act).group
        cfg = {
            "width": group * rng.randint(1, 40),
            "depth": rng.randint(1, 8),
            "activation": act,
            "orth_reg": rng.choice([0.0, 0.1]),
            "init": rng.choice(["kaiming", "orthogonal"]),
        }
        io = rng.choice(ios)
        assert fam.count_params(cfg, io) == trainable_params(fam.build(cfg, io)), (cfg, io)


def test_depth_counts_hidden_layers_including_the_input_layer():
    """As the authors' `Net(nnstructure)`: depth Linear + activation layers, then the
    readout; no norm, no residual."""
    model = fcnet({"width": 10, "depth": 4})
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    assert len(linears) == 4 + 1
    assert [tuple(m.weight.shape) for m in linears] == [(10, 2), (10, 10), (10, 10), (10, 10), (2, 10)]
    assert all(m.bias is not None for m in linears)
    assert not any(isinstance(m, (nn.BatchNorm1d, nn.LayerNorm)) for m in model.modules())
    x = torch.randn(7, 2)
    h = torch.relu(linears[0](x))
    for m in linears[1:-1]:
        h = torch.relu(m(h))  # plain chain: no skip connection
    assert torch.allclose(model(x), linears[-1](h))


def test_image_outputs_are_sigmoid():
    y = fcnet({"width": 8, "depth": 2}, IOSpec(16, 64, "image"))(torch.rand(3, 16))
    assert y.shape == (3, 64) and ((y > 0) & (y < 1)).all()


def test_kaiming_init_is_the_authors_and_orthogonal_is_an_option():
    """Authors' README: `main.py --model fcnet --activation ReLU --initial kaiming`:
    kaiming_normal_ (fan-in, gain sqrt 2) on every nn.Linear weight."""
    model = fcnet({"width": 200, "depth": 3})
    w = torch.cat([m.weight.detach().flatten() for m in model.hidden])
    assert abs(float(w.std()) - (2 / 200) ** 0.5) < 0.005 and abs(float(w.mean())) < 0.005
    orth = fcnet({"width": 50, "depth": 3, "init": "orthogonal"})
    for m in orth.hidden:
        assert torch.allclose(m.weight.T @ m.weight, torch.eye(50), atol=1e-5)
    w_in = orth.w_in.weight  # 50 x 2: orthonormal columns
    assert torch.allclose(w_in.T @ w_in, torch.eye(2), atol=1e-5)


@pytest.mark.parametrize(
    "bad",
    [
        {"width": 0, "depth": 3},
        {"width": 8},
        {"width": 8, "depth": 2.0},
        {"width": 8, "depth": True},
        {"width": 8, "depth": 2, "activation": "tanh"},
        {"width": 8, "depth": 2, "activation": 1},
        {"width": 8, "depth": 2, "orth_reg": -0.1},
        {"width": 8, "depth": 2, "orth_reg": "0.1"},
        {"width": 8, "depth": 2, "orth_reg": float("nan")},
        {"width": 8, "depth": 2, "init": "xavier"},
        {"width": 7, "depth": 2, "activation": "maxmin"},
        {"width": 12, "depth": 2, "activation": "groupsort"},
    ],
)
def test_bad_configs_are_user_errors(bad):
    with pytest.raises(UserError):
        get_family("fcnet").count_params(bad, BOARD)


def test_group_sizes_are_checked_with_a_clear_message():
    with pytest.raises(UserError, match="groups of 5 features: width must be a multiple of 5, got 101"):
        get_family("fcnet").count_params({"width": 101, "depth": 20, "activation": "groupsort"}, BOARD)
    with pytest.raises(UserError, match="unknown activation 'gelu'; known: abs, groupsort, maxmin, relu"):
        check_activation("gelu", 10)
    assert get_family("fcnet").count_params({"width": 100, "depth": 20, "activation": "groupsort"}, BOARD) == 192_402


def test_activation_values():
    x = torch.tensor([[3.0, -1.0, 0.5, 2.0, -4.0, 1.0, 0.0, -2.0, 5.0, -3.0]])
    assert torch.equal(make_activation("abs", 10)(x), x.abs())
    assert torch.equal(make_activation("relu", 10)(x), x.clamp_min(0))
    assert make_activation("maxmin", 10)(x).tolist() == [[-1.0, 3.0, 0.5, 2.0, -4.0, 1.0, -2.0, 0.0, -3.0, 5.0]]
    assert make_activation("groupsort", 10)(x).tolist() == [[-4.0, -1.0, 0.5, 2.0, 3.0, -3.0, -2.0, 0.0, 1.0, 5.0]]
    assert torch.equal(GroupSort(2)(x), GroupSort(2).forward(x))
    y = torch.randn(4, 3, 10)  # any leading axes
    assert torch.equal(make_activation("groupsort", 10)(y)[1, 2], make_activation("groupsort", 10)(y[1, 2]))


@pytest.mark.parametrize("name", ["maxmin", "groupsort"])
def test_sorting_activations_have_permutation_jacobians(name):
    """Anil et al. / Table 3: MaxMin and GroupSort keep the gradient norm."""
    act = make_activation(name, 20)
    for i in range(5):
        x = torch.randn(20, dtype=torch.float64, generator=torch.Generator().manual_seed(i))
        J = torch.autograd.functional.jacobian(act, x)
        assert torch.equal(J.abs().sum(0), torch.ones(20, dtype=torch.float64))  # a permutation
        assert torch.allclose(J.T @ J, torch.eye(20, dtype=torch.float64))


def test_orthogonal_regulariser_is_lambda_times_the_frobenius_penalty():
    model = fcnet({"width": 6, "depth": 4, "orth_reg": 0.1})
    with torch.no_grad():
        for p in model.parameters():
            p.normal_()
    eye = torch.eye(6)
    expected = 0.1 * sum(((m.weight.T @ m.weight - eye) ** 2).sum() for m in model.hidden)
    reg = model.regularization()
    assert reg.shape == () and torch.allclose(reg, expected) and reg > 0
    reg.backward()  # it trains the hidden weights only
    assert all(m.weight.grad is not None and m.weight.grad.abs().sum() > 0 for m in model.hidden)
    assert model.w_in.weight.grad is None and model.w_out.weight.grad is None


def test_orthogonal_regulariser_is_zero_for_orthogonal_weights_and_without_lambda():
    model = fcnet({"width": 30, "depth": 5, "orth_reg": 0.1, "init": "orthogonal"})
    assert float(model.regularization().detach()) < 1e-9
    with torch.no_grad():
        q, _ = torch.linalg.qr(torch.randn(30, 30, dtype=torch.float64))
        for m in model.hidden:
            m.weight.copy_(q.float())
    assert float(model.regularization().detach()) < 1e-9
    with torch.no_grad():
        model.hidden[0].weight.mul_(2.0)  # 4I - I on the diagonal: 9 per entry, times 30, times 0.1
    assert float(model.regularization().detach()) == pytest.approx(0.1 * 30 * 9, rel=1e-4)
    assert float(fcnet({"width": 30, "depth": 5}).regularization().detach()) == 0.0  # default orth_reg 0
    assert float(fcnet({"width": 30, "depth": 1, "orth_reg": 1.0}).regularization().detach()) == 0.0  # no square layer


@pytest.mark.parametrize("activation,gain", [("relu", 2**0.5), ("abs", 1.0), ("maxmin", 1.0), ("groupsort", 1.0)])
def test_matched_init_keeps_the_signal_through_20_layers(activation, gain):
    """init "matched": Kaiming normal for ReLU (gain sqrt 2), orthogonal for the
    norm-keeping activations (gain 1), so the mean square of the last hidden layer
    stays within a small factor of the first's; Kaiming under ABS blows it up instead."""
    io = IOSpec(2, 2, "logits", None, (2,))
    fam = get_family("fcnet")

    def spread(init):
        net = fam.build({"width": 400, "depth": 20, "activation": activation, "init": init}, io, seed=0)
        w = net.hidden[3].weight
        h = net.act(net.w_in(torch.randn(512, 2, generator=torch.Generator().manual_seed(1))))
        first = h.pow(2).mean()
        for layer in net.hidden:
            h = net.act(layer(h))
        return float(h.pow(2).mean() / first), float(w.std() * 400**0.5)

    ratio, std = spread("matched")
    assert std == pytest.approx(gain, rel=0.03)
    if gain == 1.0:  # orthogonal: W W^T = I
        w = fam.build({"width": 400, "depth": 20, "activation": activation, "init": "matched"}, io).hidden[0].weight
        assert torch.allclose(w @ w.T, torch.eye(400), atol=1e-4)
    assert 0.2 < ratio < 5
    if activation == "abs":
        assert spread("kaiming")[0] > 1e4  # 2^19 in expectation
