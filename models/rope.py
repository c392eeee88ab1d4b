"""Rotary position embeddings (RoPE; Su et al., "RoFormer").

Exactly Meta's Llama reference code (`precompute_freqs_cis` / `apply_rotary_emb`): the
head dimension is split into ADJACENT pairs (x_{2i}, x_{2i+1}), each pair is read as the
complex number x_{2i} + i x_{2i+1} and multiplied by e^{i t f_i} at position t, with
f_i = theta^(-2i/head_dim) and theta = 10000. As in Llama the product is taken in float32
(complex64) and cast back to the input's dtype (bf16 under autocast). On the CPU the
complex product is also about 5x faster (forward and backward) than the same rotation
written with real cos/sin tables; under torch.compile the real form is used instead
(inductor cannot generate code for complex operators but fuses the real one).

Because every pair is rotated by an angle proportional to its position, the dot product
of a rotated query at position m and a rotated key at position n depends on q, k and
m - n only (the relative-position property tested in tests/models/test_transformer.py).
"""

from __future__ import annotations

import torch

THETA = 10000.0


def rope_freqs(head_dim: int, length: int, theta: float = THETA) -> torch.Tensor:
    """e^{i t f_j} for positions t < length and pairs j, stored as real numbers (cos, sin):
    float32 (length, head_dim // 2, 2); `torch.view_as_complex` of it is Llama's freqs_cis."""
    if head_dim % 2:
        raise ValueError(f"RoPE needs an even head dimension, got {head_dim}")
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(length, dtype=torch.float32), inv_freq)  # (T, hd/2)
    return torch.stack((angles.cos(), angles.sin()), dim=-1)


def apply_rope(x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """Rotate adjacent feature pairs of x: (B, T, H, hd) with freqs (T, hd/2, 2) -> (B, T, H, hd)."""
    if torch.compiler.is_compiling():
        return _apply_rope_real(x, freqs)
    pairs = torch.view_as_complex(x.float().unflatten(-1, (-1, 2)))  # (B, T, H, hd/2) complex64
    return torch.view_as_real(pairs * torch.view_as_complex(freqs)[:, None, :]).flatten(-2).type_as(x)


def _apply_rope_real(x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """The same rotation in real arithmetic, for torch.compile: inductor generates no code
    for complex operators (it falls back to eager kernels), but fuses this form."""
    c, s = freqs[:, None, :, 0], freqs[:, None, :, 1]  # (T, 1, hd/2)
    a, b = x.float().unflatten(-1, (-1, 2)).unbind(-1)  # each (B, T, H, hd/2)
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2).type_as(x)
