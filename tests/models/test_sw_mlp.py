"""SW-MLP: exact-count random masks fixed by the seed, masked weights exactly zero through
training, the non-zero-parameter budget and the tensor size beside it."""
import pytest
import torch

from core.errors import UserError
from core.io import IOSpec
from models import get_family
from models.sw_mlp import MaskedLinear
from tasks.train import make_optimizer

IO = IOSpec(64, 10, "logits")
CFG = {"width": 40, "L": 3, "p": 0.1}


def test_masks_have_exactly_round_p_w2_ones_and_come_from_the_seed():
    fam = get_family("sw-mlp")
    a, b, c = fam.build(CFG, IO, seed=1), fam.build(CFG, IO, seed=1), fam.build(CFG, IO, seed=2)
    masks = lambda m: [layer.mask for layer in m.layers]  # noqa: E731
    assert all(int(m.sum()) == 160 and set(m.unique().tolist()) == {0.0, 1.0} for m in masks(a))
    assert all(torch.equal(x, y) for x, y in zip(masks(a), masks(b)))
    assert not any(torch.equal(x, y) for x, y in zip(masks(a), masks(c)))
    assert not torch.equal(masks(a)[0], masks(a)[1])  # one mask per layer
    assert all(torch.count_nonzero(layer.weight * (1 - layer.mask)) == 0 for layer in a.layers)


def test_masked_weights_stay_exactly_zero_through_training():
    torch.manual_seed(0)
    model = get_family("sw-mlp").build(CFG, IO, seed=5)
    start = [layer.weight.detach().clone() for layer in model.layers]
    opt = make_optimizer(list(model.parameters()), lr=1e-2, weight_decay=0.1)
    x, y = torch.randn(64, 64), torch.randint(0, 10, (64,))
    for _ in range(30):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        for layer in model.layers:
            assert torch.count_nonzero(layer.weight.grad[layer.mask == 0]) == 0
        opt.step()
    assert loss.item() < 1.0  # it did train
    for layer, w0 in zip(model.layers, start):
        off = layer.mask == 0
        assert torch.count_nonzero(layer.weight[off]) == 0  # the raw tensor, not only W * M
        assert not torch.equal(layer.weight[~off], w0[~off])


def test_budget_counts_free_parameters_and_breakdown_shows_the_tensor_size():
    fam = get_family("sw-mlp")
    model = fam.build(CFG, IO, seed=0)
    free = 64 * 40 + 40 + 3 * (160 + 40) + 40 * 10 + 10
    assert fam.param_convention == "non-zero parameters"
    assert fam.count_params(CFG, IO) == model.budgeted_params() == free
    parts = fam.param_breakdown(CFG, IO)
    raw = sum(p.numel() for p in model.parameters())
    assert parts["tensor size (all weight entries + biases)"] == raw == free + 3 * (1600 - 160)
    assert parts["masked (always zero)"] == 3 * 1440
    assert parts["non-zero connections (weights only)"] == 64 * 40 + 3 * 160 + 40 * 10


def test_dense_when_p_is_one():
    fam = get_family("sw-mlp")
    cfg = {"width": 16, "L": 2, "p": 1.0}
    model = fam.build(cfg, IO)
    assert fam.count_params(cfg, IO) == sum(p.numel() for p in model.parameters())
    assert all(bool(layer.mask.all()) for layer in model.layers)


def test_init_scale_follows_the_density():
    torch.manual_seed(0)
    layer = MaskedLinear(1000, 1000, (torch.rand(1000, 1000) < 0.04).float())
    with torch.no_grad():
        h = layer(torch.randn(256, 1000))
        dense = torch.nn.Linear(1000, 1000)(torch.randn(256, 1000))
    assert 0.7 < float(h.std() / dense.std()) < 1.4  # pre-activations do not shrink with p


@pytest.mark.parametrize("bad", [{"width": 8, "L": 1, "p": 0}, {"width": 8, "L": 1, "p": 1.5},
                                 {"width": 8, "L": 0, "p": 0.5}, {"width": 8, "L": 1}])
def test_bad_configs_are_user_errors(bad):
    with pytest.raises(UserError):
        get_family("sw-mlp").count_params(bad, IO)
