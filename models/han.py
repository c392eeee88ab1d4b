"""HanNet: a deep network of Householder-absolute layers (Yu & Zhang, "A lightweight and
gradient-stable neural layer"; Han layer in models/han_layer.py).

    h_0 = |W_in x + b_in|                  (d_x -> width, dense; or h_0 = x, width = d_x,
                                            without the input layer: `input_layer=false`)
    h_l = |H(u_l) h_{l-1} + b_l|           for l = 1..depth (Han layers, 2*width params each)
    y   = W_out h_depth + b_out            (width -> d_out; sigmoid for image outputs)

As in the authors' code (checkerboard_experiments/ann.py, HouseholderNet): biases on
every layer, |.| after the input layer and every Han layer, every nn.Linear weight
initialised with `nn.init.orthogonal_` (biases: PyTorch's default), Han vectors a random
unit vector. Their checkerboard script also makes the first and last hidden layers of its
width-30 stack dense; here all `depth` hidden layers are Han layers, as the paper
describes HanNet. Trainable parameters:
    [d_x*width + width] + 2*width*depth + width*d_out + d_out.
Without the input layer the Han layers act on the input itself (width = d_x): the paper's
MNIST HanNet of about 40K parameters is of that kind (784 wide, 20 Han layers: 39,210).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import torch
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models.base import Family
from models.han_layer import Abs, HanLayer, han_params
from models.registry import register_family

PRESETS: dict[str, dict[str, Any]] = {
    "checkerboard-paper": {"width": 30, "depth": 20},  # the authors' checkerboard HanNet
    "regression-paper": {"width": 100, "depth": 20},  # their UCI regression runs (README)
    "regression-200": {"width": 200, "depth": 20},  # their regression script's default width
    "mnist-paper": {"input_layer": False, "width": 784, "depth": 20},  # Han layers on the pixels: 39.2K
}


@dataclass(frozen=True)
class HanNetConfig:
    width: int
    depth: int  # number of Han layers
    input_layer: bool = True  # False: no dense input layer, h_0 = x (width must be d_x)

    def __post_init__(self) -> None:
        for name in ("width", "depth"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UserError(f"{name} must be a positive integer, got {v!r}")
        if not isinstance(self.input_layer, bool):
            raise UserError(f"input_layer must be true or false, got {self.input_layer!r}")

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> "HanNetConfig":
        missing = [n for n in ("width", "depth") if n not in config]
        if missing:
            raise UserError(f"config is missing {', '.join(missing)}")
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in config.items() if k in names})


class HanNet(nn.Module):
    def __init__(self, cfg: HanNetConfig, io: IOSpec) -> None:
        super().__init__()
        self.sigmoid_out = io.output == "image"
        self.w_in = nn.Linear(io.d_in, cfg.width) if cfg.input_layer else None
        self.act_in = Abs()
        self.layers = nn.Sequential(*(HanLayer(cfg.width) for _ in range(cfg.depth)))
        self.w_out = nn.Linear(cfg.width, io.d_out)
        for m in (self.w_in, self.w_out):
            if m is not None:
                nn.init.orthogonal_(m.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, d_x) -> (B, d_out)
        h = self.layers(self.act_in(self.w_in(x)) if self.w_in is not None else x)  # (B, width)
        y = self.w_out(h)
        return torch.sigmoid(y) if self.sigmoid_out else y


def count_hannet(cfg: HanNetConfig, io: IOSpec) -> int:
    w_in = io.d_in * cfg.width + cfg.width if cfg.input_layer else 0
    return w_in + cfg.depth * han_params(cfg.width) + cfg.width * io.d_out + io.d_out


@register_family
class Han(Family):
    name = "han"
    description = "HanNet: dense input layer, `depth` Householder-absolute layers (2*width params each), dense output"
    paper = "Yu & Zhang, A lightweight and gradient-stable neural layer"
    default_task = "checkerboard"
    key_dims = ("width", "depth")
    outputs = ("image", "logits", "regression")

    def parse(self, config: dict[str, Any], io: IOSpec) -> HanNetConfig:
        cfg = HanNetConfig.from_dict(config)
        if not cfg.input_layer and cfg.width != io.d_in:
            raise UserError(f"input_layer false needs width = d_x = {io.d_in} (the Han layers act on the input), "
                            f"got width={cfg.width}")
        return cfg

    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> nn.Module:
        return HanNet(self.parse(config, io), io)

    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        return count_hannet(self.parse(config, io), io)

    def param_breakdown(self, config: dict[str, Any], io: IOSpec) -> dict[str, int]:
        c = self.parse(config, io)
        return {
            "input layer": io.d_in * c.width + c.width if c.input_layer else 0,
            "han layers": c.depth * han_params(c.width),
            "output layer": c.width * io.d_out + io.d_out,
            "dense equivalent of the han layers": c.depth * (c.width * c.width + c.width),
        }
