"""Model families, registered by name. `get_family(name)` fails with the known names.

Every module of this package is imported here; family files register themselves with
`models.families.register_family`.
"""

from __future__ import annotations

import sys

from core.registry import import_submodules
from models import families as registry  # `models.registry`: the module's name until 2026-12-06 (deprecated)
from models.base import Family
from models.families import FAMILIES, get_family, register_family, trainable_params

sys.modules.setdefault("models.registry", registry)
import_submodules("models")

__all__ = ["FAMILIES", "Family", "get_family", "register_family", "trainable_params"]
