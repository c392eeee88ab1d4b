"""The transformer families: causality, RoPE, exact non-embedding counts, config rules."""

from __future__ import annotations

import math
import random

import pytest
import torch
import torch.nn.functional as F

from core.errors import UserError
from core.io import IOSpec
from models import get_family, trainable_params
from models.rope import _apply_rope_real, apply_rope, rope_freqs
from models.transformer_lm import TransformerConfig, count_parts

IO = IOSpec(256, 256, "lm", None, (32,))
HG = {"d_model": 64, "L": 2, "K": 3, "d_h": 24, "n_heads": 4}


def build(config, family="transformer-hourglass", io=IO, seed=0):
    torch.manual_seed(seed)
    return get_family(family).build(config, io).eval()


@pytest.mark.parametrize(
    "family,config",
    [
        ("transformer-hourglass", HG),
        ("transformer", {"d_model": 64, "L": 2, "d_h": 160, "n_heads": 2, "tied": True, "qk_norm": True}),
    ],
)
def test_changing_token_t_never_changes_earlier_logits(family, config):
    model = build(config, family)
    x = torch.randint(0, 256, (2, 32), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        base = model(x)
        for t in (0, 7, 31):
            y = x.clone()
            y[:, t] = (y[:, t] + 1) % 256
            out = model(y)
            assert torch.equal(out[:, :t], base[:, :t]), t
            assert not torch.allclose(out[:, t:], base[:, t:]), t  # and later ones do change


def test_rope_scores_depend_only_on_the_relative_offset():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(16, generator=g, dtype=torch.float64), torch.randn(16, generator=g, dtype=torch.float64)
    freqs = rope_freqs(16, 64)

    def rotated(v, pos):  # v rotated as at position pos, through apply_rope
        x = v.float().expand(64, 16)[None, :, None, :]  # (B=1, T=64, H=1, hd)
        return apply_rope(x, freqs)[0, pos, 0].double()

    def score(m, n):
        return float(rotated(q, m) @ rotated(k, n))

    for m, n, shift in [(5, 2, 10), (0, 0, 40), (3, 9, 20), (30, 1, 33)]:
        assert score(m, n) == pytest.approx(score(m + shift, n + shift), abs=1e-4)
    assert abs(score(5, 2) - score(5, 3)) > 1e-3  # a different offset gives another score
    assert torch.allclose(rotated(q, 0), q)  # position 0 is not rotated
    assert float(rotated(q, 17).norm()) == pytest.approx(float(q.norm()), rel=1e-5)  # rotations keep lengths


def test_rope_rotates_adjacent_pairs_like_llama():
    """Pair j = (x_2j, x_2j+1) at position t turns by the angle t * 10000^(-2j/hd)."""
    x = torch.randn(1, 8, 2, 16, dtype=torch.bfloat16)
    out = apply_rope(x, rope_freqs(16, 8))
    assert out.dtype == torch.bfloat16
    a, b = x.float()[..., 0::2], x.float()[..., 1::2]  # (1, T, H, 8)
    angle = torch.arange(8.0)[:, None, None] * 10000.0 ** (-torch.arange(0, 16, 2) / 16)  # (T, 1, 8)
    ref = torch.stack((a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()), -1).flatten(-2)
    assert torch.allclose(out.float(), ref, atol=2e-2)
    x32 = x.float()  # the real-arithmetic form used under torch.compile is the same rotation
    assert torch.allclose(_apply_rope_real(x32, rope_freqs(16, 8)), apply_rope(x32, rope_freqs(16, 8)), atol=1e-6)


def test_attention_is_softmax_attention_with_a_causal_mask():
    model = build(HG)
    attn = model.layers[0].attn
    x = torch.randn(2, 10, 64)
    freqs = model.rope[:10]
    q, k, v = attn.wqkv(x).view(2, 10, 3, 4, 16).unbind(2)
    q, k = apply_rope(q, freqs).transpose(1, 2), apply_rope(k, freqs).transpose(1, 2)
    scores = q @ k.transpose(-1, -2) / math.sqrt(16)
    scores = scores.masked_fill(torch.ones(10, 10, dtype=torch.bool).triu(1), float("-inf"))
    ref = attn.wo((scores.softmax(-1) @ v.transpose(1, 2)).transpose(1, 2).reshape(2, 10, 64))
    with torch.no_grad():
        assert torch.allclose(attn(x, freqs), ref, atol=1e-5)


def random_config(rng: random.Random) -> dict:
    n_heads = rng.choice([1, 2, 4])
    d_model = n_heads * rng.choice([8, 16, 32])
    hourglass = rng.random() < 0.5
    return {
        "d_model": d_model,
        "n_heads": n_heads,
        "L": rng.randint(1, 3),
        "K": rng.randint(1, 4) if hourglass else 1,
        "d_h": rng.randint(2, d_model - 1) if hourglass else rng.randint(2 * d_model, 4 * d_model),
        "tied": rng.random() < 0.5,
        "qk_norm": rng.random() < 0.5,
        "lr": 1e-3,
    }


def test_counts_are_exact_over_random_configs():
    rng = random.Random(0)
    for _ in range(25):
        cfg = random_config(rng)
        io = IOSpec(rng.choice([97, 256]), 0, "lm", None, (rng.choice([8, 64]),))
        io = IOSpec(io.d_in, io.d_in, "lm", None, io.input_shape)
        family = "transformer" if cfg["K"] == 1 and cfg["d_h"] > cfg["d_model"] else "transformer-hourglass"
        fam = get_family(family)
        model = fam.build(cfg, io)
        parts = fam.param_breakdown(cfg, io)
        d, L, K, d_h = cfg["d_model"], cfg["L"], cfg["K"], cfg["d_h"]
        assert fam.count_params(cfg, io) == model.budgeted_params() == parts["non-embedding"], cfg
        assert parts["total"] == trainable_params(model), cfg
        assert parts["embedding"] == sum(p.numel() for p in model.embedding_parameters()), cfg
        assert parts["attention"] == sum(p.numel() for layer in model.layers for p in layer.attn.parameters()), cfg
        assert parts["ffn"] == sum(
            p.numel() for layer in model.layers for b in layer.ffn for p in b.ffn.parameters()
        ), cfg
        # the papers' formula plus the RMSNorm scales (and QK-norm scales) we count
        qk = 2 * (d // cfg["n_heads"]) if cfg["qk_norm"] else 0
        assert parts["non-embedding"] == L * (4 * d * d + K * 3 * d * d_h + qk) + L * (1 + K) * d + d, cfg


def test_tied_head_is_the_embedding():
    model = build({**HG, "tied": True})
    assert model.head is None
    x = torch.randint(0, 256, (1, 5))
    with torch.no_grad():
        h = model.norm(model.layers[1](model.layers[0](model.embed(x), model.rope[:5]), model.rope[:5]))
        assert torch.allclose(model(x), h @ model.embed.weight.t(), atol=1e-5)
    untied = count_parts(TransformerConfig(**{**HG, "tied": False}), IO)
    tied = count_parts(TransformerConfig(**{**HG, "tied": True}), IO)
    assert untied["embedding"] - tied["embedding"] == 64 * 256 and untied["non-embedding"] == tied["non-embedding"]


def test_hourglass_layer_is_k_residual_swiglu_sub_blocks():
    model = build(HG)
    layer = model.layers[0]
    assert len(layer.ffn) == 3 and all(b.ffn.w2.in_features == 24 for b in layer.ffn)
    h = torch.randn(1, 4, 64)
    with torch.no_grad():
        ref = h
        for b in layer.ffn:  # h <- h + W2(silu(W1 x) * W3 x), x = RMSNorm_k(h)
            x = F.rms_norm(ref, (64,), eps=1e-5) * b.norm.weight
            w1, w3 = b.ffn.w13.weight.chunk(2)
            ref = ref + (F.silu(x @ w1.t()) * (x @ w3.t())) @ b.ffn.w2.weight.t()
        out = h
        for b in layer.ffn:
            out = b(out)
    assert torch.allclose(out, ref, atol=1e-5)
    assert not any(getattr(m, "bias", None) is not None for m in model.modules() if isinstance(m, torch.nn.Linear))


def test_default_heads_are_64_wide_and_config_errors_are_one_line():
    assert TransformerConfig.from_dict({"d_model": 256, "L": 2, "d_h": 64}).n_heads == 4
    cases = [
        ({"d_model": 96, "L": 2, "d_h": 64}, "give n_heads"),
        ({"d_model": 64, "L": 2, "d_h": 16, "n_heads": 3}, "n_heads=3 must divide d_model=64"),
        ({"d_model": 66, "L": 2, "d_h": 16, "n_heads": 6}, "must be even for RoPE"),
        ({"d_model": 64, "L": 0, "d_h": 16, "n_heads": 1}, "L must be a positive integer"),
        ({"d_model": 64, "d_h": 16}, "config is missing L"),
        ({**HG, "tied": "yes"}, "tied must be true or false"),
    ]
    for cfg, message in cases:
        with pytest.raises(UserError, match=message) as e:
            get_family("transformer-hourglass").count_params(cfg, IO)
        assert "\n" not in str(e.value)
    with pytest.raises(UserError, match="language model"):
        get_family("transformer").count_params(HG, IOSpec(64, 64, "image", (1, 8, 8), (1, 8, 8)))


def test_shape_rules_of_the_two_families():
    hg, conv = get_family("transformer-hourglass"), get_family("transformer")
    assert hg.shape_violation(HG, IO) is None
    assert "d_h < d_model" in hg.shape_violation({**HG, "d_h": 64}, IO)
    assert conv.shape_violation({**HG, "K": 1, "d_h": 171}, IO) is None
    assert "K=1" in conv.shape_violation({**HG, "d_h": 171}, IO)
    assert "d_h > d_model" in conv.shape_violation({**HG, "K": 1}, IO)
    assert hg.param_convention == conv.param_convention == "non-embedding parameters"
    assert hg.fits(IO) and not hg.fits(IOSpec(64, 64, "image"))


def test_longer_input_than_the_context_is_refused():
    model = build(HG)
    with pytest.raises(ValueError, match="longer than the context"):
        model(torch.zeros(1, 33, dtype=torch.long))


def test_residual_projections_get_the_scaled_init():
    model = build({**HG, "d_model": 256, "n_heads": 4, "d_h": 100, "L": 4, "K": 3})
    std = lambda w: float(w.detach().std())  # noqa: E731
    assert std(model.layers[0].attn.wqkv.weight) == pytest.approx(0.02, rel=0.05)
    assert std(model.layers[0].attn.wo.weight) == pytest.approx(0.02 / math.sqrt(4 * 4), rel=0.05)
    assert std(model.layers[0].ffn[0].ffn.w2.weight) == pytest.approx(0.02 / math.sqrt(16), rel=0.05)
