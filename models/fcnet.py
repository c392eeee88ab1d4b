"""FCNet: the plain fully connected network HanNet is compared with (Yu & Zhang, "A
lightweight and gradient-stable neural layer", Sec. 4, Fig. 6, Table 3 and Sec. 4.3).

    h_1 = act(W_1 x + b_1)                  (d_x -> width: the first hidden layer)
    h_l = act(W_l h_{l-1} + b_l)            for l = 2..depth (width -> width, square W_l)
    y   = W_out h_depth + b_out             (width -> d_out; sigmoid for image outputs)

`depth` counts the hidden layers IN TOTAL, the input layer d_x -> width included, as the
authors' code does (checkerboard_experiments/ann.py, `Net(nnstructure)`: one
Linear + activation per entry of `nnstructure`, the first from the input, then the
`classifer` Linear): Table 3's "100x20" framework is width 100, depth 20, i.e. one
2 -> 100 layer, 19 square 100 x 100 layers and the 100 -> 2 readout (21 weight matrices).
(The `han` family counts differently: its `depth` is the number of Han layers AFTER its
dense input layer, so han depth D has D + 1 hidden layers.) No residual connection and
no normalisation (the authors' `use_bn` defaults to False; Sec. 4: skip connections
"did not yield better results"). Trainable parameters:
    (d_x*width + width) + (depth - 1)*(width^2 + width) + (width*d_out + d_out).

Activation (`activation`, models/activations.py): relu (default: the authors' README runs
`main.py --model fcnet --activation ReLU`), abs (Table 3 row e, Fig. 7's FC-ABS), maxmin,
groupsort (groups of 5: the width must be a multiple of the group size).

Init (`init`): "kaiming" (default) is the authors' FCNet: their README trains it with
`--initial kaiming` (`Net` implements only kaiming and xavier), i.e. `nn.init.kaiming_normal_`
(fan-in, gain sqrt 2) on every nn.Linear weight, readout included; biases keep PyTorch's
default U(+-1/sqrt(fan_in)). "orthogonal" is `nn.init.orthogonal_` on every weight, the
HouseholderNet init of their code and the FC init of the paper's Sec. 3.2.
"matched" (ours) picks by the activation's gain (models/activations.py): for ReLU (gain
sqrt 2) the authors' Kaiming normal, N(0, 2 / fan_in); for abs, maxmin and groupsort,
which keep E[x^2] (gain 1), orthogonal init, the paper's Sec. 3.2 FC init. Measured in
yu-ablation-small (4,000 steps): Kaiming FC + ReLU 79.4% where orthogonal x sqrt(2) gave
59%; orthogonal FC + ABS trains at lr 0.01 where N(0, 1 / fan_in) diverged. Neither
of the others serves every activation at depth 20: Kaiming doubles the variance
at each ABS layer (every FC + ABS net diverged at the second step) and
orthogonal init halves it at each ReLU layer (every FC + ReLU net answered one colour on
the checkerboard); docs/reproductions.md, yu-ablation.

Orthogonal regularisation (`orth_reg` = lambda >= 0; Sec. 4.2, OrthFC of Table 3 rows
f1-f2 with lambda = 0.1, after Brock et al. [30]): the model's `regularization()`,
    lambda * sum_{l=2..depth} ||W_l^T W_l - I||_F^2,
which the supervised trainer adds to the task's loss (tasks/train.py, `train_epoch`).
The paper says "each weight matrix W"; here only the depth - 1 square hidden matrices
are penalised: the readout's W^T W (width x width, rank <= d_out) can never be I, and the
authors' code has no OrthFC to say otherwise. For square W, ||W^T W - I||_F equals
||W W^T - I||_F, so the orientation does not matter. orth_reg = 0 (default): no term.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from core.errors import UserError
from core.io import IOSpec
from models.activations import ACTIVATIONS, check_activation, make_activation
from models.base import Family, model_keys
from models.families import register_family

PRESETS: dict[str, dict[str, Any]] = {
    "table3-fc-abs": {"width": 100, "depth": 20, "activation": "abs"},  # Table 3 (e)
    "table3-orthfc-abs": {"width": 100, "depth": 20, "activation": "abs", "orth_reg": 0.1},  # (f1)
    "table3-orthfc-relu": {"width": 100, "depth": 20, "activation": "relu", "orth_reg": 0.1},  # (f2)
    "checkerboard-authors": {"width": 100, "depth": 6},  # main.py's nnstructurenet = [100]*6, ReLU
    "sines-paper": {"width": 200, "depth": 20},  # Sec. 4.3 / Fig. 7 (FC-ReLU; FC-ABS with activation abs)
}

INITS: dict[str, Callable[[torch.Tensor, float], Any]] = {
    "kaiming": lambda w, gain: nn.init.kaiming_normal_(w),  # the authors' FCNet (README: --initial kaiming)
    "orthogonal": lambda w, gain: nn.init.orthogonal_(w),  # their HouseholderNet's; the paper's Sec. 3.2 FC models
    # by the activation's gain: Kaiming normal (gain sqrt 2) for ReLU, orthogonal for abs & co (gain 1)
    "matched": lambda w, gain: (
        nn.init.orthogonal_(w) if gain == 1.0 else nn.init.normal_(w, 0.0, gain / math.sqrt(w.shape[1]))
    ),
}


@dataclass(frozen=True)
class FCNetConfig:
    width: int  # units of every hidden layer
    depth: int  # hidden layers in total, the input layer d_x -> width included
    activation: str = "relu"  # models.activations.ACTIVATIONS
    orth_reg: float = 0.0  # lambda of lambda * sum ||W^T W - I||_F^2 over the square hidden W
    init: str = "kaiming"  # a name in INITS

    def __post_init__(self) -> None:
        for name in ("width", "depth"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UserError(f"{name} must be a positive integer, got {v!r}")
        check_activation(self.activation, self.width)
        r = self.orth_reg
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r) or r < 0:
            raise UserError(f"orth_reg must be a number >= 0 (the paper's OrthFC: 0.1), got {r!r}")
        if self.init not in INITS:
            raise UserError(f"init must be one of {', '.join(INITS)}, got {self.init!r}")

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> FCNetConfig:
        return cls(**model_keys(cls, config, ("width", "depth")))


class FCNet(nn.Module):
    def __init__(self, cfg: FCNetConfig, io: IOSpec) -> None:
        super().__init__()
        self.sigmoid_out = io.output == "image"
        self.orth_reg = float(cfg.orth_reg)
        self.w_in = nn.Linear(io.d_in, cfg.width)
        self.hidden = nn.ModuleList(nn.Linear(cfg.width, cfg.width) for _ in range(cfg.depth - 1))
        self.act = make_activation(cfg.activation, cfg.width)  # no parameters: one module serves all layers
        self.w_out = nn.Linear(cfg.width, io.d_out)
        init, gain = INITS[cfg.init], ACTIVATIONS.get(cfg.activation).gain
        for m in self.modules():
            if isinstance(m, nn.Linear):
                init(m.weight, gain)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, d_x) -> (B, d_out)
        h = self.act(self.w_in(x))  # (B, width)
        for layer in self.hidden:
            h = self.act(layer(h))
        y = self.w_out(h)
        return torch.sigmoid(y) if self.sigmoid_out else y

    def regularization(self) -> torch.Tensor:
        """orth_reg * sum over the square hidden weights of ||W^T W - I||_F^2 (a scalar
        tensor; exactly 0 without orth_reg or without square layers)."""
        if self.orth_reg == 0 or not len(self.hidden):
            return self.w_out.weight.new_zeros(())
        return self.orth_reg * orthogonality_penalty([m.weight for m in self.hidden])


def orthogonality_penalty(weights: list[torch.Tensor]) -> torch.Tensor:
    """sum_W ||W^T W - I||_F^2 over square matrices of one size (Brock et al.'s
    orthogonal regulariser, the paper's Sec. 4.2), batched as one matmul."""
    w = torch.stack(weights)  # (n, d, d)
    gram = w.transpose(1, 2) @ w
    eye = torch.eye(w.shape[-1], dtype=w.dtype, device=w.device)
    return (gram - eye).pow(2).sum()


def count_fcnet(cfg: FCNetConfig, io: IOSpec) -> int:
    """(d_x*width + width) + (depth - 1)*(width^2 + width) + (width*d_out + d_out)."""
    w = cfg.width
    return (io.d_in * w + w) + (cfg.depth - 1) * (w * w + w) + (w * io.d_out + io.d_out)


@register_family
class FCNetFamily(Family):
    name = "fcnet"
    description = "FCNet: `depth` dense hidden layers of `width` (input layer included), no residual or norm"
    paper = "Yu & Zhang, A lightweight and gradient-stable neural layer"
    default_task = "checkerboard"
    key_dims = ("width", "depth")
    outputs = ("image", "logits", "regression")
    fuses = "identical shapes"

    def parse(self, config: dict[str, Any], io: IOSpec) -> FCNetConfig:
        return FCNetConfig.from_dict(config)

    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> nn.Module:
        return FCNet(self.parse(config, io), io)

    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        return count_fcnet(self.parse(config, io), io)

    def fusion_key(self, config: dict[str, Any], io: IOSpec) -> tuple[str, FCNetConfig]:
        """Identical shapes fuse (models/fcnet_fused.py); each member keeps its lr and weight decay."""
        return ("fcnet", self.parse(config, io))

    def fuse(self, members: list[nn.Module], configs: list[dict[str, Any]], io: IOSpec) -> nn.Module:
        from models.fcnet_fused import FusedFCNet

        return FusedFCNet(members)

    def param_breakdown(self, config: dict[str, Any], io: IOSpec) -> dict[str, int]:
        c = self.parse(config, io)
        return {
            "input layer": io.d_in * c.width + c.width,
            "hidden layers": (c.depth - 1) * (c.width * c.width + c.width),
            "output layer": c.width * io.d_out + io.d_out,
        }
