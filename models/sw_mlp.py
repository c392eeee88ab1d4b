"""SW-MLP: a wide MLP with fixed random sparse weights (Hayase & Karakida, "Understanding
MLP-Mixer as a wide and sparse MLP", ICML 2024).

Two stems (config key `stem`):

"patch", the paper's SW-MLP (appendix A.2.5 and Table S.1), the default on image inputs:
    X_0 = patches(x) W_e + b_e                        (P x C: per-patch linear, as the Mixer)
    h_0 = vec(X_0)                                    (width = P*C, token-major)
    h_l = h_{l-1} + GELU((M_l * W_l) LN(h_{l-1}) + b_l)   for l = 1..L (width -> width)
    y   = W_out mean_P(h_L) + b_out                   (C -> d_out; sigmoid for images)
  Readout (config key `readout`, the values of the Mixers' `readout`, models/mixer_net.py
  READOUTS): "pool", the default, is the paper's: global average pooling over tokens, h_L
  seen as P tokens x C channels (the layout of h_0) and averaged over the P tokens, then a
  C -> d_out linear head. Table S.1 marks GAP for the SW-MLP as for the Mixers; A.2.5
  lists "the per-patch FC layer, vectorization, L static sparse weight FC blocks ..., and
  the last classification FC layer". The paper puts a LayerNorm before the pooling in the
  MLP-Mixer (A.2.1) and states none for the SW-MLP, so there is none here (the Mixers of
  models/mixer_net.py have one). "flatten", the readout before issue 23, is kept as an
  explicit option: y = W_out h_L + b_out, a head over all P*C features (P*C*d_out head
  weights instead of C*d_out; omega unchanged), as the Mixers' "flatten". A config
  without the key reads "pool"; the default space stores the key, "pool" on
  classification tasks and "flatten" on image outputs (ours: the paper's SW-MLP only
  classifies, and a pooled head would make every output pixel from C numbers).
  `p = "s-mixer"` sets the density of the S-Mixer with S = P tokens and C channels seen
  as a wide MLP of width S*C: its token mixing is I_C (x) W (density 1/C), its channel
  mixing V^T (x) I_S (density 1/S), so the twin's density is (1/S + 1/C)/2 and an
  L-block S-Mixer has as many connections as an SW-MLP of 2L layers (the paper compares
  a Mixer and its sparse-MLP twin at equal width). As the Mixer of models/mixer_net.py
  (the S-Mixer it is compared with): LayerNorm eps 1e-6, GELU with the tanh
  approximation, LeCun-normal patch embedding, zero biases, zero-initialised output
  layer. The appendix's formula shows no bias in the sparse layer; we keep one per unit
  (as the S-Mixer's mixing layers have), so the twins differ in the mask (and in the
  LayerNorm the Mixer applies before pooling).
  Sparse weights start as the paper's (sec. 4.3: "We initialize the entries of each
  mask matrix M by i.i.d. Bernoulli random variables with the probability of being
  1/sqrt(p) is p and being 0 is 1 - p. We initialize each weight A by i.i.d. N(0, 1/m)"),
  so a non-zero weight of M * A is N(0, 1/(m p)), m the width. We keep A.2.5's 0/1 mask
  and draw W ~ N(0, 1/(fan_in * p)) (fan_in = m; p the mask's exact density k/m^2):
  M * W has that distribution, std 1/sqrt(fan_in * p). (It is the S-Mixer's scale seen as
  a wide MLP: V ~ N(0, 1/C) in V^T (x) I_S, density 1/S, width S*C: 1/(m p) = 1/C.)

"dense", ours (the default on non-image inputs, and for configs without `stem`):
    h_0 = GELU(W_in x + b_in)                         (d_x -> width, dense)
    h_l = GELU((M_l * W_l) h_{l-1} + b_l)             for l = 1..L (width -> width)
    y   = W_out h_L + b_out                           (width -> d_out; sigmoid for images)
  PyTorch's default init, exact GELU, no residual and no norm, no `readout` key. The
  sparse weights take PyTorch's nn.Linear bound over the non-zero fan-in:
  W ~ U(+-1/sqrt(fan_in * p)), variance 1/(3 fan_in p) (biases U(+-1/sqrt(fan_in))).

M_l is a fixed random 0/1 mask of density p: exactly k = round(p * width^2) of its entries
are 1, at positions drawn uniformly (a Bernoulli(p) mask conditioned on its number of
ones, so the count is known before the model is built; A.2.5: "M is the mask matrix whose
m^2 p entries are randomly chosen"). Masks are buffers regenerated from the trial's seed
and the layer index; masked weights are zero from initialisation and get zero gradients,
so under (Adam)W they stay exactly zero.

Budget convention (the paper's): the budget counts the FREE parameters, i.e. non-zero
weights plus biases (and LayerNorm's scales and shifts):
    dense: d_x*width + width + L*(k + width) + width*d_out + d_out
    patch: c*q*q*C + C + L*(k + 3*width) + C*d_out + d_out   (q: patch side; readout "pool")
           the same with width*d_out + d_out for the head       (readout "flatten")
while the weight tensors hold L*width^2 entries; `search params` shows both. The readout
does not change omega (`--budget-of omega`), the connections per sparse layer, k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models.base import Family, model_keys
from models.families import register_family
from models.mixer_net import LN_EPS, OMEGA_LABEL, READOUTS, PatchEmbed, patch_grid

PRESETS: dict[str, dict[str, Any]] = {
    "digits-small": {"width": 512, "L": 2, "p": 0.05},
    # the twin of an S-Mixer with 16 tokens and 16 channels and 1 block (2 mixing layers)
    "digits-s-mixer-twin": {"stem": "patch", "patch": 2, "C": 16, "L": 2, "p": "s-mixer"},
}
STEMS = ("patch", "dense")
MATCH_S_MIXER = "s-mixer"  # the value of p that takes the S-Mixer twin's density


@dataclass(frozen=True)
class SWMLPConfig:
    L: int  # number of sparse hidden layers (width x width)
    p: float | str  # density of each mask, or "s-mixer" (patch stem): (1/P + 1/C) / 2
    width: int | None = None  # dense stem
    stem: str = "dense"
    patch: int | None = None  # patch stem: patch side in pixels
    C: int | None = None  # patch stem: channels per patch; width = P * C
    readout: str | None = None  # patch stem: "pool" (the paper's GAP; the default) or "flatten"

    def __post_init__(self) -> None:
        if self.stem not in STEMS:
            raise UserError(f"stem must be one of {', '.join(STEMS)}, got {self.stem!r}")
        need = ("width",) if self.stem == "dense" else ("patch", "C")
        other = ("patch", "C", "readout") if self.stem == "dense" else ("width",)
        given = [n for n in other if getattr(self, n) is not None]
        if given:
            keys = ", ".join((*need, "L", "p") + (() if self.stem == "dense" else ("readout",)))
            raise UserError(f"stem {self.stem!r} takes no {', '.join(given)} (its keys: {keys})")
        if self.stem == "patch":
            if self.readout is None:
                object.__setattr__(self, "readout", READOUTS[0])  # "pool", the paper's
            if self.readout not in READOUTS:
                raise UserError(f"readout must be one of {', '.join(READOUTS)}, got {self.readout!r}")
        for name in ("L", *need):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UserError(f"{name} must be a positive integer, got {v!r}")
        if self.p == MATCH_S_MIXER:
            if self.stem != "patch":
                raise UserError(f"p = {MATCH_S_MIXER!r} (the S-Mixer twin's density) needs stem 'patch'")
        elif isinstance(self.p, bool) or not isinstance(self.p, (int, float)) or not 0 < self.p <= 1:
            raise UserError(f"p (mask density) must be a number in (0, 1] or {MATCH_S_MIXER!r}, got {self.p!r}")

    def tokens(self, io: IOSpec) -> int:
        """P, the patches of the input (patch stem)."""
        return patch_grid(io, int(self.patch))[1]  # type: ignore[arg-type]

    def hidden_width(self, io: IOSpec) -> int:
        return int(self.width) if self.stem == "dense" else self.tokens(io) * int(self.C)  # type: ignore[arg-type]

    def head_inputs(self, io: IOSpec) -> int:
        """Features the output layer reads: C after pooling over the P tokens (patch stem,
        readout "pool"), else the whole width."""
        if self.stem == "patch" and self.readout == "pool":
            return int(self.C)  # type: ignore[arg-type]
        return self.hidden_width(io)

    def density(self, io: IOSpec) -> float:
        if self.p == MATCH_S_MIXER:
            return (1.0 / self.tokens(io) + 1.0 / int(self.C)) / 2.0  # type: ignore[arg-type]
        return float(self.p)

    def nonzeros(self, io: IOSpec) -> int:
        """Ones in each mask: round(p * width^2), at least 1."""
        w = self.hidden_width(io)
        return max(1, int(self.density(io) * w * w + 0.5))

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> SWMLPConfig:
        stem = config.get("stem", "dense")
        keys = ("width", "L", "p") if stem == "dense" else ("patch", "C", "L", "p")
        return cls(**model_keys(cls, config, keys))  # readout: optional (patch stem)


def random_mask(n_out: int, n_in: int, nonzeros: int, generator: torch.Generator) -> torch.Tensor:
    """(n_out, n_in) float 0/1 mask with exactly `nonzeros` ones at uniform positions."""
    mask = torch.zeros(n_out * n_in)
    mask[torch.randperm(n_out * n_in, generator=generator)[:nonzeros]] = 1.0
    return mask.view(n_out, n_in)


INITS = ("uniform", "normal")  # MaskedLinear's weight init: the dense stem's, the paper's


class MaskedLinear(nn.Module):
    """y = (M * W) x + b with a fixed 0/1 mask M (a buffer, part of the state dict), p the
    mask's density, on the non-zero entries:
    init "uniform" (the dense stem's): W ~ U(+-1/sqrt(fan_in * p)), variance 1/(3 fan_in p);
    init "normal" (the paper's, sec. 4.3; the patch stem's): W ~ N(0, 1/(fan_in * p)).
    b ~ U(+-1/sqrt(fan_in)), or zero (`zero_bias`)."""

    def __init__(
        self, n_in: int, n_out: int, mask: torch.Tensor, zero_bias: bool = False, init: str = "uniform"
    ) -> None:
        super().__init__()
        if init not in INITS:
            raise ValueError(f"init must be one of {', '.join(INITS)}, got {init!r}")
        self.weight = nn.Parameter(torch.empty(n_out, n_in))
        self.bias = nn.Parameter(torch.empty(n_out))
        self.register_buffer("mask", mask)
        density = float(mask.mean())
        scale = 1.0 / math.sqrt(n_in * density)  # the uniform's bound, the normal's std
        with torch.no_grad():
            if init == "normal":
                nn.init.normal_(self.weight, 0.0, scale).mul_(self.mask)
            else:
                nn.init.uniform_(self.weight, -scale, scale).mul_(self.mask)
            if zero_bias:
                nn.init.zeros_(self.bias)
            else:
                nn.init.uniform_(self.bias, -1.0 / math.sqrt(n_in), 1.0 / math.sqrt(n_in))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight * self.mask, self.bias)

    def free_params(self) -> int:
        return int(self.mask.count_nonzero()) + self.bias.numel()


def _masks(cfg: SWMLPConfig, io: IOSpec, seed: int) -> list[torch.Tensor]:
    w, k = cfg.hidden_width(io), cfg.nonzeros(io)
    return [random_mask(w, w, k, torch.Generator().manual_seed(int(seed) * 1_000_003 + i)) for i in range(cfg.L)]


class SWMLP(nn.Module):
    """The dense stem (ours): dense in, L sparse layers, dense out; no norm, no residual."""

    def __init__(self, cfg: SWMLPConfig, io: IOSpec, seed: int = 0) -> None:
        super().__init__()
        self.sigmoid_out = io.output == "image"
        width = cfg.hidden_width(io)
        self.w_in = nn.Linear(io.d_in, width)
        self.layers = nn.ModuleList(MaskedLinear(width, width, m) for m in _masks(cfg, io, seed))
        self.w_out = nn.Linear(width, io.d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, d_x) -> (B, d_out)
        h = F.gelu(self.w_in(x))
        for layer in self.layers:
            h = F.gelu(layer(h))
        y = self.w_out(h)
        return torch.sigmoid(y) if self.sigmoid_out else y

    def budgeted_params(self) -> int:
        """Free parameters, read off the module: dense layers' numel + masks' ones + biases."""
        dense_ = sum(p.numel() for m in (self.w_in, self.w_out) for p in m.parameters())
        return dense_ + sum(layer.free_params() for layer in self.layers)


class PatchSWMLP(nn.Module):
    """The paper's SW-MLP (A.2.5, Table S.1): per-patch linear in, flatten, residual sparse
    layers h + GELU((M * W) LN(h) + b), mean over the P tokens (readout "pool") or the
    whole width ("flatten"), linear out."""

    def __init__(self, cfg: SWMLPConfig, io: IOSpec, seed: int = 0) -> None:
        super().__init__()
        self.sigmoid_out = io.output == "image"
        width = cfg.hidden_width(io)
        self.tokens, self.channels = cfg.tokens(io), int(cfg.C)  # type: ignore[arg-type]
        self.pool = cfg.readout == "pool"
        self.embed = PatchEmbed(io.input_shape, int(cfg.patch), int(cfg.C))  # type: ignore[arg-type]
        self.norms = nn.ModuleList(nn.LayerNorm(width, eps=LN_EPS) for _ in range(cfg.L))
        self.layers = nn.ModuleList(
            MaskedLinear(width, width, m, zero_bias=True, init="normal") for m in _masks(cfg, io, seed)
        )
        self.act = nn.GELU(approximate="tanh")
        self.w_out = nn.Linear(cfg.head_inputs(io), io.d_out)
        nn.init.zeros_(self.w_out.weight)  # as the Mixer's head
        nn.init.zeros_(self.w_out.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, d_x) -> (B, d_out)
        h = self.embed(x).flatten(1)  # (B, P, C) -> (B, P*C), token-major
        for norm, layer in zip(self.norms, self.layers):
            h = h + self.act(layer(norm(h)))
        if self.pool:  # global average pooling: (B, P*C) as (B, P, C), mean over the P tokens
            h = h.reshape(-1, self.tokens, self.channels).mean(1)
        y = self.w_out(h)
        return torch.sigmoid(y) if self.sigmoid_out else y

    def budgeted_params(self) -> int:
        """Free parameters, read off the module: dense parts' numel + masks' ones + biases."""
        dense_ = sum(p.numel() for m in (self.embed, self.norms, self.w_out) for p in m.parameters())
        return dense_ + sum(layer.free_params() for layer in self.layers)


def count_sw_mlp(cfg: SWMLPConfig, io: IOSpec) -> int:
    w, k = cfg.hidden_width(io), cfg.nonzeros(io)
    if cfg.stem == "dense":
        return io.d_in * w + w + cfg.L * (k + w) + w * io.d_out + io.d_out
    patch_size = patch_grid(io, int(cfg.patch))[2]  # c*q*q  # type: ignore[arg-type]
    head = cfg.head_inputs(io) * io.d_out + io.d_out  # C*d_out + d_out pooled, width*d_out + d_out flattened
    return patch_size * int(cfg.C) + int(cfg.C) + cfg.L * (k + 3 * w) + head  # type: ignore[arg-type]


@register_family
class SparseWideMLP(Family):
    name = "sw-mlp"
    description = "wide MLP with fixed random sparse (density p) hidden weights; budget = non-zero parameters"
    paper = "Hayase & Karakida, Understanding MLP-Mixer as a wide and sparse MLP"
    default_task = "digits-classify"
    key_dims = ("patch", "C", "L")  # the patch stem's (the dense stem's width is in its config)
    param_convention = "non-zero parameters"
    outputs = ("image", "logits", "regression")

    def parse(self, config: dict[str, Any], io: IOSpec) -> SWMLPConfig:
        cfg = SWMLPConfig.from_dict(config)
        if cfg.stem == "patch":
            cfg.hidden_width(io)  # UserError unless the input is an image the patch tiles
        return cfg

    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> nn.Module:
        cfg = self.parse(config, io)
        return (PatchSWMLP if cfg.stem == "patch" else SWMLP)(cfg, io, seed)

    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        return count_sw_mlp(self.parse(config, io), io)

    budget_measures = {"omega": OMEGA_LABEL}

    def count_as(self, measure: str, config: dict[str, Any], io: IOSpec) -> int:
        """ "omega": connections per sparse layer, round(p * width^2) (the paper's fixed
        quantity; the S-Mixer twin's equals its S-Mixer's omega). The readout does not
        enter it."""
        if measure == "omega":
            return self.parse(config, io).nonzeros(io)
        return super().count_as(measure, config, io)

    def param_breakdown(self, config: dict[str, Any], io: IOSpec) -> dict[str, int]:
        c = self.parse(config, io)
        free, w, k = count_sw_mlp(c, io), c.hidden_width(io), c.nonzeros(io)
        tensor = free + c.L * (w * w - k)
        out = {
            "width": w,
            "tensor size (all weight entries + biases)": tensor,
            "masked (always zero)": tensor - free,
            "non-zero connections per sparse layer": k,
        }
        if c.stem == "patch":
            out["head"] = c.head_inputs(io) * io.d_out + io.d_out
        if c.p == MATCH_S_MIXER:
            out["density (1/S + 1/C)/2, per mille"] = round(1000 * c.density(io))
        return out
