"""Decoder-only Transformer language model with a conventional or an hourglass FFN.

Liao et al., "Revisiting the shape convention of Transformer language models": each
layer's narrow-wide-narrow FFN (one SwiGLU with d_h > d_model) is replaced by K stacked
wide-narrow-wide sub-blocks (d_h < d_model), and the parameters saved go to attention
width. One layer:

    h = h + Attn(RMSNorm(h))                              causal, multi-head, RoPE
    h = h + SwiGLU_k(RMSNorm_k(h))   for k = 1..K         K = 1: the conventional FFN
    SwiGLU(x) = W2 (silu(W1 x) * W3 x),  W1, W3: d_h x d_model, W2: d_model x d_h

The authors' code is Llama-style; the details here follow Meta's Llama reference code:
pre-normalisation with RMSNorm (eps 1e-5, computed in float32, a learned scale and no
bias), bias-free linears everywhere, RoPE on queries and keys (models/rope.py), a final
RMSNorm before the output head. Attention is
PyTorch's fused `scaled_dot_product_attention(is_causal=True)`. Options: tied or untied
input/output embeddings (untied, as in Llama, by default) and QK-norm (an RMSNorm over
the head dimension on queries and keys before RoPE, one scale shared by all heads, as in
OLMo-2/Qwen-3).

Ours, not the paper's: Q, K, V are one fused linear (3*d_model x d_model) and W1, W3 one
fused linear (2*d_h x d_model); the same parameters as Llama's separate matrices, fewer
kernel launches. Initialisation (the paper gives none): every linear and the embedding
N(0, 0.02), the projections that write into the residual stream (attention output, W2)
N(0, 0.02 / sqrt(L * (1 + K))) -- GPT-2's scaled init, generalised to the L*(1+K)
residual branches of an hourglass stack.

Parameter convention (the papers' budget): NON-EMBEDDING parameters, i.e. every
trainable parameter except the token embedding and the untied output head:
    L * (4*d_model^2 + K*3*d_model*d_h + (1 + K)*d_model [+ 2*head_dim with QK-norm]) + d_model
-- the papers' L*(4*d_model^2 + K*3*d_model*d_h) plus the RMSNorm scales, which are
counted. The embedding adds vocab*d_model (twice when untied).
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
from models.rope import apply_rope, rope_freqs

NORM_EPS = 1e-5
INIT_STD = 0.02
DEFAULT_HEAD_DIM = 64  # n_heads = d_model // 64 when a config gives no n_heads


@dataclass(frozen=True)
class TransformerConfig:
    d_model: int  # width of the residual stream
    L: int  # layers
    d_h: int  # hidden width of each SwiGLU
    n_heads: int
    K: int = 1  # SwiGLU sub-blocks per layer (1: the conventional FFN)
    tied: bool = False  # output head shares the embedding matrix
    qk_norm: bool = False

    def __post_init__(self) -> None:
        for name in ("d_model", "L", "d_h", "n_heads", "K"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UserError(f"{name} must be a positive integer, got {v!r}")
        for name in ("tied", "qk_norm"):
            if not isinstance(getattr(self, name), bool):
                raise UserError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.d_model % self.n_heads:
            raise UserError(f"n_heads={self.n_heads} must divide d_model={self.d_model}")
        if self.head_dim % 2:
            raise UserError(f"head dimension d_model/n_heads={self.head_dim} must be even for RoPE")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> TransformerConfig:
        """The model keys of a trial config (training keys like lr are ignored). Without
        n_heads, heads of 64: n_heads = d_model / 64."""
        kw = model_keys(cls, config, ("d_model", "L", "d_h"))
        if "n_heads" not in kw:
            d = kw["d_model"]
            if not isinstance(d, int) or isinstance(d, bool) or d < DEFAULT_HEAD_DIM or d % DEFAULT_HEAD_DIM:
                raise UserError(f"give n_heads: d_model={d!r} is not a multiple of {DEFAULT_HEAD_DIM}")
            kw["n_heads"] = d // DEFAULT_HEAD_DIM
        return cls(**kw)


class RMSNorm(nn.Module):
    """Llama's RMSNorm: x / rms(x) in float32, cast back, times a learned scale (no bias)."""

    def __init__(self, dim: int, eps: float = NORM_EPS) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (..., dim) -> (..., dim)
        return F.rms_norm(x.float(), (x.shape[-1],), eps=self.eps).type_as(x) * self.weight


class Attention(nn.Module):
    """Causal multi-head self-attention with RoPE (and optional QK-norm), bias-free."""

    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.n_heads, self.head_dim = cfg.n_heads, cfg.head_dim
        self.wqkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.wo = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.q_norm = RMSNorm(cfg.head_dim) if cfg.qk_norm else None
        self.k_norm = RMSNorm(cfg.head_dim) if cfg.qk_norm else None

    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        q, k, v = self.wqkv(x).view(B, T, 3, self.n_heads, self.head_dim).unbind(2)  # each (B, T, H, hd)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = apply_rope(q, freqs), apply_rope(k, freqs)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(B, T, D))  # (B, H, T, hd) -> (B, T, D)


