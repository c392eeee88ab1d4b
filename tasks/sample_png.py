"""A grid of small images as one PNG (for sample grids in reports), encoded with Pillow."""

from __future__ import annotations

import base64
import io

import torch


def tile(images: torch.Tensor, columns: int, pad: int = 1) -> torch.Tensor:
    """(N, C, H, W) images in [0, 1] -> (C, rows*(H+pad)+pad, columns*(W+pad)+pad) with
    image i at row i // columns, column i % columns, on a background of 0.5 (grey)."""
    if images.dim() != 4 or len(images) == 0:
        raise ValueError(f"need a non-empty (N, C, H, W) batch, got shape {tuple(images.shape)}")
    if columns < 1:
        raise ValueError(f"columns must be positive, got {columns}")
    n, c, h, w = images.shape
    rows = (n + columns - 1) // columns
    out = torch.full((c, rows * (h + pad) + pad, columns * (w + pad) + pad), 0.5)
    for i, img in enumerate(images.detach().float().cpu().clamp(0, 1)):
        r, k = divmod(i, columns)
        top, left = pad + r * (h + pad), pad + k * (w + pad)
        out[:, top : top + h, left : left + w] = img
    return out


def grid_png(images: torch.Tensor, columns: int, scale: int = 2) -> bytes:
    """PNG bytes of `tile(images, columns)` (grey or RGB), each pixel `scale` x `scale`."""
    from PIL import Image

    grid = tile(images, columns)
    grid = grid.repeat_interleave(scale, 1).repeat_interleave(scale, 2)
    pixels = grid.mul(255).round().to(torch.uint8).permute(1, 2, 0).numpy()
    image = Image.fromarray(pixels[..., 0] if pixels.shape[2] == 1 else pixels)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def png_artifact(png: bytes) -> dict[str, str]:
    """A run artifact (RunResult.artifacts value) holding PNG bytes."""
    return {"media_type": "image/png", "data": base64.b64encode(png).decode("ascii")}
