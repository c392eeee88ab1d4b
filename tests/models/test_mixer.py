"""Mixer, S-Mixer and RP-Mixer: the first token mixing maps P patches to S tokens,
RP permutations are stored indices (identity -> the Mixer), exact counts, monotone
counts for budget-aware sampling, S = C reachable."""

import itertools

import pytest
import torch
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models import get_family, trainable_params
from models.mixer_net import EntryPermutation, MixerBlock, hidden
from search.spaces import default_space, min_params, suggest_config
from tasks import get_task
from tests.models.helpers import randomise

DIGITS = IOSpec(64, 10, "logits", None, (1, 8, 8))
RGB = IOSpec(3 * 8 * 8, 10, "logits", None, (3, 8, 8))


@pytest.mark.parametrize("mixing,S", [("mlp", 16), ("mlp", 6), ("single", 16), ("single", 9)])
def test_rp_mixer_with_identity_permutations_is_the_mixer(mixing, S):
    cfg = {"S": S, "C": 5, "L": 3, "patch": 2, "mixing": mixing}
    if mixing == "mlp":
        cfg["gamma"] = 2
    plain_family = "mixer" if mixing == "mlp" else "s-mixer"
    plain_cfg = {k: v for k, v in cfg.items() if k != "mixing"}
    rp = randomise(get_family("rp-mixer").build(cfg, RGB, seed=3))
    plain = get_family(plain_family).build(plain_cfg, RGB)
    missing, unexpected = plain.load_state_dict(rp.state_dict(), strict=False)
    assert not missing and unexpected and all(k.endswith(".index") for k in unexpected)
    x = torch.rand(4, RGB.d_in)
    assert not torch.allclose(rp(x), plain(x), atol=1e-4)  # random permutations change the function
    for m in rp.modules():
        if isinstance(m, EntryPermutation):
            m.index.copy_(torch.arange(m.index.numel()))
    assert torch.allclose(rp(x), plain(x), atol=1e-6)
    assert get_family("rp-mixer").count_params(cfg, RGB) == get_family(plain_family).count_params(plain_cfg, RGB)


def test_permutations_are_index_tensors_fixed_by_the_seed():
    fam, cfg = get_family("rp-mixer"), {"S": 12, "C": 6, "L": 2, "patch": 2, "gamma": 1}
    a, b, c = fam.build(cfg, DIGITS, seed=7), fam.build(cfg, DIGITS, seed=7), fam.build(cfg, DIGITS, seed=8)
    perms = lambda m: [x for n, x in m.named_buffers() if n.endswith(".index")]  # noqa: E731
    assert len(perms(a)) == 4 * 2
    for pa, pb, _pc in zip(perms(a), perms(b), perms(c)):
        assert pa.dtype == torch.int64 and pa.dim() == 1
        assert torch.equal(pa.sort().values, torch.arange(pa.numel()))  # a permutation
        assert torch.equal(pa, pb)
    assert not all(torch.equal(x, y) for x, y in zip(perms(a), perms(c)))
    # first block's token input holds P*C = 16*6 entries, everything else S*C = 12*6
    assert [p.numel() for p in perms(a)] == [96] + [72] * 7
    biggest = max(t.numel() for t in itertools.chain(a.parameters(), a.buffers()))
    assert biggest < (12 * 6) ** 2  # no SC x SC matrix anywhere
    assert trainable_params(a) == fam.count_params(cfg, DIGITS)  # permutations are not parameters


def test_entry_permutation_permutes_all_entries_of_a_sample():
    g = torch.Generator().manual_seed(0)
    perm = EntryPermutation(12, g)
    x = torch.arange(24.0).view(2, 3, 4)
    y = perm(x)
    assert torch.equal(y.flatten(1), x.flatten(1)[:, perm.index])
    assert torch.equal(y[1] - y[0], torch.full((3, 4), 12.0))  # same permutation for every sample


def test_first_block_maps_patches_to_S_tokens_and_keeps_the_residual_only_when_S_is_P():
    fam = get_family("mixer")
    torch.manual_seed(0)
    wide = fam.build({"S": 7, "C": 4, "L": 2, "patch": 2, "gamma": 1}, DIGITS)  # P = 16 -> S = 7
    assert not wide.blocks[0].token_residual and wide.blocks[1].token_residual
    assert wide.blocks[0].token_mix.fc1.in_features == 16 and wide.blocks[0].token_mix.fc2.out_features == 7
    h = wide.blocks(wide.embed(torch.rand(3, 64)))
    assert h.shape == (3, 7, 4)
    same = fam.build({"S": 16, "C": 4, "L": 2, "patch": 2, "gamma": 1}, DIGITS)
    assert all(b.token_residual for b in same.blocks)  # S == P: Tolstikhin's Mixer