class SwiGLU(nn.Module):
    """W2 (silu(W1 x) * W3 x), bias-free; W1 and W3 are one fused (2*d_h x d_model) linear."""

    def __init__(self, d_model: int, d_h: int) -> None:
        super().__init__()
        self.w13 = nn.Linear(d_model, 2 * d_h, bias=False)
        self.w2 = nn.Linear(d_h, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, d_model) -> (B, T, d_model)
        gate, up = self.w13(x).chunk(2, dim=-1)
        return self.w2(F.silu(gate) * up)


class FFNSubBlock(nn.Module):
    """One residual sub-block of the FFN: h + SwiGLU(RMSNorm(h))."""

    def __init__(self, d_model: int, d_h: int) -> None:
        super().__init__()
        self.norm = RMSNorm(d_model)
        self.ffn = SwiGLU(d_model, d_h)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + self.ffn(self.norm(h))


class Layer(nn.Module):
    """h + Attn(RMSNorm(h)), then K FFN sub-blocks."""

    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(cfg.d_model)
        self.attn = Attention(cfg)
        self.ffn = nn.ModuleList(FFNSubBlock(cfg.d_model, cfg.d_h) for _ in range(cfg.K))

    def forward(self, h: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        h = h + self.attn(self.attn_norm(h), freqs)
        for block in self.ffn:
            h = block(h)
        return h


class TransformerLM(nn.Module):
    """Token ids (B, T) -> next-token logits (B, T, vocab); T at most the context length."""

    def __init__(self, cfg: TransformerConfig, vocab: int, context: int) -> None:
        super().__init__()
        self.cfg, self.context = cfg, context
        self.embed = nn.Embedding(vocab, cfg.d_model)
        self.layers = nn.ModuleList(Layer(cfg) for _ in range(cfg.L))
        self.norm = RMSNorm(cfg.d_model)
        self.head = None if cfg.tied else nn.Linear(cfg.d_model, vocab, bias=False)
        self.register_buffer("rope", rope_freqs(cfg.head_dim, context), persistent=False)  # (context, hd/2, 2)
        self._init_weights()

    def _init_weights(self) -> None:
        residual_std = INIT_STD / math.sqrt(self.cfg.L * (1 + self.cfg.K))
        for name, module in self.named_modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                std = residual_std if name.endswith((".wo", ".w2")) else INIT_STD
                nn.init.normal_(module.weight, mean=0.0, std=std)

    def embedding_parameters(self) -> list[nn.Parameter]:
        """The token embedding and, when untied, the output head."""
        return [self.embed.weight] + ([] if self.head is None else [self.head.weight])

    def budgeted_params(self) -> int:
        """Non-embedding parameters, counted from the module's own trainable parameters."""
        skip = {id(p) for p in self.embedding_parameters()}
        return sum(p.numel() for p in self.parameters() if p.requires_grad and id(p) not in skip)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        T = idx.shape[1]
        if T > self.context:
            raise ValueError(f"sequence of {T} tokens is longer than the context ({self.context})")
        freqs = self.rope[:T]
        h = self.embed(idx)  # (B, T, d_model)
        for layer in self.layers:
            h = layer(h, freqs)
        h = self.norm(h)
        return self.head(h) if self.head is not None else F.linear(h, self.embed.weight)  # (B, T, vocab)


# ---------------------------------------------------------------- analytic counts


def count_parts(cfg: TransformerConfig, io: IOSpec) -> dict[str, int]:
    """Analytic parameter counts by part; non-embedding = attention + ffn + norms."""
    d, L, K = cfg.d_model, cfg.L, cfg.K
    attention = L * (4 * d * d + (2 * cfg.head_dim if cfg.qk_norm else 0))
    ffn = L * K * 3 * d * cfg.d_h
    norms = L * (1 + K) * d + d
    embedding = io.d_in * d + (0 if cfg.tied else d * io.d_out)
    non_embedding = attention + ffn + norms
    return {
        "total": non_embedding + embedding,
        "embedding": embedding,
        "non-embedding": non_embedding,
        "attention": attention,
        "ffn": ffn,
        "norms": norms,
    }


class TransformerFamily(Family):
    """Shared parse/build/count of the two transformer families; subclasses set the
    registry attributes and their shape rule (`shape_violation`)."""

    paper = "Liao et al., Revisiting the shape convention of Transformer language models"
    default_task = "lm-shakespeare"
    key_dims = ("d_model", "L", "K", "d_h", "n_heads")
    param_convention = "non-embedding parameters"
    outputs = ("lm",)

    def parse(self, config: dict[str, Any], io: IOSpec) -> TransformerConfig:
        if io.output != "lm":
            raise UserError(f"{self.name} is a language model; the task's output is {io.output!r}")
        return TransformerConfig.from_dict(config)

    def build(self, config: dict[str, Any], io: IOSpec, seed: int = 0) -> TransformerLM:
        context = io.input_shape[0] if io.input_shape else 1024
        return TransformerLM(self.parse(config, io), io.d_in, context)

    def count_params(self, config: dict[str, Any], io: IOSpec) -> int:
        return count_parts(self.parse(config, io), io)["non-embedding"]

    def param_breakdown(self, config: dict[str, Any], io: IOSpec) -> dict[str, int]:
        return count_parts(self.parse(config, io), io)
