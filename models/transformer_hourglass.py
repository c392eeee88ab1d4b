"""Transformer LM with hourglass FFNs (Liao et al., "Revisiting the shape convention of
Transformer language models").

Each layer's FFN is K stacked wide-narrow-wide residual sub-blocks
h <- h + SwiGLU_k(RMSNorm_k(h)) with d_h < d_model; the parameters saved against a
conventional FFN go to attention width (a larger d_model at the same budget). Network,
Llama-style details and the non-embedding parameter count: models/transformer_lm.py.
"""

from __future__ import annotations

from typing import Any

from core.shape_rules import Constraint
from models.families import register_family
from models.transformer_lm import TransformerFamily

# Plain-data presets: d_h / d_model about 0.4, the papers' finding (the benchmark's first).
PRESETS: dict[str, dict[str, Any]] = {
    "byte-small": {"d_model": 256, "L": 4, "K": 4, "d_h": 102, "n_heads": 4},
    "byte-medium": {"d_model": 640, "L": 6, "K": 4, "d_h": 256, "n_heads": 10},
}


@register_family
class TransformerHourglass(TransformerFamily):
    name = "transformer-hourglass"
    description = "Llama-style decoder, K hourglass SwiGLU sub-blocks per layer (d_h < d_model)"

    shape_rules = (Constraint("d_h", "<", "d_model"),)
    shape_subject = "the hourglass FFN"
