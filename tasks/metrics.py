"""Image quality metrics, batched torch ops on (B, C, H, W) images with data range 1.

Both return one value per image (shape (B,)); a data set's metric is the mean over its
images (per-image averaging, as in the usual PSNR/SSIM tables).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

PSNR_CAP_DB = 100.0  # identical images: 100 dB instead of +inf (MSE floored at 1e-10)
SSIM_WINDOW = 11
SSIM_SIGMA = 1.5
SSIM_K1, SSIM_K2 = 0.01, 0.03


def psnr(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-image PSNR in dB, data range 1: 10 log10(1 / MSE), capped at PSNR_CAP_DB."""
    mse = (pred.float() - target.float()).pow(2).flatten(1).mean(1)
    return -10.0 * torch.log10(mse.clamp_min(10.0 ** (-PSNR_CAP_DB / 10.0)))


def ssim_window_size(height: int, width: int) -> int:
    """11, or for images smaller than 11 pixels the largest odd size <= the smaller side."""
    side = min(SSIM_WINDOW, height, width)
    return side if side % 2 == 1 else side - 1


def gaussian_window(size: int, sigma: float = SSIM_SIGMA, device=None) -> torch.Tensor:
    """Normalised 1-D Gaussian of `size` taps (float32)."""
    x = torch.arange(size, dtype=torch.float32, device=device) - (size - 1) / 2
    g = torch.exp(-(x**2) / (2 * sigma**2))
    return g / g.sum()


def ssim(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-image SSIM (Wang et al. 2004), data range 1.

    Gaussian window of 11 taps with sigma 1.5 (smaller odd windows for images under 11
    pixels, see `ssim_window_size`; sigma stays 1.5), K1=0.01, K2=0.03, no padding: the
    SSIM map is averaged over the valid region and over channels. Matches
    skimage.metrics.structural_similarity(gaussian_weights=True, sigma=1.5,
    use_sample_covariance=False, data_range=1) per channel.
    """
    x, y = pred.float(), target.float()
    b, c, h, w = x.shape
    size = ssim_window_size(h, w)
    g = gaussian_window(size, device=x.device)
    # Separable blur of x, y, x^2, y^2, xy at once: (5*B, C, H, W) -> valid region.
    stack = torch.cat([x, y, x * x, y * y, x * y]).reshape(5 * b * c, 1, h, w)
    blurred = F.conv2d(F.conv2d(stack, g.view(1, 1, 1, size)), g.view(1, 1, size, 1))
    mu_x, mu_y, xx, yy, xy = blurred.reshape(5, b, c, h - size + 1, w - size + 1)
    var_x = xx - mu_x**2
    var_y = yy - mu_y**2
    cov = xy - mu_x * mu_y
    c1, c2 = SSIM_K1**2, SSIM_K2**2
    s = ((2 * mu_x * mu_y + c1) * (2 * cov + c2)) / ((mu_x**2 + mu_y**2 + c1) * (var_x + var_y + c2))
    return s.flatten(1).mean(1)
