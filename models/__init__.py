"""Model families, registered by name. `get_family(name)` fails with the known names."""
from __future__ import annotations

from models.base import Family
from models.conventional import Conventional
from models.hourglass import Hourglass
from search.registry import Registry

FAMILIES: Registry[Family] = Registry("space")
for _cls in (Hourglass, Conventional):
    FAMILIES.add(_cls.name, _cls())


def get_family(name: str) -> Family:
    return FAMILIES.get(name)


def trainable_params(module) -> int:
    """The budget convention: sum of numel over parameters with requires_grad."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


__all__ = ["FAMILIES", "Family", "get_family", "trainable_params"]
