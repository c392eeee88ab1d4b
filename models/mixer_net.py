"""The MLP-Mixer network shared by the mixer, s-mixer and rp-mixer families.

Tolstikhin et al., "MLP-Mixer: An all-MLP architecture for vision" (2021), as read by
Hayase & Karakida, "Understanding MLP-Mixer as a wide and sparse MLP" (ICML 2024):

    X_0 = patches(x) W_e + b_e                              (P x C: per-patch linear)
    U   = X + TokenMix(LN(X)^T)^T                           (S x C)
    Y   = U + ChannelMix(LN(U))                             (S x C)
    y   = head(mean_tokens(LN(X_L)))                        (logits; readout "pool")

TokenMix/ChannelMix ("mixing"):
    "mlp":    Linear(n_in, h) -> GELU -> Linear(h, n), h = round(gamma * n)  (Mixer)
    "single": Linear(n_in, n) -> GELU                                         (S-Mixer)
S, the number of tokens the blocks work on, is free: the FIRST block's token mixing maps
the P patches to S tokens (as in the sparse-MLP paper, which sweeps S); when S == P its
token residual is the identity and the network is exactly Tolstikhin's Mixer. When
S != P the identity cannot add a P x C table to an S x C one; config key `skip`:
    "linear": the sparse-MLP paper's SkipLayer, LN of a linear map of the tokens,
              U = LN(A X) + TokenMix(LN(X)^T)^T, A: S x P with a bias, LN over channels
              (eps 1e-6 as every LN here); the default spaces' value;
    "none":   no token residual in that block, U = TokenMix(LN(X)^T)^T (configs stored
              without the key, from before the SkipLayer existed, keep this meaning).

RP-Mixer (`permute=True`): every mixing sub-layer is wrapped in two fixed random
permutations of all n_in*C input and S*C output entries, applied with stored index tensors
(`EntryPermutation`, a gather; no SC x SC matrix). They are buffers drawn from the trial's
seed, so a run is reproducible and they travel with the state dict. With identity
permutations the RP-Mixer is the Mixer.

As in the authors' code (google-research/vision_transformer, models_mixer.py): biases on
every linear, LayerNorm (eps 1e-6) before each mixing and before the head, GELU with the
tanh approximation (jax.nn.gelu's default), Dense weights LeCun-normal (truncated) with
zero biases, the head zero-initialised, global average pooling over tokens.

Readout (config key `readout`): "pool" is the above, the papers' and the default.
"flatten" is a deviation kept as an explicit option for diagnosis:
y = head(vec(LN(X_L))), a head over all S*C features. The SW-MLP twin (models/sw_mlp.py)
takes the same option; both pool by default, as Hayase & Karakida's Table S.1 gives GAP for
the SW-MLP too (an earlier SW-MLP here flattened, which made the twin comparison unequal).
It costs S*C*d_out head weights instead of C*d_out; Omega (the mixing layers' connections)
is unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import torch
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models.base import Family, model_keys

Mixing = Literal["mlp", "single"]
LN_EPS = 1e-6
SKIPS = ("linear", "none")  # the first block's token residual when S != P
READOUTS = ("pool", "flatten")  # mean over tokens (the papers'), or all S*C features (a diagnostic)


@dataclass(frozen=True)
class MixerConfig:
    S: int  # tokens in the blocks
    C: int  # channels
    L: int  # blocks
    patch: int  # patch side in pixels
    gamma: float = 4  # expansion of the mixing MLPs (Tolstikhin's channel MLP: 4C)
    mixing: Mixing = "mlp"
    skip: str = "none"  # the first block's token residual when S != P: "linear" (SkipLayer) or "none"
    readout: str = "pool"  # "pool" (the papers') or "flatten" (all S*C features; a diagnostic option)

    def __post_init__(self) -> None:
        for name in ("S", "C", "L", "patch"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UserError(f"{name} must be a positive integer, got {v!r}")
        g = self.gamma
        if isinstance(g, bool) or not isinstance(g, (int, float)) or not 0 < g < math.inf:
            raise UserError(f"gamma must be a positive number, got {g!r}")
        if self.mixing not in ("mlp", "single"):
            raise UserError(f"mixing must be 'mlp' or 'single', got {self.mixing!r}")
        if self.skip not in SKIPS:
            raise UserError(f"skip must be one of {', '.join(SKIPS)}, got {self.skip!r}")
        if self.readout not in READOUTS:
            raise UserError(f"readout must be one of {', '.join(READOUTS)}, got {self.readout!r}")

    @property
    def head_inputs(self) -> int:
        """Features the head reads: C after pooling over tokens, S*C flattened."""
        return self.C if self.readout == "pool" else self.S * self.C

    @classmethod
    def from_dict(cls, config: dict[str, Any], **fixed: Any) -> MixerConfig:
        return cls(**{**model_keys(cls, config, ("S", "C", "L", "patch")), **fixed})


def hidden(gamma: float, n: int) -> int:
    """Width of a mixing MLP's hidden layer: round(gamma * n) (half up), at least 1."""
    return max(1, int(gamma * n + 0.5))


