"""benchmarks/ is a package imported one way: `benchmarks.NAME` from the repository's root
(`python -m benchmarks.NAME` to run a script), with no script putting a folder on sys.path,
and importing a script runs nothing (each runs under `if __name__ == "__main__":`)."""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
import sys

import pytest

from tests.bench_scripts import REPO

BENCHMARKS = REPO / "benchmarks"
MODULES = sorted(p.stem for p in BENCHMARKS.glob("*.py") if p.stem != "__init__")
OPTIONAL = {"ax": "Ax is not installed (the peers extra: pip install -e '.[peers]')"}  # an extra's top module


def test_no_file_of_benchmarks_edits_sys_path():
    edits = re.compile(r"sys\.path\s*(\.(insert|append|extend)\b|\[[^\]]*\]\s*=|\+=|=)")
    found = [
        f"{p.relative_to(REPO)}:{i}: {line.strip()}"
        for p in sorted(BENCHMARKS.rglob("*"))
        if p.is_file() and p.suffix in {".py", ".sh"}
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if "sys.path" in line and (p.suffix == ".sh" or edits.search(line))
    ]
    assert not found, "benchmarks/ edits sys.path: " + "; ".join(found)


def test_benchmarks_is_a_package_and_lists_every_script():
    assert (BENCHMARKS / "__init__.py").is_file()
    assert len(MODULES) > 40 and "bench_util" in MODULES


def test_scripts_import_their_siblings_through_the_package():
    """`from benchmarks.bench_util import ...`, never a bare `import bench_util` (a module
    imported under two names is two modules)."""
    bare = re.compile(rf"^\s*(from|import)\s+({'|'.join(MODULES)})\b", re.MULTILINE)
    found = [f"{name}.py: {m.group(0).strip()}" for name in MODULES for m in bare.finditer(_source(name))]
    assert not found, "; ".join(found)


def _source(name: str) -> str:
    return (BENCHMARKS / f"{name}.py").read_text()


@pytest.mark.parametrize("name", MODULES)
def test_every_module_imports_by_its_package_name_without_running(name, monkeypatch, capsys):
    needs = [top for top in OPTIONAL if re.search(rf"^\s*(from|import)\s+{top}\b", _source(name), re.MULTILINE)]
    missing = [top for top in needs if importlib.util.find_spec(top) is None]
    if missing:
        pytest.skip(f"benchmarks.{name}: {OPTIONAL[missing[0]]}")
    monkeypatch.setattr(sys, "argv", ["-c", "--nothing-to-parse"])  # a run at import would trip on it
    module = importlib.import_module("benchmarks." + name)
    assert module.__name__ == f"benchmarks.{name}"
    out = capsys.readouterr()
    assert out.out == "", f"importing benchmarks.{name} printed: {out.out[:300]}"
    if name not in {"bench_util", "peer_space", "peers", "peer_ax", "peer_optuna", "peer_tune"}:
        assert re.search(r'^if __name__ == "__main__":', _source(name), re.MULTILINE), name


def test_a_script_runs_as_a_module_from_the_repository_root():
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.trials_to_study", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
