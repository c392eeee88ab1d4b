"""PSNR and SSIM against hand computations and an independent numpy/scipy reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.signal import convolve2d

from tasks.metrics import PSNR_CAP_DB, psnr, ssim, ssim_window_size


def test_psnr_by_hand():
    target = torch.zeros(2, 1, 2, 2)
    pred = target.clone()
    pred[0, 0, 0, 0] = 0.5  # MSE = 0.25 / 4 = 1/16 -> 10 log10(16)
    pred[1] = 0.1  # MSE = 0.01 -> 20 dB
    got = psnr(pred, target)
    assert got[0].item() == pytest.approx(10 * math.log10(16), abs=1e-5)
    assert got[1].item() == pytest.approx(20.0, abs=1e-4)


def test_psnr_identical_images_are_capped():
    x = torch.rand(3, 1, 4, 4)
    assert torch.allclose(psnr(x, x), torch.full((3,), PSNR_CAP_DB))


def reference_ssim(a: np.ndarray, b: np.ndarray, win: int = 11, sigma: float = 1.5) -> float:
    """Wang et al. 2004 for one (C, H, W) image pair, float64, valid-region mean."""
    r = np.arange(win) - (win - 1) / 2
    g = np.exp(-(r**2) / (2 * sigma**2))
    w = np.outer(g, g) / np.outer(g, g).sum()
    c1, c2 = 0.01**2, 0.03**2
    values = []
    for x, y in zip(a.astype(np.float64), b.astype(np.float64)):
        f = lambda img: convolve2d(img, w, mode="valid")  # noqa: E731
        mx, my = f(x), f(y)
        sxx, syy, sxy = f(x * x) - mx**2, f(y * y) - my**2, f(x * y) - mx * my
        m = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx**2 + my**2 + c1) * (sxx + syy + c2))
        values.append(m.mean())
    return float(np.mean(values))


@pytest.mark.parametrize("shape", [(4, 1, 28, 28), (3, 3, 32, 32), (5, 1, 8, 8), (2, 1, 13, 16)])
def test_ssim_matches_reference(shape):
    g = torch.Generator().manual_seed(0)
    a = torch.rand(shape, generator=g)
    b = (a + 0.2 * torch.randn(shape, generator=g)).clamp(0, 1)
    got = ssim(b, a)
    win = ssim_window_size(*shape[2:])
    want = [reference_ssim(b[i].numpy(), a[i].numpy(), win) for i in range(shape[0])]
    np.testing.assert_allclose(got.numpy(), want, atol=2e-5)


def test_window_size_for_small_images():
    assert ssim_window_size(28, 28) == 11
    assert ssim_window_size(8, 8) == 7
    assert ssim_window_size(10, 32) == 9
    assert ssim_window_size(4, 4) == 3


def test_ssim_identical_is_one():
    x = torch.rand(3, 1, 28, 28)
    assert torch.allclose(ssim(x, x), torch.ones(3), atol=1e-6)


def test_ssim_decreases_with_noise():
    g = torch.Generator().manual_seed(1)
    x = torch.rand(4, 1, 28, 28, generator=g)
    noise = torch.randn(x.shape, generator=g)
    values = [ssim((x + s * noise).clamp(0, 1), x).mean().item() for s in (0.0, 0.05, 0.1, 0.3, 0.6)]
    assert all(a > b for a, b in zip(values, values[1:]))
