"""The layering of docs/architecture.md, checked: a package imports only the layers below.

    core      <- models <- tasks
    core      <- storage <- reports
    core      <- verdicts <- reports (the statistics of verdicts, below the pages and the engine)
    everything <- search (the study loop, executors, CLI)

and inside `search`, its sub-packages in this order (each may import those named in
`SEARCH_ALLOWED`, and every project package below `search`):

    recipes, spaces, artifacts, plugins <- executors <- engine <- integrations, tune <- api <- cli

No two modules import each other. Every import statement counts, including those inside
functions (a lazy import is still a dependency). Tests and benchmarks may import anything.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "models", "tasks", "storage", "verdicts", "reports", "search")
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "models": {"core"},
    "tasks": {"core", "models"},
    "storage": {"core"},
    "verdicts": {"core"},
    "reports": {"core", "storage", "verdicts"},
    "search": {"core", "models", "tasks", "storage", "verdicts", "reports"},
}


# search's sub-packages, lowest first, and which of the others each may import.
SEARCH_ALLOWED: dict[str, set[str]] = {
    "recipes": set(),
    "spaces": set(),
    "artifacts": set(),
    "plugins": {"spaces"},  # a user's own families and tasks, and where they are loaded from
    "executors": {"artifacts", "plugins"},
    "engine": {"recipes", "spaces", "executors", "artifacts", "plugins"},  # recipes: a run's options
    "integrations": {"engine", "spaces"},
    "tune": {"engine", "executors", "spaces", "artifacts", "plugins"},  # Ray Tune drives a study (search/tune/)
    "api": {"recipes", "spaces", "artifacts", "plugins", "executors", "engine", "integrations", "tune"},
    "cli": {"recipes", "spaces", "artifacts", "plugins", "executors", "engine", "integrations", "tune", "api"},
}


def imported_packages(path: Path, root: Path) -> set[tuple[str, int]]:
    """(top-level project package, line) of every import in a file (relative ones resolved)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    own = path.relative_to(root).parts[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [own] if node.level else [node.module or ""]
        else:
            continue
        out |= {(n.split(".")[0], node.lineno) for n in names if n.split(".")[0] in PACKAGES}
    return out


def violations(package: str, root: Path = REPO) -> list[str]:
    bad = []
    for path in sorted((root / package).rglob("*.py")):
        for dep, line in sorted(imported_packages(path, root), key=lambda d: d[1]):
            if dep != package and dep not in ALLOWED[package]:
                bad.append(f"{path.relative_to(root)}:{line} imports {dep}")
    return bad


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_imports_only_lower_layers(package):
    assert violations(package) == []


def test_the_layers_form_no_cycle():
    order = {}

    def depth(p: str, seen: tuple[str, ...] = ()) -> int:
        assert p not in seen, f"cycle: {' -> '.join((*seen, p))}"
        if p not in order:
            order[p] = 1 + max((depth(q, (*seen, p)) for q in ALLOWED[p]), default=0)
        return order[p]

    assert [depth(p) for p in PACKAGES] == [1, 2, 3, 2, 2, 3, 4]


def test_the_checker_sees_lazy_and_relative_imports(tmp_path):
    """A function-level import of a higher layer is reported (so the test can fail);
    a relative import stays inside its own package."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "probe.py").write_text(
        "from . import base\nimport core.errors\n\ndef f():\n    from search.engine.study import run_study\n"
        "    import tasks\n    return run_study, tasks\n"
    )
    assert violations("models", tmp_path) == ["models/probe.py:5 imports search", "models/probe.py:6 imports tasks"]


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = REPO) -> dict[str, set[str]]:
    """Every project module -> the project modules it imports (`from pkg import name`
    counts as pkg.name when that is a module, else as pkg; relative imports resolved)."""
    paths = {module_name(p, root): p for pkg in PACKAGES for p in (root / pkg).rglob("*.py")}
    graph = {}
    for mod, path in paths.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                deps |= {f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names}
        graph[mod] = {d for d in deps if d in paths and d != mod}
    return graph


def mutual_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted({tuple(sorted((a, b))) for a, deps in graph.items() for b in deps if a in graph.get(b, ())})


def search_violations(root: Path = REPO) -> list[str]:
    """Imports between search's sub-packages that SEARCH_ALLOWED does not allow, and
    modules of search outside every sub-package."""
    bad = []
    for mod, deps in import_graph(root).items():
        parts = mod.split(".")
        if parts[0] != "search" or mod == "search":
            continue
        own = parts[1]
        if own not in SEARCH_ALLOWED:
            bad.append(f"{mod} is in no sub-package of search ({', '.join(SEARCH_ALLOWED)})")
            continue
        for dep in sorted(deps):
            d = dep.split(".")
            if d[0] == "search" and len(d) > 1 and d[1] != own and d[1] not in SEARCH_ALLOWED[own]:
                bad.append(f"{mod} imports {dep}")
    return sorted(bad)


def test_search_sub_packages_import_only_lower_ones():
    assert search_violations() == []


def test_no_two_modules_import_each_other():
    assert mutual_imports(import_graph()) == []


def test_the_sub_package_checker_can_fail(tmp_path):
    """An engine module importing the CLI, a module outside the sub-packages, and two
    modules that import each other (one lazily) are all reported."""
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
    for sub in ("engine", "cli"):
        (tmp_path / "search" / sub).mkdir()
        (tmp_path / "search" / sub / "__init__.py").write_text("")
    (tmp_path / "search" / "engine" / "a.py").write_text("from search.cli import b\n")
    (tmp_path / "search" / "cli" / "b.py").write_text("def f():\n    from search.engine.a import x\n")
    (tmp_path / "search" / "loose.py").write_text("")
    assert search_violations(tmp_path) == [
        "search.engine.a imports search.cli.b",
        "search.loose is in no sub-package "
        "of search (recipes, spaces, artifacts, plugins, executors, engine, integrations, tune, api, cli)",
    ]
    assert mutual_imports(import_graph(tmp_path)) == [("search.cli.b", "search.engine.a")]
