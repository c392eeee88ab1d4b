"""The U-shaped diffusion families (lmlp, uvit, mixer-block): shapes follow the image and
patch, long skips are wired LIFO, blocks compute their authors' equations, exact counts,
one-line errors, the null class, deterministic builds."""

import itertools
import math

import pytest
import torch
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models import get_family
from models.lmlp import PRESETS as LMLP_PRESETS
from models.lmlp import LMLPBlock
from models.mixer_block import PRESETS as MIXER_PRESETS
from models.mixer_block import MixerTokenBlock
from models.ubackbone import timestep_embedding, unpatchify
from models.uvit import PRESETS as UVIT_PRESETS
from models.uvit import UViTBlock
from search.spaces import default_space, min_params, suggest_config
from tests.models.helpers import randomise

FAMILIES = ["lmlp", "uvit", "mixer-block"]
PRESETS = {"lmlp": LMLP_PRESETS, "uvit": UVIT_PRESETS, "mixer-block": MIXER_PRESETS}


def noise_io(c, h, w, k=10):
    return IOSpec(c * h * w, c * h * w, "noise", (c, h, w), (c, h, w), k)


MNIST, DIGITS, CIFAR = noise_io(1, 28, 28), noise_io(1, 8, 8), noise_io(3, 32, 32)
WIDE = noise_io(2, 8, 12, k=3)  # non-square: the grid comes from io, never from sqrt(N)


def inputs(io, batch=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, *io.input_shape, generator=g)
    t = torch.rand(batch, generator=g) * 1000
    y = torch.randint(0, io.num_classes + 1, (batch,), generator=g)
    return x, t, y


