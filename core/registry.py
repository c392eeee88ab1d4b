"""A tiny name -> object registry (timm's register_model / create_model pattern)."""
from __future__ import annotations

import importlib
import pkgutil
from typing import Callable, Generic, Iterator, TypeVar

from core.errors import UserError

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps names to objects; `get` fails with the list of known names."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            self.add(name, obj)
            return obj

        return deco

    def add(self, name: str, obj: T) -> T:
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = obj
        return obj

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise UserError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def names(self) -> list[str]:
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def items(self):
        return self._items.items()


def import_submodules(package: str) -> None:
    """Import every module of `package` (not sub-packages' modules), so that modules which
    register themselves (families, tasks, spaces, trainers) need no central list: a new
    family is a new file."""
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package}.{info.name}")
