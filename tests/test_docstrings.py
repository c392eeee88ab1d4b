"""Every class and function a package exports in its `__all__` says what it is (issue 82,
item 5): its own docstring, not an inherited one nor a dataclass's generated signature."""

import importlib
import inspect
import pkgutil
from pathlib import Path

PACKAGES = ("core", "models", "tasks", "storage", "verdicts", "reports", "search")


def moved_alias(info: pkgutil.ModuleInfo) -> bool:
    """A deprecated alias at a moved module's old path (its docstring starts "Moved to"):
    importing it warns, and its names are the new module's (tests/verdicts/test_moved.py)."""
    spec = info.module_finder.find_spec(info.name)
    return bool(spec and spec.origin) and Path(spec.origin).read_text().startswith('"""Moved to ')


def modules():
    for name in PACKAGES:
        package = importlib.import_module(name)
        yield package
        for info in pkgutil.walk_packages(package.__path__, name + "."):
            if info.name.endswith("__main__") or ".migrations" in info.name or moved_alias(info):
                continue  # the command itself; alembic's revisions; an old path's alias
            yield importlib.import_module(info.name)


def undocumented():
    out = set()
    for module in modules():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue  # constants and registries: their module's docstring says what they are
            own = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
            generated = inspect.isclass(obj) and (own or "").startswith(obj.__name__ + "(")
            if not (own or "").strip() or generated:
                out.add(f"{module.__name__}.{name}")
    return sorted(out)


def test_every_exported_class_and_function_has_its_own_docstring():
    assert undocumented() == []
