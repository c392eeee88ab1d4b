"""A tiny name -> object registry (timm's register_model / create_model pattern), which
remembers where each name came from.

Every registration goes through `Registry.add`: the project's own modules (families,
tasks, spaces, trainers) and a user's plugins alike. A name's origin is "built-in" for
the project's packages, the plugin being loaded (`registering_from`, set by
search/plugins/discovery.py around an import), or otherwise the module whose import is
running when the name is registered: another process that imports it registers the name
again ("module __main__" for a script or notebook, whose registrations no other process
can repeat, and so for a registration made by a call after every import has finished).
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import pkgutil
import sys
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from core.errors import UserError

T = TypeVar("T")

BUILT_IN = "built-in"
# The project's own top-level packages: what they register is built in.
PROJECT_PACKAGES = ("core", "models", "tasks", "storage", "verdicts", "reports", "search")
_LOADING: contextvars.ContextVar[str | None] = contextvars.ContextVar("registering_from", default=None)


@contextlib.contextmanager
def registering_from(origin: str) -> Iterator[None]:
    """What is registered inside this block comes from `origin` (e.g. "plugin
    examples/own_family.py"): the plugin loader wraps a plugin's import in it."""
    token = _LOADING.set(origin)
    try:
        yield
    finally:
        _LOADING.reset(token)


def origin_of(obj: object) -> str:
    """Where an object being registered comes from: the plugin being loaded, "built-in"
    for the project's packages, else "module NAME" of the object."""
    loading = _LOADING.get()
    if loading is not None:
        return loading
    module = getattr(obj, "__module__", None) or type(obj).__module__
    if module.split(".")[0] in PROJECT_PACKAGES:
        return BUILT_IN
    return f"module {importing() or '__main__'}"


def importing() -> str | None:
    """The module whose top level is running now, innermost first (the one being imported,
    or "__main__" for a script), skipping the project's own: importing it in another
    process repeats what it registers. None when no module's top level is running."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>":
            name = frame.f_globals.get("__name__", "__main__")
            if name.split(".")[0] not in PROJECT_PACKAGES:
                return name
        frame = frame.f_back
    return None


class Registry(Generic[T]):
    """Maps names to objects; `get` fails with the list of known names; `origin(name)`
    says where a name was registered from."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._origins: dict[str, str] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            self.add(name, obj)
            return obj

        return deco

    def add(self, name: str, obj: T, origin: str | None = None) -> T:
        """Register `obj` as `name`. A name taken by another origin (a built-in one
        shadowed, two plugins of one name) is a UserError naming both; the same origin
        registering it again (a notebook cell run twice) replaces it, except built-ins."""
        origin = origin or origin_of(obj)
        self.check_free(name, origin)
        self._items[name] = obj
        self._origins[name] = origin
        return obj

    def check_free(self, name: str, origin: str) -> None:
        """UserError when `origin` may not register `name`: another origin holds it (or a
        built-in registers a name twice)."""
        if name in self._items:
            before = self._origins[name]
            if before != origin or origin == BUILT_IN:
                where = "" if origin == BUILT_IN else f"{origin}: "
                raise UserError(f"{where}{self.kind} {name!r} is already registered ({before})")

    def origin_note(self, name: str) -> str:
        """' (ORIGIN)' for a name that is not built in, else '': messages name the plugin."""
        origin = self.origin(name)
        return "" if origin == BUILT_IN else f" ({origin})"

    def remove(self, name: str) -> None:
        """Forget `name` (a test's or a notebook's own registration)."""
        self._items.pop(name, None)
        self._origins.pop(name, None)

    def origin(self, name: str) -> str:
        """Where `name` was registered from ("built-in", "plugin ...", "module ...")."""
        self.get(name)
        return self._origins[name]

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
