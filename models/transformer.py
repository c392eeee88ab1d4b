"""Transformer LM with the conventional (narrow-wide-narrow) FFN: the baseline of Liao et
al., "Revisiting the shape convention of Transformer language models".

Each layer has one SwiGLU with d_h > d_model (K = 1); network, Llama-style details and the
non-embedding parameter count are in models/transformer_lm.py.
"""

from __future__ import annotations

from typing import Any

from core.io import IOSpec
from core.shape_rules import Constraint
from models.families import register_family
from models.transformer_lm import TransformerFamily

# Plain-data presets (Llama's d_h ~ 8/3 d_model; the benchmark's size among them).
PRESETS: dict[str, dict[str, Any]] = {
    "byte-small": {"d_model": 256, "L": 4, "K": 1, "d_h": 688, "n_heads": 4},
    "byte-medium": {"d_model": 512, "L": 8, "K": 1, "d_h": 1376, "n_heads": 8},
}


@register_family
class Transformer(TransformerFamily):
    name = "transformer"
    description = "Llama-style decoder, conventional SwiGLU FFN (K=1, d_h > d_model)"

    shape_rules = (Constraint("d_h", ">", "d_model"),)
    shape_subject = "the conventional FFN"

    def shape_violation(self, config: dict[str, Any], io: IOSpec) -> str | None:
        c = self.parse(config, io)
        if c.K != 1:
            return f"the conventional FFN has one SwiGLU per layer (K=1), got K={c.K}"
        return super().shape_violation(config, io)
