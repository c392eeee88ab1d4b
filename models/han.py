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

`dense_layers` (default "none": every hidden layer after the input a Han layer, as the
paper describes HanNet) or "authors": the checkerboard HouseholderNet of the authors' code
(checkerboard_experiments/ann.py, `_make_layers`: a layer is dense when it changes the
width, is the second or is the last hidden layer), so of the `depth` layers after the
input the first and the last are dense (Linear(width, width) + bias + activation,
orthogonal init like every nn.Linear there) and the rest Han layers. Their "100x20"
(main.py's [w]*20, 20 hidden layers with the input layer) is width 100, depth 19 here:
300 + 2 * 10,100 + 17 * 200 + 202 = 24,102 parameters; the paper's Table 3 and Figure 6
come from that code. With depth 1 the one layer is dense.

`activation` (default "abs", the HanNet above) replaces |.| after the input layer and in
every Han layer by another of models/activations.py, as the `activation` argument of the
authors' HouseholderNet does (ABS or ReLU there): Table 3 (Sec. 4.2) rows (b) ReLU,
(c) MaxMin and (d) GroupSort(5) on Householder layers. MaxMin and GroupSort need a width
divisible by 2 and by 5. Activations have no parameters: the count does not change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models.activations import check_activation, make_activation
from models.base import Family, model_keys
from models.families import register_family
from models.han_layer import HanLayer, han_params

DENSE_LAYOUTS = ("none", "authors")

PRESETS: dict[str, dict[str, Any]] = {
    "checkerboard-paper": {"width": 30, "depth": 20},  # the width and depth of their checkerboard HanNet, all Han
    # their checkerboard HouseholderNet([30]*20) as their code builds it (dense second and last hidden layers)
    "checkerboard-authors": {"width": 30, "depth": 19, "dense_layers": "authors"},
    "table3-a": {"width": 100, "depth": 19, "dense_layers": "authors"},  # Table 3 (a), 100x20 HH + ABS: 24,102
    "regression-paper": {"width": 100, "depth": 20},  # their UCI regression runs (README)
    "regression-200": {"width": 200, "depth": 20},  # their regression script's default width
    "mnist-paper": {"input_layer": False, "width": 784, "depth": 20},  # Han layers on the pixels: 39.2K
}


@dataclass(frozen=True)
class HanNetConfig:
    width: int
    depth: int  # number of Han layers
    input_layer: bool = True  # False: no dense input layer, h_0 = x (width must be d_x)
    activation: str = "abs"  # models.activations.ACTIVATIONS; Table 3 (b)-(d): relu, maxmin, groupsort
    dense_layers: str = "none"  # DENSE_LAYOUTS: "authors" makes the first and last after the input dense

    def __post_init__(self) -> None:
        for name in ("width", "depth"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UserError(f"{name} must be a positive integer, got {v!r}")
        if not isinstance(self.input_layer, bool):
            raise UserError(f"input_layer must be true or false, got {self.input_layer!r}")
        check_activation(self.activation, self.width)
        if self.dense_layers not in DENSE_LAYOUTS:
            raise UserError(f"dense_layers must be one of {', '.join(DENSE_LAYOUTS)}, got {self.dense_layers!r}")
        if self.dense_layers == "authors" and not self.input_layer:
            raise UserError(
                "dense_layers 'authors' needs the dense input layer (input_layer true), as the authors' code"
            )

    @property
    def dense(self) -> frozenset[int]:
        """Indices (0 .. depth-1) of the hidden layers after the input that are dense."""
        return frozenset({0, self.depth - 1}) if self.dense_layers == "authors" else frozenset()

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> HanNetConfig:
        return cls(**model_keys(cls, config, ("width", "depth")))


class HanNet(nn.Module):
    def __init__(self, cfg: HanNetConfig, io: IOSpec) -> None:
        super().__init__()
        self.sigmoid_out = io.output == "image"
        self.w_in = nn.Linear(io.d_in, cfg.width) if cfg.input_layer else None
        self.act_in = make_activation(cfg.activation, cfg.width)
        self.layers = nn.Sequential(
            *(
                nn.Sequential(nn.Linear(cfg.width, cfg.width), make_activation(cfg.activation, cfg.width))
                if i in cfg.dense
                else HanLayer(cfg.width, activation=cfg.activation)
                for i in range(cfg.depth)
            )
        )
        self.w_out = nn.Linear(cfg.width, io.d_out)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, d_x) -> (B, d_out)
        h = self.layers(self.act_in(self.w_in(x)) if self.w_in is not None else x)  # (B, width)
        y = self.w_out(h)
        return torch.sigmoid(y) if self.sigmoid_out else y


def count_hannet(cfg: HanNetConfig, io: IOSpec) -> int:
    w_in = io.d_in * cfg.width + cfg.width if cfg.input_layer else 0
    n_dense = len(cfg.dense)
    return (
        w_in
        + (cfg.depth - n_dense) * han_params(cfg.width)
        + n_dense * (cfg.width * cfg.width + cfg.width)
        + cfg.width * io.d_out
        + io.d_out
    )


@register_family
class Han(Family):
    name = "han"
    description = "HanNet: dense input layer, `depth` Householder-absolute layers (2*width params each), dense output"
    paper = "Yu & Zhang, A lightweight and gradient-stable neural layer"
    default_task = "checkerboard"
    key_dims = ("width", "depth")
    outputs = ("image", "logits", "regression")
    fuses = "identical shapes"

    def parse(self, config: dict[str, Any], io: IOSpec) -> HanNetConfig:
        cfg = HanNetConfig.from_dict(config)
        if not cfg.input_layer and cfg.width != io.d_in:
            raise UserError(
                f"input_layer false needs width = d_x = {io.d_in} (the Han layers act on the input), "
                f"got width={cfg.width}"
            )
        return cfg

    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> nn.Module:
        return HanNet(self.parse(config, io), io)

    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        return count_hannet(self.parse(config, io), io)

    def fusion_key(self, config: dict[str, Any], io: IOSpec) -> tuple[str, HanNetConfig]:
        """Identical shapes fuse (models/han_fused.py); each member keeps its lr and weight decay."""
        return ("han", self.parse(config, io))

    def fuse(self, members: list[nn.Module], configs: list[dict[str, Any]], io: IOSpec) -> nn.Module:
        from models.han_fused import FusedHanNet

        return FusedHanNet(members)

    def param_breakdown(self, config: dict[str, Any], io: IOSpec) -> dict[str, int]:
        c = self.parse(config, io)
        return {
            "input layer": io.d_in * c.width + c.width if c.input_layer else 0,
            "han layers": (c.depth - len(c.dense)) * han_params(c.width),
            "dense hidden layers": len(c.dense) * (c.width * c.width + c.width),
            "output layer": c.width * io.d_out + io.d_out,
            "dense equivalent of the han layers": c.depth * (c.width * c.width + c.width),
        }
