"""A user's own families and tasks (issue 60): registering them (families.py, tasks.py),
loading them from entry points, files, modules and `$SEARCH_PLUGINS` (discovery.py), and
the checks that run before a study with them starts (checks.py)."""

from search.plugins.discovery import ENV, FAMILY_GROUP, TASK_GROUP, load_plugins, load_source, worker_sources

__all__ = ["ENV", "FAMILY_GROUP", "TASK_GROUP", "load_plugins", "load_source", "worker_sources"]