def patch_grid(io: IOSpec, patch: int) -> tuple[int, int, int]:
    """(channels, patches P, patch size c*p*p) of the task's (C, H, W) input; UserError
    when the input is not an image or the patch does not tile it."""
    shape = io.input_shape
    if shape is None or len(shape) != 3:
        raise UserError(f"a Mixer needs image inputs (C, H, W); this task's input shape is {shape}")
    c, h, w = shape
    if h % patch or w % patch:
        raise UserError(f"patch {patch} does not tile the {h}x{w} input")
    return c, (h // patch) * (w // patch), c * patch * patch


def patch_choices(io: IOSpec, min_patches: int = 4, max_patches: int = 256) -> tuple[int, ...]:
    """Patch sides that tile the input into min_patches..max_patches patches."""
    _, h, w = io.input_shape  # type: ignore[misc]
    out = [
        p
        for p in range(1, min(h, w) + 1)
        if h % p == 0 and w % p == 0 and min_patches <= (h // p) * (w // p) <= max_patches
    ]
    return tuple(out) or (math.gcd(h, w),)


def lecun_normal_(weight: torch.Tensor) -> torch.Tensor:
    """Flax's lecun_normal: truncated normal (+-2 std) with variance 1/fan_in."""
    std = math.sqrt(1.0 / weight.shape[1]) / 0.87962566103423978
    return nn.init.trunc_normal_(weight, 0.0, std, -2 * std, 2 * std)


def dense(n_in: int, n_out: int) -> nn.Linear:
    layer = nn.Linear(n_in, n_out)
    lecun_normal_(layer.weight)
    nn.init.zeros_(layer.bias)
    return layer


class PatchEmbed(nn.Module):
    """(B, c*H*W) flat images -> (B, P, C): one linear map applied to every p x p patch
    (Tolstikhin's stride-p convolution; a patch is flattened channel-major like its kernel)."""

    def __init__(self, input_shape: tuple[int, int, int], patch: int, C: int) -> None:
        super().__init__()
        self.shape, self.patch = input_shape, patch
        c = input_shape[0]
        self.proj = dense(c * patch * patch, C)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c, h, w = self.shape
        p = self.patch
        x = x.reshape(-1, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(x.shape[0], (h // p) * (w // p), c * p * p))


class MixingMLP(nn.Module):
    """Acts on the last axis: n_in -> n (mlp: through round(gamma * n) hidden units)."""

    def __init__(self, n_in: int, n: int, gamma: float, mixing: Mixing) -> None:
        super().__init__()
        self.act = nn.GELU(approximate="tanh")
        if mixing == "mlp":
            self.fc1, self.fc2 = dense(n_in, hidden(gamma, n)), dense(hidden(gamma, n), n)
        else:
            self.fc1, self.fc2 = dense(n_in, n), None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.act(self.fc1(x))
        return x if self.fc2 is None else self.fc2(x)


class EntryPermutation(nn.Module):
    """A fixed permutation of all entries of each sample (rows of a (B, n, m) tensor
    flattened to n*m), applied by gathering with a stored index tensor."""

    def __init__(self, n_entries: int, generator: torch.Generator) -> None:
        super().__init__()
        self.register_buffer("index", torch.randperm(n_entries, generator=generator))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, n, m) -> (B, n, m)
        return x.flatten(1).index_select(1, self.index).view_as(x)


class SkipLayer(nn.Module):
    """(B, S_in, C) -> (B, S, C): LN(A X), A an S_in -> S linear map of the tokens (with
    a bias, LeCun-normal as every dense layer here), LN over the channels."""

    def __init__(self, S_in: int, S: int, C: int) -> None:
        super().__init__()
        self.map = dense(S_in, S)
        self.norm = nn.LayerNorm(C, eps=LN_EPS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.map(x.transpose(1, 2)).transpose(1, 2))


class MixerBlock(nn.Module):
    """(B, S_in, C) -> (B, S, C): token mixing (S_in -> S) then channel mixing."""

    def __init__(
        self,
        S_in: int,
        S: int,
        C: int,
        gamma: float,
        mixing: Mixing,
        generator: torch.Generator | None = None,
        skip: str = "none",
    ) -> None:
        super().__init__()
        self.token_residual = S_in == S
        # SkipLayer (S_in != S, skip "linear"): LN(A X), A a linear map of the tokens
        self.skip = SkipLayer(S_in, S, C) if S_in != S and skip == "linear" else None
        self.token_norm = nn.LayerNorm(C, eps=LN_EPS)
        self.token_mix = MixingMLP(S_in, S, gamma, mixing)
        self.channel_norm = nn.LayerNorm(C, eps=LN_EPS)
        self.channel_mix = MixingMLP(C, C, gamma, mixing)
        self.permuted = generator is not None
        if self.permuted:  # RP-Mixer: fixed random permutations around each mixing
            self.token_perm_in = EntryPermutation(S_in * C, generator)
            self.token_perm_out = EntryPermutation(S * C, generator)
            self.channel_perm_in = EntryPermutation(S * C, generator)
            self.channel_perm_out = EntryPermutation(S * C, generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = self.token_norm(x)  # (B, S_in, C)
        if self.permuted:
            t = self.token_perm_in(t)
        t = self.token_mix(t.transpose(1, 2)).transpose(1, 2)  # (B, S, C)
        if self.permuted:
            t = self.token_perm_out(t)
        x = x + t if self.token_residual else t if self.skip is None else self.skip(x) + t
        c = self.channel_norm(x)
        if self.permuted:
            c = self.channel_perm_in(c)
        c = self.channel_mix(c)
        if self.permuted:
            c = self.channel_perm_out(c)
        return x + c


class MixerNet(nn.Module):
    def __init__(self, cfg: MixerConfig, io: IOSpec, seed: int = 0, permute: bool = False) -> None:
        super().__init__()
        _, P, _ = patch_grid(io, cfg.patch)
        self.embed = PatchEmbed(io.input_shape, cfg.patch, cfg.C)  # type: ignore[arg-type]
        g = torch.Generator().manual_seed(int(seed)) if permute else None
        self.blocks = nn.Sequential(
            *(
                MixerBlock(P if i == 0 else cfg.S, cfg.S, cfg.C, cfg.gamma, cfg.mixing, g, cfg.skip)
                for i in range(cfg.L)
            )
        )
        self.norm = nn.LayerNorm(cfg.C, eps=LN_EPS)
        self.flatten = cfg.readout == "flatten"
        self.head = nn.Linear(cfg.head_inputs, io.d_out)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, d_x) -> (B, classes)
        h = self.blocks(self.embed(x))  # (B, S, C)
        h = self.norm(h)
        return self.head(h.flatten(1) if self.flatten else h.mean(1))


# ---------------------------------------------------------------- counting


def _mixing_counts(n_in: int, n: int, width: int, gamma: float, mixing: Mixing) -> tuple[int, int]:
    """(parameters, connections) of one mixing MLP n_in -> n applied to `width` rows."""
    if mixing == "mlp":
        h = hidden(gamma, n)
        weights = n_in * h + h * n
        return weights + h + n, width * weights
    return n_in * n + n, width * n_in * n


def mixer_counts(cfg: MixerConfig, io: IOSpec) -> dict[str, int]:
    """Trainable parameters by part, and connections (weights as edges of the equivalent
    wide MLP, counted once per token/channel they act on; biases and norms excluded)."""
    c_in, P, pd = patch_grid(io, cfg.patch)
    S, C = cfg.S, cfg.C
    token_p = token_c = channel_p = channel_c = 0
    for i in range(cfg.L):
        p, c = _mixing_counts(P if i == 0 else S, S, C, cfg.gamma, cfg.mixing)
        token_p, token_c = token_p + p, token_c + c
        p, c = _mixing_counts(C, C, S, cfg.gamma, cfg.mixing)
        channel_p, channel_c = channel_p + p, channel_c + c
    skip = cfg.skip == "linear" and P != S  # the first block's SkipLayer: A (P -> S) and its LN
    parts = {
        "patch embedding": pd * C + C,
        "token mixing": token_p,
        "channel mixing": channel_p,
        "layer norms": 2 * C * (2 * cfg.L + 1),
        "head": cfg.head_inputs * io.d_out + io.d_out,
        **({"skip layer": P * S + S + 2 * C} if skip else {}),
    }
    return {
        **parts,
        "total": sum(parts.values()),
        "connections": P * pd * C + token_c + channel_c + cfg.head_inputs * io.d_out + (C * P * S if skip else 0),
        "omega (connections per mixing layer, gamma(CS^2+SC^2)/2)": omega(cfg),
    }


OMEGA_LABEL = "connections per layer (omega)"  # `--budget-of omega`, the Mixers' and the SW-MLP's


def omega(cfg: MixerConfig) -> int:
    """Connections per mixing layer, gamma (C S^2 + S C^2) / 2 (gamma 1 for single-layer
    mixing): the mean of a block's token and channel mixing as S*C x S*C matrices."""
    g = cfg.gamma if cfg.mixing == "mlp" else 1
    return int(g * (cfg.C * cfg.S * cfg.S + cfg.S * cfg.C * cfg.C) / 2 + 0.5)


# ---------------------------------------------------------------- the families' shared part


class MixerFamily(Family):
    """parse/build/count of the Mixer families; subclasses fix `mixing` and `permute`.

    Budget: trainable parameters (the project's convention); `search params` also shows
    the connection count and the paper's per-layer Omega. At a fixed budget of either
    kind the width S*C is largest at S = C."""

    key_dims = ("S", "C", "L", "patch")
    outputs = ("logits",)
    default_task = "digits-classify"
    paper = "Hayase & Karakida, Understanding MLP-Mixer as a wide and sparse MLP; Tolstikhin et al., MLP-Mixer"
    permute: ClassVar[bool] = False
    mixings: ClassVar[tuple[str, ...]] = ("mlp",)  # accepted values of the `mixing` key

    def fits(self, io: IOSpec) -> bool:
        return io.output in self.outputs and io.input_shape is not None and len(io.input_shape) == 3

    def parse(self, config: dict[str, Any], io: IOSpec) -> MixerConfig:
        mixing = config.get("mixing", self.mixings[0])
        if mixing not in self.mixings:
            raise UserError(f"{self.name} takes mixing in {{{', '.join(self.mixings)}}}, got {mixing!r}")
        if self.mixings == ("single",) and "gamma" in config:
            raise UserError(f"{self.name} mixes with single layers: it has no gamma")
        cfg = MixerConfig.from_dict(config, mixing=mixing)
        patch_grid(io, cfg.patch)
        return cfg

    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> nn.Module:
        return MixerNet(self.parse(config, io), io, seed, permute=self.permute)

    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        return mixer_counts(self.parse(config, io), io)["total"]

    budget_measures = {"omega": OMEGA_LABEL}

    def count_as(self, measure: str, config: dict[str, Any], io: IOSpec) -> int:
        """ "omega": connections per mixing layer, gamma (C S^2 + S C^2) / 2 (Hayase &
        Karakida's fixed quantity: the S-Mixer seen as a wide MLP of width S*C)."""
        if measure == "omega":
            return omega(self.parse(config, io))
        return super().count_as(measure, config, io)

    def param_breakdown(self, config: dict[str, Any], io: IOSpec) -> dict[str, int]:
        parts = mixer_counts(self.parse(config, io), io)
        del parts["total"]
        return parts