# ---------------------------------------------------------------- shapes


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(
    "io,patch",
    [(MNIST, 2), (MNIST, 4), (MNIST, 7), (DIGITS, 2), (DIGITS, 4), (CIFAR, 4), (CIFAR, 8), (WIDE, 4)],
    ids=lambda v: "x".join(map(str, v.input_shape)) if isinstance(v, IOSpec) else str(v),
)
def test_output_shape_and_token_count_follow_image_and_patch(family, io, patch):
    c, h, w = io.input_shape
    model = get_family(family).build({"D": 32, "depth": 3, "patch": patch, "mlp_ratio": 2}, io)
    n = (h // patch) * (w // patch)
    assert model.pos_embed.shape == (1, 2 + n, 32)
    x, t, y = inputs(io)
    out = model(x, t, y)
    assert out.shape == x.shape and torch.isfinite(out).all()


def test_unpatchify_inverts_u_vit_patch_order():
    """Patch vectors are ordered (p1 p2 C), tokens row-major over the (h, w) grid."""
    c, h, w, p = 3, 2, 3, 4
    img = torch.randn(2, c, h * p, w * p)
    tokens = img.reshape(2, c, h, p, w, p).permute(0, 2, 4, 3, 5, 1).reshape(2, h * w, p * p * c)
    assert torch.equal(unpatchify(tokens, c, h, w, p), img)
    i, j, p1, p2, ch = 1, 2, 3, 1, 2  # one entry by hand
    assert tokens[0, i * w + j, (p1 * p + p2) * c + ch] == img[0, ch, i * p + p1, j * p + p2]


def test_timestep_embedding_is_u_vits():
    t = torch.tensor([0.0, 1.5, 999.0])
    e = timestep_embedding(t, 6)
    freqs = torch.exp(-math.log(10000) * torch.arange(3) / 3)
    assert torch.allclose(e, torch.cat([torch.cos(t[:, None] * freqs), torch.sin(t[:, None] * freqs)], 1))
    odd = timestep_embedding(t, 7)
    assert odd.shape == (3, 7) and torch.equal(odd[:, :6], e) and torch.count_nonzero(odd[:, 6]) == 0


# ---------------------------------------------------------------- long skips


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("depth", [5, 7])
@pytest.mark.parametrize("skip", ["add", "concat"])
def test_each_out_block_receives_its_mirrored_in_block_output(family, depth, skip):
    model = get_family(family).build({"D": 32, "depth": depth, "patch": 4, "skip": skip}, DIGITS)
    n = depth // 2
    assert len(model.in_blocks) == len(model.out_blocks) == n
    outputs, received, mid_args = {}, {}, []
    for i, blk in enumerate(model.in_blocks):
        blk.register_forward_hook(lambda m, a, out, i=i: outputs.__setitem__(i, out))
    for i, blk in enumerate(model.out_blocks):
        blk.register_forward_pre_hook(lambda m, a, i=i: received.__setitem__(i, a))
    model.mid_block.register_forward_pre_hook(lambda m, a: mid_args.append(a))
    model(*inputs(DIGITS))
    assert len(mid_args[0]) == 1  # the middle block gets no skip
    for i in range(n):  # LIFO: out-block i gets in-block n-1-i's output, the very tensor
        x, s = received[i]
        assert s is outputs[n - 1 - i]
        assert all(s is not outputs[j] for j in range(n) if j != n - 1 - i)


@pytest.mark.parametrize("family", FAMILIES)
def test_skip_add_adds_first_and_concat_is_a_linear_of_both(family):
    fam, x, s = get_family(family), torch.randn(2, 18, 32), torch.randn(2, 18, 32)
    add = randomise(fam.build({"D": 32, "depth": 3, "patch": 2, "skip": "add"}, DIGITS)).out_blocks[0]
    assert add.skip_linear is None
    assert torch.allclose(add(x, s), add(x + s), atol=1e-6)  # x = x + skip, then the block
    cat = fam.build({"D": 32, "depth": 3, "patch": 2, "skip": "concat"}, DIGITS).out_blocks[0]
    assert cat.skip_linear.in_features == 64 and cat.skip_linear.out_features == 32
    missing, unexpected = cat.load_state_dict(add.state_dict(), strict=False)
    assert missing == ["skip_linear.weight", "skip_linear.bias"] and not unexpected
    with torch.no_grad():  # skip_linear = [I, I]: concat reduces to add
        cat.skip_linear.weight.copy_(torch.cat([torch.eye(32), torch.eye(32)], 1))
        cat.skip_linear.bias.zero_()
    assert torch.allclose(cat(x, s), add(x, s), atol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_skips_reach_the_output(family):
    """Zeroing every skip an out-block receives changes the prediction; zeroing a copy does not."""
    model = randomise(get_family(family).build({"D": 32, "depth": 5, "patch": 4}, DIGITS))
    args = inputs(DIGITS)
    ref = model(*args)
    handles = [b.register_forward_pre_hook(lambda m, a: (a[0], torch.zeros_like(a[1]))) for b in model.out_blocks]
    zeroed = model(*args)
    for h in handles:
        h.remove()
    assert not torch.allclose(ref, zeroed, atol=1e-4)
    assert torch.equal(model(*args), ref)


# ---------------------------------------------------------------- the blocks' equations


def ln(x):
    return nn.functional.layer_norm(x, x.shape[-1:])


def mlp(m, x):
    return m.fc2(nn.functional.gelu(m.fc1(x)))


@pytest.mark.parametrize("residual", ["normed", "input"])
@pytest.mark.parametrize("mlp_norm", ["shared", "separate"])
def test_lmlp_block_is_the_authors_code(residual, mlp_norm):
    block = randomise(LMLPBlock(8, 6, 16, None, mlp_norm, residual))
    x = torch.randn(3, 6, 8)
    xn = block.norm1(x)
    left = block.l(block.norm2(x.transpose(1, 2))).transpose(1, 2)
    u = (xn if residual == "normed" else x) + block.proj(left + block.r(xn))
    y = u + mlp(block.mlp, (block.norm1 if mlp_norm == "shared" else block.norm3)(u))
    assert torch.allclose(block(x), y, atol=1e-5)
    assert (block.norm3 is None) == (mlp_norm == "shared")
    assert block.norm2.normalized_shape == (6,) and block.l.in_features == block.l.out_features == 6


def test_uvit_block_is_pre_ln_attention_then_mlp():
    block = randomise(UViTBlock(12, 3, 24, None))
    assert block.attn.qkv.bias is None and block.attn.proj.bias is not None
    x = torch.randn(2, 5, 12)
    h = block.norm1(x)
    q, k, v = block.attn.qkv(h).reshape(2, 5, 3, 3, 4).permute(2, 0, 3, 1, 4)
    a = torch.softmax(q @ k.transpose(-1, -2) / 2.0, -1) @ v  # sqrt(head_dim 4) = 2
    u = x + block.attn.proj(a.transpose(1, 2).reshape(2, 5, 12))
    assert torch.allclose(block(x), u + mlp(block.mlp, block.norm2(u)), atol=1e-5)


def test_mixer_block_mixes_tokens_then_channels():
    block = randomise(MixerTokenBlock(8, 6, 11, 16, None))
    x = torch.randn(3, 6, 8)
    u = x + mlp(block.token_mlp, block.norm1(x).transpose(1, 2)).transpose(1, 2)
    assert torch.allclose(block(x), u + mlp(block.mlp, block.norm2(u)), atol=1e-5)
    assert block.norm1.eps == 1e-5  # the backbone's eps, not Tolstikhin's 1e-6


@pytest.mark.parametrize("family", FAMILIES)
def test_u_vit_init(family):
    model = get_family(family).build({"D": 64, "depth": 3, "patch": 2, "skip": "concat"}, MNIST)
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    assert all(m.bias is None or torch.count_nonzero(m.bias) == 0 for m in linears)
    w = torch.cat([m.weight.flatten() for m in linears])
    assert abs(w.std().item() - 0.02) < 0.002  # trunc-normal std .02 (cut at +-2, as timm's)
    assert all(
        torch.equal(m.weight, torch.ones_like(m.weight)) and torch.count_nonzero(m.bias) == 0
        for m in model.modules()
        if isinstance(m, nn.LayerNorm)
    )
    assert abs(model.pos_embed.std().item() - 0.02) < 0.003
    assert model.label_emb.num_embeddings == 11  # 10 classes + the null token


# ---------------------------------------------------------------- counts


@pytest.mark.parametrize("family", FAMILIES)
def test_fits_class_conditional_noise_tasks_only(family):
    fam = get_family(family)
    assert fam.fits(MNIST) and fam.fits(CIFAR) and fam.outputs == ("noise",)
    assert not fam.fits(IOSpec(784, 784, "image", (1, 28, 28), (1, 28, 28)))
    assert not fam.fits(IOSpec(784, 10, "logits", None, (1, 28, 28)))
    assert not fam.fits(IOSpec(784, 784, "noise", (1, 28, 28), (1, 28, 28), None))
    assert fam.key_dims == ("D", "depth", "patch", "mlp_ratio") and fam.default_task == "mnist-diffusion"


# ---------------------------------------------------------------- behaviour


@pytest.mark.parametrize("family", FAMILIES)
def test_null_class_token_is_its_own_embedding(family):
    model = get_family(family).build({"D": 32, "depth": 3, "patch": 4}, DIGITS)
    x, t, _ = inputs(DIGITS, batch=2)
    null = model(x, t, torch.full((2,), DIGITS.num_classes))
    assert torch.isfinite(null).all()
    assert not torch.allclose(null, model(x, t, torch.zeros(2, dtype=torch.long)), atol=1e-5)
    with pytest.raises(IndexError):
        model(x, t, torch.full((2,), DIGITS.num_classes + 1))


@pytest.mark.parametrize("family", FAMILIES)
def test_build_is_deterministic_given_seed_and_leaves_the_global_rng_alone(family):
    fam, cfg = get_family(family), {"D": 32, "depth": 3, "patch": 4, "skip": "concat"}
    state = torch.random.get_rng_state()
    a, b, c = fam.build(cfg, DIGITS, seed=3), fam.build(cfg, DIGITS, seed=3), fam.build(cfg, DIGITS, seed=4)
    assert torch.equal(torch.random.get_rng_state(), state)
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("skip", ["add", "concat"])
def test_gradients_reach_every_parameter_and_are_finite(family, skip):
    model = get_family(family).build({"D": 32, "depth": 3, "patch": 4, "skip": skip}, CIFAR)
    x, t, y = inputs(CIFAR)
    model(x, t, y).square().mean().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
        if name != "label_emb.weight":  # only the rows of the drawn labels get gradient
            assert torch.count_nonzero(p.grad) > 0, name


@pytest.mark.parametrize("family", FAMILIES)
def test_runs_in_bfloat16(family):
    model = get_family(family).build({"D": 32, "depth": 3, "patch": 2}, DIGITS).to(torch.bfloat16)
    x, t, y = inputs(DIGITS)
    out = model(x.to(torch.bfloat16), t, y)  # t stays float32: the time token follows the model's dtype
    assert out.dtype == torch.bfloat16 and torch.isfinite(out).all()


# ---------------------------------------------------------------- default spaces


@pytest.mark.parametrize("family", FAMILIES)
def test_default_space_is_shared_and_every_point_is_valid(family):
    space = default_space(family, MNIST)
    assert [d.name for d in space.dims] == ["patch", "mlp_ratio", "depth", "D"]
    assert space.dim("patch").choices == (2, 4, 7)
    assert default_space(family, CIFAR).dim("patch").choices == (2, 4, 8)
    depth, width = space.dim("depth"), space.dim("D")
    depths = range(int(depth.low), int(depth.high) + 1, depth.step)
    widths = range(int(width.low), int(width.high) + 1, width.step)
    assert list(depths) == [1, 3, 5, 7, 9, 11, 13] and list(widths) == [64 * k for k in range(1, 9)]
    assert space.dims == default_space("lmlp", MNIST).dims  # same shapes for the three families
    fam = get_family(family)
    for values in itertools.product(space.dim("patch").choices, space.dim("mlp_ratio").choices, depths, widths):
        cfg = dict(zip([d.name for d in space.dims], values))
        assert fam.shape_violation(cfg, MNIST) is None, cfg
    with pytest.raises(UserError, match="image inputs"):
        default_space(family, IOSpec(64, 64, "noise"))


@pytest.mark.parametrize("family", FAMILIES)
def test_default_space_samples_within_budget(family):
    fam, space = get_family(family), default_space(family, MNIST)
    count = lambda c: fam.count_params(c, MNIST)  # noqa: E731

    class Draw:  # the first choice; the largest integer the budget allows
        def choice(self, name, choices):
            return choices[0]

        def int(self, name, low, high, log, step=1):
            return high

    lo = min_params(space, MNIST, count)
    assert lo == min(count({"patch": p, "depth": 1, "mlp_ratio": 2, "D": 64}) for p in space.dim("patch").choices)
    cfg = suggest_config(space, MNIST, 10**9, count, Draw())
    assert cfg == {"patch": 2, "mlp_ratio": 2, "depth": 13, "D": 512}
    budget = 1_000_000
    cfg = suggest_config(space, MNIST, budget, count, Draw())
    assert count(cfg) <= budget and cfg["D"] % 64 == 0 and cfg["depth"] % 2 == 1
    assert count(dict(cfg, D=cfg["D"] + 64)) > budget  # D cut to the largest width that fits