@pytest.mark.parametrize("family", ["mixer", "s-mixer", "rp-mixer"])
def test_skip_layer_is_the_first_blocks_residual_when_S_is_not_P(family):
    """Hayase & Karakida's SkipLayer: with S != P the first block's token residual is
    LN(A X), A: P -> S over the tokens (with a bias), LN over the channels; with S == P
    the identity (Tolstikhin's Mixer), whatever `skip` says. Counts include A and its LN."""
    fam = get_family(family)
    cfg = {"S": 7, "C": 4, "L": 2, "patch": 2, "skip": "linear"} | ({} if family == "s-mixer" else {"gamma": 1})
    torch.manual_seed(0)
    model = fam.build(cfg, DIGITS)
    first = model.blocks[0]
    assert first.skip is not None and model.blocks[1].skip is None
    assert (first.skip.map.in_features, first.skip.map.out_features, first.skip.norm.eps) == (16, 7, 1e-6)
    assert fam.count_params(cfg, DIGITS) == trainable_params(model)
    assert fam.param_breakdown(cfg, DIGITS)["skip layer"] == 16 * 7 + 7 + 2 * 4
    without = dict(cfg, skip="none")
    assert fam.count_params(cfg, DIGITS) - fam.count_params(without, DIGITS) == 16 * 7 + 7 + 2 * 4
    # U = LN(A X) + TokenMix(LN(X)): with the token mixing's last layer at zero (the
    # mixing term is then 0; single-layer mixing: GELU(0) = 0), U is the SkipLayer's output.
    x = torch.randn(3, 16, 4)
    last = first.token_mix.fc2 or first.token_mix.fc1
    with torch.no_grad():
        last.weight.zero_()
        last.bias.zero_()
        skip = first.skip(x)
        a = first.skip.map
        assert torch.allclose(skip, first.skip.norm((x.transpose(1, 2) @ a.weight.T + a.bias).transpose(1, 2)))
        if not first.permuted:
            expect = skip + first.channel_mix(first.channel_norm(skip))
            assert torch.allclose(first(x), expect, atol=1e-6)
    same = fam.build(dict(cfg, S=16), DIGITS)
    assert all(b.skip is None and b.token_residual for b in same.blocks)
    assert "skip layer" not in fam.param_breakdown(dict(cfg, S=16), DIGITS)


def test_default_mixer_spaces_use_the_skip_layer():
    for family in ("mixer", "s-mixer", "rp-mixer"):
        assert default_space(family, DIGITS).dim("skip").choices == ("linear",)


@pytest.mark.parametrize("family", ["mixer", "s-mixer", "rp-mixer"])
def test_flatten_readout_reads_every_token_and_counts_its_head(family):
    """The papers' readout pools over tokens (head C -> 10, the default spaces' only
    choice); `readout = "flatten"`, a diagnostic option, reads all S*C
    features of LN(X_L): head S*C -> 10. Counts follow the module; Omega does not change."""
    fam = get_family(family)
    cfg = {"S": 6, "C": 4, "L": 2, "patch": 2, "skip": "linear"} | ({} if family == "s-mixer" else {"gamma": 1})
    pooled, flat = fam.build(cfg, DIGITS), fam.build(dict(cfg, readout="flatten"), DIGITS)
    assert (pooled.head.in_features, flat.head.in_features) == (4, 6 * 4)
    for c, model in ((cfg, pooled), (dict(cfg, readout="flatten"), flat)):
        assert fam.count_params(c, DIGITS) == trainable_params(model)
    flat_parts, pooled_parts = (
        fam.param_breakdown(dict(cfg, readout="flatten"), DIGITS),
        fam.param_breakdown(cfg, DIGITS),
    )
    assert flat_parts["head"] - pooled_parts["head"] == (6 * 4 - 4) * 10
    assert [v for k, v in flat_parts.items() if k.startswith("omega")] == [
        v for k, v in pooled_parts.items() if k.startswith("omega")
    ]
    flat = randomise(flat)
    x = torch.randn(3, 64)
    with torch.no_grad():
        h = flat.norm(flat.blocks(flat.embed(x)))
        assert torch.allclose(flat(x), flat.head(h.reshape(3, -1)), atol=1e-6)
        assert not torch.allclose(flat(x), flat.head(h.mean(1).repeat(1, 6)), atol=1e-3)
    assert default_space(family, DIGITS).dim("readout").choices == ("pool",)
    with pytest.raises(UserError, match="readout must be one of pool, flatten"):
        fam.build(dict(cfg, readout="mean"), DIGITS)


