"""SW-MLP: exact-count random masks fixed by the seed, masked weights exactly zero through
training, the non-zero-parameter budget and the tensor size beside it; the paper's stem
(Hayase & Karakida A.2.5): global average pooling readout (Table S.1) and the sparse
weights' N(0, 1/(fan_in * p)) init (sec. 4.3)."""

import math

import pytest
import torch

from core.errors import UserError
from core.io import IOSpec
from models import get_family, trainable_params
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
    assert parts["masked (always zero)"] == 3 * 1440 and parts["width"] == 40


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


@pytest.mark.parametrize(
    "bad",
    [
        {"width": 8, "L": 1, "p": 0},
        {"width": 8, "L": 1, "p": 1.5},
        {"width": 8, "L": 0, "p": 0.5},
        {"width": 8, "L": 1},
        {"width": 8, "L": 1, "p": "s-mixer"},
        {"stem": "patch", "patch": 2, "C": 8, "L": 1, "p": 0.1, "width": 8},
        {"stem": "patch", "patch": 3, "C": 8, "L": 1, "p": 0.1},
        {"stem": "conv", "width": 8, "L": 1, "p": 0.1},
    ],
)
def test_bad_configs_are_user_errors(bad):
    with pytest.raises(UserError):
        get_family("sw-mlp").count_params(bad, IMG)


def test_the_patch_stem_needs_an_image_input():
    with pytest.raises(UserError, match="image"):
        get_family("sw-mlp").count_params(PATCH, IO)


# The paper's SW-MLP (Hayase & Karakida, A.2.5) on 8x8 digits: patch 2 -> P = 16 patches.
IMG = IOSpec(64, 10, "logits", None, (1, 8, 8))
PATCH = {"stem": "patch", "patch": 2, "C": 8, "L": 2, "p": 0.1}


def test_patch_stem_count_is_the_modules_free_parameters():
    """width = P*C = 128; free = patch embedding (4*8 + 8) + L * (k + bias + LN scale and
    shift) + head on the C = 8 pooled channels (8*10 + 10), k = round(0.1 * 128^2) = 1638."""
    fam = get_family("sw-mlp")
    model = fam.build(PATCH, IMG, seed=0)
    free = 4 * 8 + 8 + 2 * (1638 + 3 * 128) + 8 * 10 + 10
    assert fam.count_params(PATCH, IMG) == model.budgeted_params() == free
    assert sum(p.numel() for p in model.parameters()) == free + 2 * (128 * 128 - 1638)
    assert model(torch.rand(5, 64)).shape == (5, 10)


@pytest.mark.parametrize("readout", ["pool", "flatten"])
def test_patch_stem_layers_are_residual_on_the_patch_embedding(readout):
    """h_l = h_{l-1} + GELU((M*W) LN(h_{l-1}) + b): with the sparse weights and biases at
    zero the blocks are the identity, so y = W_out mean_tokens(patches(x) W_e + b_e)
    (readout "pool": the mean over the P patches of each channel) or W_out vec(...)
    ("flatten")."""
    model = get_family("sw-mlp").build(dict(PATCH, readout=readout), IMG, seed=0)
    torch.nn.init.normal_(model.w_out.weight)  # the head starts at zero, as the Mixer's
    x = torch.rand(4, 64)

    def read(e: torch.Tensor) -> torch.Tensor:  # (B, P, C) -> the head's input
        return e.mean(1) if readout == "pool" else e.flatten(1)

    with torch.no_grad():
        for layer in model.layers:
            layer.weight.zero_()
            layer.bias.zero_()
        assert torch.allclose(model(x), model.w_out(read(model.embed(x))), atol=1e-6)
        model.layers[0].weight.copy_(torch.randn_like(model.layers[0].weight) * model.layers[0].mask)
        assert not torch.allclose(model(x), model.w_out(read(model.embed(x))), atol=1e-3)


# The S-Mixer twin of the hayase-twins-digits grid: 8x8 digits, patch 2, C = 16, L = 2.
TWIN16 = {"stem": "patch", "patch": 2, "C": 16, "L": 2, "p": "s-mixer"}


def test_gap_twin_count_by_hand_and_the_modules_free_parameters():
    """8x8 digits (1 channel), patch 2: P = (8/2)^2 = 16 patches of 1*2*2 = 4 pixels;
    C = 16 -> width = P*C = 256; p = "s-mixer" = (1/16 + 1/16)/2 = 1/16, so
    k = round(256^2 / 16) = 4096 (= (C*S^2 + S*C^2)/2 = (16*256 + 16*256)/2).
        patch embedding      4*16 + 16              =    80
        sparse layer, x L=2  2 * (4096 + 256 + 256 + 256)  (k, bias, LN scale, LN shift)
                                                    = 9,728
        head (pool)          16*10 + 10             =   170   (C -> 10 classes)
        total                                         9,978
    "flatten" replaces the head by 256*10 + 10 = 2,570: 12,378. Omega is k either way."""
    fam = get_family("sw-mlp")
    pooled, flat = TWIN16, dict(TWIN16, readout="flatten")
    assert fam.count_params(pooled, IMG) == 80 + 9728 + 170 == 9978
    assert fam.count_params(flat, IMG) == 80 + 9728 + 2570 == 12378
    for cfg, head_in in ((pooled, 16), (flat, 256)):
        model = fam.build(cfg, IMG, seed=0)
        assert model.w_out.in_features == head_in
        masked = sum(layer.weight.numel() - int(layer.mask.sum()) for layer in model.layers)
        assert fam.count_params(cfg, IMG) == model.budgeted_params() == trainable_params(model) - masked
        assert trainable_params(model) == fam.count_params(cfg, IMG) + 2 * (256 * 256 - 4096)
        assert fam.param_breakdown(cfg, IMG)["head"] == head_in * 10 + 10
        assert fam.count_as("omega", cfg, IMG) == 4096
        assert model(torch.rand(3, 64)).shape == (3, 10)
    assert get_family("sw-mlp").build(TWIN16, IMG).pool and not get_family("sw-mlp").build(flat, IMG).pool


