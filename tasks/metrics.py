"""Image quality metrics, batched torch ops on (B, C, H, W) images with data range 1.

Both return one value per image (shape (B,)); a data set's metric is the mean over its
images (per-image averaging, as in the usual PSNR/SSIM tables).
"""

from __future__ import annotations

import torch

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


def band_matrix(n: int, g: torch.Tensor) -> torch.Tensor:
    """(n, n - k + 1) matrix M with (v @ M)[j] = sum_i g[i] v[j + i]: a valid 1-D filter as
    a matmul (much faster than a 1-channel conv2d on large batches, on CPU and GPU)."""
    k = len(g)
    m = torch.zeros(n, n - k + 1, dtype=g.dtype, device=g.device)
    cols = torch.arange(n - k + 1, device=g.device)
    for i in range(k):
        m[cols + i, cols] = g[i]
    return m


def ssim(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-image SSIM (Wang et al. 2004), data range 1.

    Gaussian window of 11 taps with sigma 1.5 (smaller odd windows for images under 11
    pixels, see `ssim_window_size`; sigma stays 1.5), K1=0.01, K2=0.03, no padding: the
    SSIM map is averaged over the valid region and over channels. The same definition as
    skimage.metrics.structural_similarity(gaussian_weights=True, sigma=1.5,
    use_sample_covariance=False, data_range=1) for images of at least 11 pixels.
    """
    x, y = pred.float(), target.float()
    h, w = x.shape[-2:]
    g = gaussian_window(ssim_window_size(h, w), device=x.device)
    bw, bh = band_matrix(w, g), band_matrix(h, g).t()

    def blur(t: torch.Tensor) -> torch.Tensor:  # (B, C, H, W) -> (B, C, H', W'), valid region
        return bh @ (t @ bw)

    mu_x, mu_y = blur(x), blur(y)
    mxx, myy, mxy = mu_x * mu_x, mu_y * mu_y, mu_x * mu_y
    var_x = blur(x * x).sub_(mxx)
    var_y = blur(y * y).sub_(myy)
    cov = blur(x * y).sub_(mxy)
    c1, c2 = SSIM_K1**2, SSIM_K2**2
    num = (2 * mxy + c1).mul_(2 * cov + c2)
    den = (mxx + myy + c1).mul_(var_x.add_(var_y).add_(c2))
    return num.div_(den).flatten(1).mean(1)