def test_block_computes_the_mixer_equations():
    torch.manual_seed(0)
    block = randomise(MixerBlock(6, 6, 4, 2, "mlp"))
    x = torch.randn(3, 6, 4)
    ln1, ln2 = block.token_norm, block.channel_norm
    mlp = lambda m, z: m.fc2(nn.functional.gelu(m.fc1(z), approximate="tanh"))  # noqa: E731
    u = x + mlp(block.token_mix, ln1(x).transpose(1, 2)).transpose(1, 2)
    y = u + mlp(block.channel_mix, ln2(u))
    assert torch.allclose(block(x), y, atol=1e-6)
    assert ln1.eps == 1e-6


def test_mixer_count_formula_and_authors_init():
    fam = get_family("mixer")
    S, C, g, L, p = 16, 8, 4, 2, 2  # P = 16 = S
    cfg = {"S": S, "C": C, "gamma": g, "L": L, "patch": p}
    hs, hc = hidden(g, S), hidden(g, C)
    block = (S * hs + hs + hs * S + S) + (C * hc + hc + hc * C + C) + 4 * C
    expected = (p * p + 1) * C + L * block + 2 * C + C * 10 + 10
    model = fam.build(cfg, DIGITS)
    assert fam.count_params(cfg, DIGITS) == trainable_params(model) == expected
    assert torch.count_nonzero(model.head.weight) == 0 and torch.count_nonzero(model.head.bias) == 0
    assert all(torch.count_nonzero(m.bias) == 0 for m in model.blocks.modules() if isinstance(m, nn.Linear))
    parts = fam.param_breakdown(cfg, DIGITS)
    assert parts["omega (connections per mixing layer, gamma(CS^2+SC^2)/2)"] == g * (C * S * S + S * C * C) // 2
    assert parts["connections"] == 16 * 4 * C + L * 2 * g * (C * S * S + S * C * C) + C * 10


def test_s_mixer_is_single_layer_mixing():
    fam = get_family("s-mixer")
    cfg = {"S": 10, "C": 6, "L": 2, "patch": 2}
    model = fam.build(cfg, DIGITS)
    assert all(b.token_mix.fc2 is None and b.channel_mix.fc2 is None for b in model.blocks)
    block = (16 * 10 + 10) + (6 * 6 + 6) + 4 * 6, (10 * 10 + 10) + (6 * 6 + 6) + 4 * 6
    assert fam.count_params(cfg, DIGITS) == trainable_params(model) == 4 * 6 + 6 + sum(block) + 2 * 6 + 6 * 10 + 10
    with pytest.raises(UserError, match="no gamma"):
        fam.count_params(dict(cfg, gamma=2), DIGITS)


@pytest.mark.parametrize("family", ["mixer", "s-mixer", "rp-mixer"])
def test_counts_grow_with_every_int_dimension(family):
    fam = get_family(family)
    base = {"S": 9, "C": 7, "L": 2, "patch": 2}
    if family != "s-mixer":
        base["gamma"] = 2
    for key in ("S", "C", "L") + (("gamma",) if "gamma" in base else ()):
        counts = [fam.count_params(dict(base, **{key: v}), DIGITS) for v in range(1, 20)]
        assert all(a < b for a, b in zip(counts, counts[1:])), key


@pytest.mark.parametrize("family", ["mixer", "s-mixer", "rp-mixer"])
def test_default_space_reaches_S_equal_C_within_budget(family):
    """A grid-style draw of S = C = 32 fits a budget holding that model; the budget-aware
    sampler never proposes over budget."""
    io = get_task("digits-classify").io()
    fam, space = get_family(family), default_space(family, io)
    count = lambda c: fam.count_params(c, io)  # noqa: E731
    budget = 30_000

    class Draw:  # always the top of the allowed range, S then C, of a fixed patch
        def __init__(self, target):
            self.target = target

        def int(self, name, low, high, log, step=1):
            return min(high, max(low, self.target.get(name, low)))

        def float(self, name, low, high, log):
            return low

        def choice(self, name, choices):
            return self.target.get(name, choices[0])

    cfg = suggest_config(space, io, budget, count, Draw({"S": 32, "C": 32, "patch": 2, "L": 1, "gamma": 1}))
    assert cfg["S"] == cfg["C"] == 32 and count(cfg) <= budget
    assert min_params(space, io, count) < budget


def test_patch_must_tile_and_mixers_need_images():
    fam = get_family("mixer")
    with pytest.raises(UserError, match="does not tile"):
        fam.count_params({"S": 4, "C": 4, "L": 1, "patch": 3}, DIGITS)
    assert not fam.fits(get_task("checkerboard").io())
    assert not fam.fits(get_task("digits-denoise").io())  # image outputs: not a classifier
    assert fam.fits(get_task("cifar10-classify").io())
    with pytest.raises(UserError, match="mixing"):
        fam.count_params({"S": 4, "C": 4, "L": 1, "patch": 2, "mixing": "single"}, DIGITS)
