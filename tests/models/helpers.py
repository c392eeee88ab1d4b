"""Helpers shared by the model tests."""

import torch


def randomise(model, seed=0):
    """Overwrite every parameter with N(0, 0.3^2) draws (seeded), so no layer sits at its
    special initial value (zero heads, identity-like norms) when equations are compared."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    return model
