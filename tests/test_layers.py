"""The layering of docs/architecture.md, checked: a package imports only the layers below.

    core      <- models <- tasks
    core      <- storage <- reports
    everything <- search (the study loop, executors, CLI)

Every import statement counts, including those inside functions (a lazy import is still
a dependency). Tests and benchmarks may import anything.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "models", "tasks", "storage", "reports", "search")
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "models": {"core"},
    "tasks": {"core", "models"},
    "storage": {"core"},
    "reports": {"core", "storage"},
    "search": {"core", "models", "tasks", "storage", "reports"},
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

    assert [depth(p) for p in PACKAGES] == [1, 2, 3, 2, 3, 4]


def test_the_checker_sees_lazy_and_relative_imports(tmp_path):
    """A function-level import of a higher layer is reported (so the test can fail);
    a relative import stays inside its own package."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "probe.py").write_text(
        "from . import base\nimport core.errors\n\ndef f():\n    from search.study import run_study\n"
        "    import tasks\n    return run_study, tasks\n"
    )
    assert violations("models", tmp_path) == ["models/probe.py:5 imports search", "models/probe.py:6 imports tasks"]
