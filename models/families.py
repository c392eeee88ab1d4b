"""The family registry (FAMILIES: name -> family; `models.registry` before 2026-12-06). A
family file registers itself with `@register_family`;
`models/__init__.py` imports every module of the package, so a new family is a new file."""

from __future__ import annotations

from typing import TypeVar

from core.registry import Registry
from models.base import Family

FAMILIES: Registry[Family] = Registry("family")
F = TypeVar("F", bound=type[Family])


def register_family(cls: F) -> F:
    """Class decorator: register one instance of the family under `cls.name`."""
    FAMILIES.add(cls.name, cls())
    return cls


def get_family(name: str) -> Family:
    """The registered family `name` (built in or a plugin's); UserError listing the known ones."""
    return FAMILIES.get(name)


def trainable_params(module) -> int:
    """The budget convention: sum of numel over parameters with requires_grad."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
