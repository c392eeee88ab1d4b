"""The U-shaped token backbone shared by the class-conditional diffusion families
(lmlp, uvit, mixer-block): a denoiser `model(x_t, t, y) -> predicted noise`.

Follows U-ViT (Bao et al., "All are worth words: a ViT backbone for diffusion models",
CVPR 2023; github baofff/U-ViT, libs/uvit.py) as the L-MLP authors reuse it (Hu &
Rostami, "Lateralization MLP: a simple brain-inspired architecture for diffusion", 2024;
github zizhao-hu/L-MLP, libs/f2.py, class ULMLP). Only the block type differs between the
families; everything here is shared, so their Pareto fronts compare blocks like for like.

    patches = Conv2d(C, D, k=p, stride=p)(x_t)             (B, N, D), N = (H/p)(W/p)
    time    = timestep_embedding(t, D)                     (B, 1, D)  sinusoidal, no params
    label   = Embedding(K + 1, D)(y)                       (B, 1, D)  index K = "no class"
    x       = cat(time, label, patches) + pos_embed        (B, L, D), L = 2 + N
    in-blocks (depth // 2), each output pushed on a skip stack
    mid-block
    out-blocks (depth // 2), out-block i gets skips.pop() (LIFO: in-block n-1-i's output)
    x       = Linear(D, p*p*C)(LayerNorm(x))[:, 2:]        (B, N, p*p*C), patch order (p1 p2 C)
    eps     = Conv2d(C, C, 3, padding=1)(unpatchify(x))    (B, C, H, W)

Where we follow the authors' code: Conv2d patch embedding with bias; the sinusoidal
`timestep_embedding` (half = D // 2, cos then sin, zero-pad odd D) with U-ViT's default
`mlp_time_embed=False` (time_embed is the identity); extra tokens first and dropped before
unpatchify; the final 3x3 conv (U-ViT's `conv=True`); `_init_weights` (every Linear
trunc-normal std .02 with zero bias, LayerNorm weight 1 / bias 0, pos_embed trunc-normal
std .02; convs and the label Embedding keep PyTorch's default init); LayerNorm eps 1e-5,
exact GELU. Token order time, label, patches as in ULMLP (time, context, patches); U-ViT
puts the label first, which a learned pos_embed makes immaterial.

Long skips (`skip`): "add" (ULMLP's; the default of lmlp and mixer-block) -- the out-block
starts with x = x + skip; "concat" (U-ViT's original skip_linear; the default of uvit, see
models/uvit.py) -- x = Linear(2D, D)(cat[x, skip]). Each family defaults to its authors'
choice; set `skip` to compare the blocks with the same skips.

`depth` is the number of blocks and is odd (depth // 2 in, 1 middle, depth // 2 out). The
authors' `depth` argument builds 2 (depth // 2) + 1 blocks: U-ViT's CIFAR-10 depth=12 and
ULMLP's depth=16 are our 13 and 17. `patch` must tile H and W.

Trainable parameters of the shared part (C channels, K classes, N patches, L = N + 2
tokens, n = depth // 2):
    patch embedding  C p^2 D + D
    label embedding  (K + 1) D
    pos embedding    L D
    skip merges      n (2 D^2 + D)        ("concat" only)
    head             2D + D p^2 C + p^2 C + 9 C^2 + C
plus depth blocks of the family's own count.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import torch
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models.base import Family, model_keys

SkipMode = Literal["add", "concat"]
EXTRAS = 2  # time token + label token

# Named sizes of the U-shaped backbone, one table for its three families (lmlp, uvit,
# mixer-block: each exports it as its PRESETS), so that they compare at equal sizes.
UBACKBONE_PRESETS: dict[str, dict[str, Any]] = {
    "digits-small": {"D": 64, "depth": 5, "patch": 2, "mlp_ratio": 4},
    "mnist-small": {"D": 128, "depth": 7, "patch": 4, "mlp_ratio": 4},
    "cifar10-medium": {"D": 256, "depth": 13, "patch": 2, "mlp_ratio": 4},
}


# ---------------------------------------------------------------- config


def positive_int(name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise UserError(f"{name} must be a positive integer, got {v!r}")


def positive_number(name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < math.inf:
        raise UserError(f"{name} must be a positive number, got {v!r}")


@dataclass(frozen=True)
class UBackboneConfig:
    D: int  # token width (U-ViT's embed_dim)
    depth: int  # blocks: depth // 2 in, 1 middle, depth // 2 out (odd)
    patch: int  # patch side in pixels
    mlp_ratio: float = 4  # MLP hidden = int(D * mlp_ratio), as timm's Mlp in U-ViT
    skip: SkipMode = "add"

    def __post_init__(self) -> None:
        for name in ("D", "depth", "patch"):
            positive_int(name, getattr(self, name))
        if self.depth % 2 == 0:
            raise UserError(
                f"depth must be odd (depth//2 in-blocks, a middle block, depth//2 out-blocks), got {self.depth}"
            )
        positive_number("mlp_ratio", self.mlp_ratio)
        if self.hidden < 1:
            raise UserError(f"mlp_ratio {self.mlp_ratio} gives an empty MLP at D={self.D} (int(D*mlp_ratio) = 0)")
        if self.skip not in ("add", "concat"):
            raise UserError(f"skip must be 'add' or 'concat', got {self.skip!r}")

    @property
    def hidden(self) -> int:
        return int(self.D * self.mlp_ratio)

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> UBackboneConfig:
        return cls(**model_keys(cls, config, ("D", "depth", "patch")))


def token_grid(io: IOSpec, patch: int) -> tuple[int, int, int]:
    """(channels C, patches N, tokens L = N + 2) of the task's (C, H, W) images; UserError
    when the task is not class-conditional images or the patch does not tile them."""
    shape = io.input_shape
    if shape is None or len(shape) != 3:
        raise UserError(
            f"a U-shaped diffusion backbone needs image inputs (C, H, W); this task's input shape is {shape}"
        )
    if not isinstance(io.num_classes, int) or io.num_classes < 1:
        raise UserError("a U-shaped diffusion backbone is class-conditional; this task has no num_classes")
    c, h, w = shape
    if h % patch or w % patch:
        raise UserError(f"patch {patch} does not tile the {h}x{w} image")
    n = (h // patch) * (w // patch)
    return c, n, n + EXTRAS


# ---------------------------------------------------------------- modules


def timestep_embedding(t: torch.Tensor, dim: int, max_period: float = 10000) -> torch.Tensor:
    """(B,) float timesteps -> (B, dim) sinusoidal embedding, as U-ViT's / ULMLP's."""
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = t[:, None].float() * freqs[None]
    emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if dim % 2:
        emb = torch.cat([emb, torch.zeros_like(emb[:, :1])], dim=-1)
    return emb


def unpatchify(x: torch.Tensor, c: int, h: int, w: int, p: int) -> torch.Tensor:
    """(B, h*w, p*p*c) patch vectors in (p1 p2 C) order -> (B, c, h*p, w*p) images
    (U-ViT's einops 'B (h w) (p1 p2 C) -> B C (h p1) (w p2)')."""
    b = x.shape[0]
    x = x.reshape(b, h, w, p, p, c).permute(0, 5, 1, 3, 2, 4)  # B C h p1 w p2
    return x.reshape(b, c, h * p, w * p)


class Mlp(nn.Module):
    """timm's Mlp as used by U-ViT and ULMLP: Linear -> GELU -> Linear (dropout 0)."""

    def __init__(self, d: int, hidden: int, d_out: int | None = None) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, d if d_out is None else d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class UBlock(nn.Module):
    """Base of the blocks: `forward(x, skip=None)`; out-blocks are built with `skip` set
    and merge the long skip first ("add": x + skip; "concat": skip_linear(cat[x, skip]))."""

    def __init__(self, D: int, skip: SkipMode | None) -> None:
        super().__init__()
        self.skip_mode = skip
        self.skip_linear = nn.Linear(2 * D, D) if skip == "concat" else None

    def merge_skip(self, x: torch.Tensor, skip: torch.Tensor | None) -> torch.Tensor:
        if skip is None:
            return x
        if self.skip_linear is not None:
            return self.skip_linear(torch.cat([x, skip], dim=-1))
        return x + skip


BlockFactory = Callable[[SkipMode | None], UBlock]  # skip mode of an out-block, None otherwise


class UBackbone(nn.Module):
    """The U-shaped denoiser: (x_t (B, C, H, W), t (B,), y (B,)) -> noise (B, C, H, W)."""

    def __init__(self, cfg: UBackboneConfig, io: IOSpec, make_block: BlockFactory) -> None:
        super().__init__()
        c, n, L = token_grid(io, cfg.patch)
        _, h, w = io.input_shape  # type: ignore[misc]
        p, D = cfg.patch, cfg.D
        self.image_shape, self.patch, self.D, self.extras = (c, h, w), p, D, EXTRAS
        self.patch_embed = nn.Conv2d(c, D, kernel_size=p, stride=p)
        self.time_embed = nn.Identity()  # U-ViT's mlp_time_embed=False
        self.label_emb = nn.Embedding(io.num_classes + 1, D)  # type: ignore[operator]  # index K: null
        self.pos_embed = nn.Parameter(torch.zeros(1, L, D))
        self.in_blocks = nn.ModuleList([make_block(None) for _ in range(cfg.depth // 2)])
        self.mid_block = make_block(None)
        self.out_blocks = nn.ModuleList([make_block(cfg.skip) for _ in range(cfg.depth // 2)])
        self.norm = nn.LayerNorm(D)
        self.decoder_pred = nn.Linear(D, p * p * c)
        self.final_layer = nn.Conv2d(c, c, 3, padding=1)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m: nn.Module) -> None:  # U-ViT's _init_weights
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        c, h, w = self.image_shape
        p = self.patch
        x = self.patch_embed(x).flatten(2).transpose(1, 2)  # (B, N, D)
        time = self.time_embed(timestep_embedding(t, self.D).to(x.dtype)).unsqueeze(1)  # (B, 1, D)
        label = self.label_emb(y).unsqueeze(1)  # (B, 1, D)
        x = torch.cat([time, label, x], dim=1) + self.pos_embed  # (B, L, D)
        skips = []
        for blk in self.in_blocks:
            x = blk(x)
            skips.append(x)
        x = self.mid_block(x)
        for blk in self.out_blocks:
            x = blk(x, skips.pop())
        x = self.decoder_pred(self.norm(x))[:, self.extras :]  # (B, N, p*p*C)
        return self.final_layer(unpatchify(x, c, h // p, w // p, p))  # (B, C, H, W)


# ---------------------------------------------------------------- the families' shared part


def mlp_params(d: int, hidden: int) -> int:
    """Linear(d, hidden) + Linear(hidden, d), with biases."""
    return 2 * d * hidden + hidden + d


class UBackboneFamily(Family):
    """parse/build/count of the U-shaped diffusion families. A subclass sets `config_cls`
    and writes its block: `make_block(cfg, L)` and `block_counts(cfg, L)` (the trainable
    parameters of one block without the skip merge, and of its token-mixing part)."""

    outputs = ("noise",)
    key_dims = ("D", "depth", "patch", "mlp_ratio")
    default_task = "mnist-diffusion"
    config_cls: ClassVar[type[UBackboneConfig]] = UBackboneConfig

    def fits(self, io: IOSpec) -> bool:
        return (
            io.output in self.outputs
            and io.input_shape is not None
            and len(io.input_shape) == 3
            and isinstance(io.num_classes, int)
            and io.num_classes >= 1
        )

    def parse(self, config: dict[str, Any], io: IOSpec) -> UBackboneConfig:
        cfg = self.config_cls.from_dict(config)
        token_grid(io, cfg.patch)
        return cfg

    @abstractmethod
    def make_block(self, cfg: Any, L: int) -> BlockFactory:
        """The factory of this family's blocks on L tokens."""

    @abstractmethod
    def block_counts(self, cfg: Any, L: int) -> tuple[int, int]:
        """(trainable parameters of one block without its skip merge, their token-mixing part)."""

    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> nn.Module:
        cfg = self.parse(config, io)
        _, _, L = token_grid(io, cfg.patch)
        with torch.random.fork_rng(devices=[]):  # deterministic given seed; global RNG untouched
            torch.manual_seed(int(seed))
            return UBackbone(cfg, io, self.make_block(cfg, L))

    def counts(self, config: dict[str, Any], io: IOSpec) -> dict[str, int]:
        """Trainable parameters by part (the parts sum to the total) and the token-mixing
        share of the blocks."""
        cfg = self.parse(config, io)
        c, n, L = token_grid(io, cfg.patch)
        p, D = cfg.patch, cfg.D
        block, token = self.block_counts(cfg, L)
        pp = p * p * c
        return {
            "patch embedding": pp * D + D,
            "label embedding": (io.num_classes + 1) * D,  # type: ignore[operator]
            "pos embedding": L * D,
            "blocks": cfg.depth * block,
            "skip merges": (cfg.depth // 2) * (2 * D * D + D) if cfg.skip == "concat" else 0,
            "head": 2 * D + D * pp + pp + 9 * c * c + c,
            "token mixing (in blocks)": cfg.depth * token,
        }

    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        parts = self.counts(config, io)
        return sum(v for k, v in parts.items() if k != "token mixing (in blocks)")

    def param_breakdown(self, config: dict[str, Any], io: IOSpec) -> dict[str, int]:
        return self.counts(config, io)

    def shape_violation(self, config: dict[str, Any], io: IOSpec) -> str | None:
        try:
            self.parse(config, io)
        except UserError as e:
            return str(e)
        return None
