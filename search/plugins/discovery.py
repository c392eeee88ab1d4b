"""Where a user's families and tasks come from (issue 60, item 4), loaded once per process:

1. installed packages' entry points: group `shape_search.families` (each entry's name a
   family) and `shape_search.tasks` (each a task); loading an entry imports its module,
   whose registrations run (`search.family`, `search.array_task`, `search.task`); the
   entry's name must then be registered;
2. `$SEARCH_PLUGINS`: module names or .py files, separated by the path separator (`:`);
3. `--plugin MODULE_OR_FILE` (repeatable), or `search.run(plugins=[...])`.

A script or notebook can also register in-process before `search.run`; such a
registration's origin is its module ("module __main__"). Every registration remembers its
origin (core/registry.py), which `search spaces` and `search tasks` print.

Workers of `--executor ray` / `tune` load the same plugins before a trial (the trial's
spec carries them: `worker_sources`): a file by its absolute path (so on a cluster it
must be at that path on every node, e.g. through Ray's runtime environment
`working_dir`), a module by its name (installed on every node), entry points as found.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from core.errors import UserError, one_line
from core.registry import BUILT_IN, Registry, registering_from

ENV = "SEARCH_PLUGINS"
FAMILY_GROUP = "shape_search.families"
TASK_GROUP = "shape_search.tasks"
_loaded: dict[str, str] = {}  # source as resolved -> the module it was imported as
_entry_points_loaded = False


def _registries() -> dict[str, Registry[Any]]:
    from models import FAMILIES
    from tasks import TASKS

    return {FAMILY_GROUP: FAMILIES, TASK_GROUP: TASKS}


def is_file(source: str) -> bool:
    return source.endswith(".py") or os.sep in source or "/" in source


def resolve(source: str) -> str:
    """A file's absolute path, or a module name as given."""
    return str(Path(source).expanduser().resolve()) if is_file(source) else source


def load_source(source: str) -> None:
    """Import one plugin (a module name or a .py file) once per process; UserError (one
    line naming the plugin) when it cannot be found or raises while it is imported."""
    key = resolve(source)
    if key in _loaded:
        return
    origin = f"plugin {source}"
    with registering_from(origin):
        if is_file(source):
            path = Path(key)
            if not path.is_file():
                raise UserError(f"plugin {source!r}: no such file")
            name = f"search_plugin_{path.stem}_{hashlib.sha256(key.encode()).hexdigest()[:8]}"
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise UserError(f"plugin {source!r}: not a Python file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # dataclasses and pickling look a module up by its name
            try:
                spec.loader.exec_module(module)
            except UserError as e:
                sys.modules.pop(name, None)
                raise _named(e, origin) from None
            except BaseException as e:
                sys.modules.pop(name, None)
                raise UserError(f"plugin {source!r} failed to import: {one_line(e, with_type=True)}") from None
            _loaded[key] = name
            return
        if importlib.util.find_spec(source.split(".")[0]) is None:
            raise UserError(f"plugin {source!r}: no module of that name (a .py file needs its path)")
        try:
            importlib.import_module(source)
        except UserError as e:
            raise _named(e, origin) from None
        except BaseException as e:
            raise UserError(f"plugin {source!r} failed to import: {one_line(e, with_type=True)}") from None
        _loaded[key] = source


def _named(e: UserError, origin: str) -> UserError:
    """`e` as one line that names the plugin (once)."""
    return UserError(str(e) if str(e).startswith(origin) else f"{origin}: {e}")


def load_entry_points() -> None:
    """Load the installed packages' families and tasks (once per process, once all of
    them loaded: after an error, the next call tries again and fails again)."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    for group, registry in _registries().items():
        for ep in metadata.entry_points(group=group):
            dist = getattr(getattr(ep, "dist", None), "name", None)
            # the module's origin, not the entry's name: one module may register several names
            origin = f"entry point {ep.value}" + (f" (package {dist})" if dist else "")
            if ep.name in registry and registry.origin(ep.name) == BUILT_IN:
                raise UserError(f"{origin}: {registry.kind} {ep.name!r} is already registered ({BUILT_IN})")
            with registering_from(origin):
                try:
                    ep.load()
                except UserError as e:
                    raise _named(e, origin) from None
                except BaseException as e:
                    raise UserError(f"{origin} failed to import: {one_line(e, with_type=True)}") from None
            if ep.name not in registry:
                raise UserError(
                    f"{origin} registered no {registry.kind} named {ep.name!r} (its entry point in {group})"
                )
    _entry_points_loaded = True


def env_sources() -> list[str]:
    """The plugins `$SEARCH_PLUGINS` names (path-separator list)."""
    return [s.strip() for s in os.environ.get(ENV, "").split(os.pathsep) if s.strip()]


def load_plugins(sources: Iterable[str] = ()) -> list[str]:
    """Load entry points, `$SEARCH_PLUGINS`, then `sources` (each once per process);
    return the sources given here and in the environment, resolved."""
    load_entry_points()
    given = [*env_sources(), *[str(s) for s in sources]]
    for source in given:
        load_source(source)
    return [resolve(s) for s in given]


def worker_sources(origins: Iterable[str], other_processes: bool = True) -> tuple[str, ...]:
    """What a worker process imports to know the registrations of `origins`: plugin files
    by absolute path, modules by name; entry points and built-ins need nothing (a worker
    loads entry points itself). Without `other_processes` (the local executor trains in
    this process) nothing. UserError for a registration made where no other process can
    import it (`__main__`, a file run by path)."""
    if not other_processes:
        return ()
    out: list[str] = []
    for origin in origins:
        if origin == BUILT_IN or origin.startswith("entry point "):
            continue
        if origin.startswith("plugin "):
            source = resolve(origin.removeprefix("plugin "))
        elif origin.startswith("module "):
            source = origin.removeprefix("module ")
            if source == "__main__" or not _importable(source):
                raise UserError(
                    f"a family or task registered in {source} (a script or notebook, or by a call rather than "
                    "by a module's import) cannot reach other processes: register it at the top of a .py file "
                    "and pass it as a plugin (plugins=[FILE], "
                    "--plugin FILE) to run it with --executor ray or tune"
                )
        else:
            continue
        if source not in out:
            out.append(source)
    return tuple(out)


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
