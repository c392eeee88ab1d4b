"""The Fréchet distance between Gaussians fitted to features (Heusel et al. 2017, the
distance behind FID).

Here it is applied to the penultimate features of a small MNIST-style classifier
(tasks/diffusion/classifier.py), NOT to Inception-v3 features: the values are comparable
only with each other, never with published FID numbers.

    d^2 = ||mu1 - mu2||^2 + tr(C1 + C2 - 2 (C1^{1/2} C2 C1^{1/2})^{1/2})

computed in float64 with symmetric eigendecompositions (torch.linalg.eigh); tiny negative
eigenvalues from round-off are clipped to 0. No scipy.
"""

from __future__ import annotations

import torch

from core.errors import UserError


def feature_stats(features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(mu (F,), cov (F, F)) of features (N, F), float64 on features' device; the
    covariance is the unbiased one (divides by N - 1), so N >= 2."""
    if features.ndim != 2:
        raise UserError(f"features must have shape (N, F), got {tuple(features.shape)}")
    if features.shape[0] < 2:
        raise UserError(f"feature statistics need at least 2 samples, got {features.shape[0]}")
    x = features.detach().to(torch.float64)
    mu = x.mean(0)
    d = x - mu
    return mu, (d.T @ d) / (x.shape[0] - 1)


def _sym(m: torch.Tensor) -> torch.Tensor:
    return (m + m.T) / 2


def sqrtm_psd(m: torch.Tensor) -> torch.Tensor:
    """Principal square root of a symmetric PSD matrix (F, F) (negative eigenvalues -> 0)."""
    w, v = torch.linalg.eigh(_sym(m))
    return (v * w.clamp_min(0).sqrt()) @ v.T


def frechet_distance(mu1: torch.Tensor, cov1: torch.Tensor, mu2: torch.Tensor, cov2: torch.Tensor) -> float:
    """Squared Fréchet distance between N(mu1, cov1) and N(mu2, cov2); mu (F,), cov (F, F).

    Symmetric in its two Gaussians and >= 0 (round-off below 0 is returned as 0.0).
    """
    mu1, mu2 = (torch.as_tensor(m).detach().to(torch.float64) for m in (mu1, mu2))
    c1, c2 = (_sym(torch.as_tensor(c).detach().to(device=mu1.device, dtype=torch.float64)) for c in (cov1, cov2))
    mu2 = mu2.to(mu1.device)
    f = mu1.shape[0]
    if mu1.shape != (f,) or mu2.shape != (f,) or c1.shape != (f, f) or c2.shape != (f, f):
        raise UserError(
            f"Fréchet distance needs mu (F,) and cov (F, F) of one F; got {tuple(mu1.shape)}, "
            f"{tuple(c1.shape)}, {tuple(mu2.shape)}, {tuple(c2.shape)}"
        )
    s1 = sqrtm_psd(c1)
    # eigenvalues of C1^{1/2} C2 C1^{1/2} (symmetric PSD): tr of its root = sum of their roots
    w = torch.linalg.eigvalsh(_sym(s1 @ c2 @ s1))
    tr_covmean = w.clamp_min(0).sqrt().sum()
    d = (mu1 - mu2).pow(2).sum() + torch.trace(c1) + torch.trace(c2) - 2 * tr_covmean
    return max(float(d), 0.0)