def test_patch_stem_sparse_init_is_the_papers_gaussian():
    """Hayase & Karakida sec. 4.3: mask entries 1/sqrt(p) with probability p, A ~ N(0, 1/m),
    so a non-zero weight of M * A is N(0, 1/(m p)): std 1/sqrt(m p), m the width. Width
    1024 (patch 2, C = 64), p = 0.05: 52,429 non-zero weights per layer."""
    cfg = {"stem": "patch", "patch": 2, "C": 64, "L": 2, "p": 0.05}
    torch.manual_seed(0)
    model = get_family("sw-mlp").build(cfg, IMG, seed=0)
    for layer in model.layers:
        w = layer.weight.detach()[layer.mask.bool()]
        m, p = 1024, w.numel() / 1024**2
        stated = 1 / math.sqrt(m * p)
        assert w.numel() == round(0.05 * 1024**2)
        assert abs(float(w.std()) / stated - 1) < 0.03
        assert abs(float(w.mean())) < 0.03 * stated
        assert 0.040 < float((w.abs() > 2 * stated).float().mean()) < 0.051  # Gaussian tails (4.55%)
        assert torch.count_nonzero(layer.bias) == 0


def test_dense_stem_sparse_init_is_unchanged_uniform():
    """Ours: U(+-1/sqrt(fan_in p)), PyTorch's nn.Linear bound over the non-zero fan-in:
    std 1/sqrt(3 fan_in p), nothing beyond the bound."""
    torch.manual_seed(0)
    model = get_family("sw-mlp").build({"width": 1024, "L": 1, "p": 0.05}, IO, seed=0)
    layer = model.layers[0]
    w = layer.weight.detach()[layer.mask.bool()]
    bound = 1 / math.sqrt(1024 * w.numel() / 1024**2)
    assert abs(float(w.std()) / (bound / math.sqrt(3)) - 1) < 0.03
    assert float(w.abs().max()) <= bound


@pytest.mark.parametrize(
    "cfg,match",
    [
        (dict(PATCH, readout="mean"), "readout must be one of pool, flatten, got 'mean'"),
        ({"width": 8, "L": 1, "p": 0.1, "readout": "pool"}, "stem 'dense' takes no readout"),
    ],
)
def test_bad_readout_is_a_one_line_user_error(cfg, match):
    with pytest.raises(UserError, match=match) as e:
        get_family("sw-mlp").build(cfg, IMG)
    assert "\n" not in str(e.value)


def test_s_mixer_twin_has_the_s_mixers_connections_per_layer():
    """p = "s-mixer": density (1/S + 1/C)/2 at width S*C, so each sparse layer holds the
    S-Mixer's connections per mixing layer, omega = (C S^2 + S C^2)/2 (S = 16, C = 8:
    1536), and 2L twin layers hold as many as L S-Mixer blocks."""
    twin = {"stem": "patch", "patch": 2, "C": 8, "L": 2, "p": "s-mixer"}
    parts = get_family("sw-mlp").param_breakdown(twin, IMG)
    omega = get_family("s-mixer").param_breakdown({"S": 16, "C": 8, "L": 1, "patch": 2}, IMG)
    assert (
        parts["non-zero connections per sparse layer"]
        == 1536
        == next(v for k, v in omega.items() if k.startswith("omega"))
    )
    model = get_family("sw-mlp").build(twin, IMG, seed=3)
    assert all(int(layer.mask.sum()) == 1536 for layer in model.layers)


def test_default_space_is_the_papers_on_images_and_dense_elsewhere():
    from search.spaces import default_space

    assert default_space("sw-mlp", IMG).dim("stem").choices == ("patch",)
    assert {d.name for d in default_space("sw-mlp", IMG).dims} == {"stem", "readout", "p", "patch", "L", "C", "lr"}
    assert default_space("sw-mlp", IMG).dim("readout").choices == ("pool",)  # the paper's GAP
    denoise = IOSpec(64, 64, "image", None, (1, 8, 8))  # ours: per-pixel outputs keep every token
    assert default_space("sw-mlp", denoise).dim("readout").choices == ("flatten",)
    assert default_space("sw-mlp", IOSpec(2, 2, "logits", None, (2,))).dim("stem").choices == ("dense",)
