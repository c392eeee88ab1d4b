"""benchmarks/ is a package of sub-packages, one folder per question the scripts answer
(search_quality, speed, verdicts, reliability, gpu, reproductions), each with an
`__init__.py` and a README.md that names every script in it; the shared helpers stay at
the top level. A script is imported one way, `benchmarks.GROUP.NAME` from the repository's
root (`python -m benchmarks.GROUP.NAME` to run it), with no script putting a folder on
sys.path, and importing a script runs nothing (each runs under
`if __name__ == "__main__":`). The commands and paths that the docs give name scripts that
are there."""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
import sys

import pytest

from tests.bench_scripts import REPO

BENCHMARKS = REPO / "benchmarks"
GROUPS = sorted(p.name for p in BENCHMARKS.iterdir() if p.is_dir() and p.name != "__pycache__")
# the top level: what several folders use (bench_util) and two general tools the docs use
TOP_LEVEL = {"bench_util", "trials_to_study", "front_png"}
# every module of the package, dotted below `benchmarks` ("speed.quickstart_speed")
MODULES = sorted(
    ".".join(p.relative_to(BENCHMARKS).with_suffix("").parts)
    for p in BENCHMARKS.rglob("*.py")
    if p.stem != "__init__" and "__pycache__" not in p.parts
)
SCRIPTS = sorted(p for p in BENCHMARKS.rglob("*") if p.suffix in {".py", ".sh"} and p.stem != "__init__")
LIBRARIES = {"bench_util", "peer_space", "peers", "peer_ax", "peer_optuna", "peer_tune"}  # no `__main__` of their own
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


def test_benchmarks_is_a_package_of_folders_and_lists_every_script():
    assert (BENCHMARKS / "__init__.py").is_file()
    assert {"search_quality", "speed", "verdicts", "reliability", "gpu"} <= set(GROUPS)
    assert len(MODULES) > 40 and "bench_util" in MODULES
    top = {name for name in MODULES if "." not in name}
    assert top == TOP_LEVEL, (
        f"scripts at benchmarks/'s top level: {sorted(top - TOP_LEVEL)}; a script goes in the folder of "
        "the question it answers (benchmarks/README.md)"
    )
    assert not [p for p in BENCHMARKS.glob("*.sh")], "a shell script goes in its folder too"


