"""Model families, registered by name. `get_family(name)` fails with the known names.

Every module of this package is imported here; family files register themselves with
`models.registry.register_family`.
"""

from __future__ import annotations

from core.registry import import_submodules
from models.base import Family
from models.registry import FAMILIES, get_family, register_family, trainable_params

import_submodules("models")

__all__ = ["FAMILIES", "Family", "get_family", "register_family", "trainable_params"]