@pytest.mark.parametrize("group", GROUPS)
def test_every_folder_is_a_package_whose_readme_names_each_script(group):
    folder = BENCHMARKS / group
    assert (folder / "__init__.py").is_file(), f"benchmarks/{group}/ has no __init__.py"
    assert (folder / "README.md").is_file(), f"benchmarks/{group}/ has no README.md"
    assert not [p for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"], "one level of folders"
    readme = (folder / "README.md").read_text()
    scripts = sorted(p.name for p in folder.iterdir() if p.suffix in {".py", ".sh"} and p.stem != "__init__")
    assert scripts, f"benchmarks/{group}/ holds no script"
    unnamed = [name for name in scripts if f"[{name}]({name})" not in readme]
    assert not unnamed, f"benchmarks/{group}/README.md does not link {unnamed}"
    commands = set(re.findall(rf"python -m benchmarks\.{group}\.(\w+)", readme))
    runnable = {p.stem for p in folder.glob("*.py") if p.stem != "__init__" and p.stem not in LIBRARIES}
    assert runnable - commands == set(), f"benchmarks/{group}/README.md gives no command for {runnable - commands}"
    top = (BENCHMARKS / "README.md").read_text()
    assert f"]({group}/README.md)" in top, f"benchmarks/README.md does not link benchmarks/{group}/README.md"


@pytest.mark.parametrize("readme", sorted(str(p.relative_to(REPO)) for p in BENCHMARKS.rglob("README.md")))
def test_the_readmes_links_lead_to_files(readme):
    path = REPO / readme
    for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
        if re.match(r"[a-z]+://|#|mailto:", target):
            continue
        assert (path.parent / target.split("#")[0]).exists(), f"{readme}: {target}"


def test_scripts_import_each_other_by_their_full_name():
    """`from benchmarks.bench_util import ...`, `from benchmarks.verdicts.verdict_calibration
    import ...`: never a bare `import bench_util`, a relative import or a name that is not
    a module (a module imported under two names is two modules)."""
    stems = sorted({name.rsplit(".", 1)[-1] for name in MODULES})  # not the folders: `verdicts` is the project's too
    bare = re.compile(rf"^\s*(from|import)\s+({'|'.join(stems)})\b", re.MULTILINE)
    relative = re.compile(r"^\s*from\s+\.", re.MULTILINE)
    full = re.compile(r"^\s*(from|import)\s+benchmarks((?:\.\w+)*)(?:\s+import\s+(\w+))?", re.MULTILINE)
    packages = {"", *GROUPS}
    found = []
    for p in SCRIPTS:
        if p.suffix != ".py":
            continue
        text, where = p.read_text(), p.relative_to(REPO)
        found += [f"{where}: {m.group(0).strip()}" for m in [*bare.finditer(text), *relative.finditer(text)]]
        for m in full.finditer(text):
            name = m.group(2).lstrip(".")
            if m.group(1) == "from" and name in packages:  # `from benchmarks.verdicts import verdict_calibration`
                name = f"{name}.{m.group(3)}".lstrip(".")
            if name not in MODULES and name not in packages:
                found.append(f"{where}: {m.group(0).strip()} (no module benchmarks.{name})")
    assert not found, "; ".join(found)


def _source(name: str) -> str:
    return (BENCHMARKS / (name.replace(".", "/") + ".py")).read_text()


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
    if name.rsplit(".", 1)[-1] not in LIBRARIES:
        assert re.search(r'^if __name__ == "__main__":', _source(name), re.MULTILINE), name


def test_the_commands_and_paths_the_docs_give_name_scripts_that_are_there():
    """`python -m benchmarks.GROUP.NAME` and `benchmarks/GROUP/NAME.py` in the README, the
    docs (not docs/data: the commands as they ran), .ci and benchmarks/ itself."""
    pages = [REPO / "README.md", *(REPO / "docs").rglob("*.md"), *(REPO / ".ci").iterdir(), *SCRIPTS]
    pages += list(BENCHMARKS.rglob("README.md"))
    module = re.compile(r"(?<![\w./-])benchmarks((?:\.[a-z_]\w*)+)")
    path = re.compile(r"(?<![\w./-])benchmarks/([\w/]+\.(?:py|sh))")
    found = []
    for page in pages:
        if not page.is_file() or (REPO / "docs" / "data") in page.parents:
            continue
        text = page.read_text()
        for m in module.finditer(text):
            dotted = m.group(1)
            if dotted in {".md", ".NAME", ".GROUP"} or dotted.startswith((".GROUP.", ".NAME")):
                continue  # docs/benchmarks.md; the placeholders
            parts = dotted.strip(".").split(".")
            target = BENCHMARKS.joinpath(*parts)
            if not (target.with_suffix(".py").is_file() or (target / "__init__.py").is_file()):
                # `benchmarks.speed.fused_trials.main`: a module's attribute
                if not BENCHMARKS.joinpath(*parts[:-1]).with_suffix(".py").is_file():
                    found.append(f"{page.relative_to(REPO)}: benchmarks{dotted}")
        for m in path.finditer(text):
            if not (BENCHMARKS / m.group(1)).is_file() and "GROUP" not in m.group(1) and "NAME" not in m.group(1):
                found.append(f"{page.relative_to(REPO)}: benchmarks/{m.group(1)}")
    assert not found, "no such script: " + "; ".join(sorted(set(found)))


@pytest.mark.parametrize("name", ["trials_to_study", "speed.quickstart_speed"])
def test_a_script_runs_as_a_module_from_the_repository_root(name):
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{name}", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
