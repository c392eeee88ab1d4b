"""A package outside the repository, put on the path with its entry-point metadata
(issue 60, item 8): its family and task are found by the CLI and by the Python API; a
search with it, then compare, and `search model` / `load_model` of its winner; and an
entry point whose module registers no family of its name."""

import json
import os
import subprocess
import sys

import pytest

from tests.search.conftest import REPO
from tests.search.plugins.sources import GOOD

pytestmark = pytest.mark.slow

STUDY = "ext-data-ext-mlp"  # the task is the family's default task, found by entry point
RUN = ("run", "--space", "ext-mlp", "--budget", "2K", "--trials", "4", "--repeats", "2", "--epochs", "2", "--no-report")
ORIGIN = "entry point extpkg (package extpkg)"


def make_site(site, families="ext-mlp = extpkg\n"):
    """`site/extpkg/__init__.py` (GOOD with the names replaced) and its dist-info."""
    package = site / "extpkg"
    package.mkdir(parents=True)
    text = GOOD.replace('"tiny-data"', '"ext-data"').replace('"tiny-mlp"', '"ext-mlp"')
    assert '"ext-data"' in text and '"ext-mlp"' in text and "tiny-" not in text
    (package / "__init__.py").write_text(text)
    info = site / "extpkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: extpkg\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[shape_search.families]\n{families}\n[shape_search.tasks]\next-data = extpkg\n"
    )
    return site


@pytest.fixture
def site(tmp_path):
    return make_site(tmp_path / "site")


def child(args, cwd, site, timeout=300):
    """`search ARGS` in a child process with the repository and `site` on its path, as
    tests/search/conftest.py's `run_subprocess` starts one (which fixes PYTHONPATH to the
    repository alone): one torch thread, no inherited storage or plugins."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + str(site), OMP_NUM_THREADS="1")
    env.pop("SEARCH_STORAGE", None)
    env.pop("SEARCH_PLUGINS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "search.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, out, err


def test_entry_point_family_and_task_found_by_the_cli_searched_compared_and_exported(site, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    code, out, err = child(["spaces"], work, site)
    assert code == 0, err
    line = next((row for row in out.splitlines() if row.startswith("ext-mlp")), None)
    assert line is not None, out
    assert line.endswith(f"from: {ORIGIN}") and "default task ext-data" in line, line
    assert "hourglass" in out and "from: built-in" in out

    code, out, err = child(["tasks"], work, site)
    assert code == 0, err
    line = next((row for row in out.splitlines() if row.startswith("ext-data")), None)
    assert line is not None, out
    assert "[accuracy, maximize]" in line and "from: entry point " in line and "(package extpkg)" in line, line

    code, out, err = child(RUN, work, site)
    assert code == 0, err
    assert f"study '{STUDY}': 4 finished trial(s)" in out, out

    code, out, err = child(["compare", STUDY, "--format", "json"], work, site)
    assert code == 0, err
    verdict = json.loads(out)
    assert verdict["metric"] == "accuracy" and verdict["direction"] == "maximize"
    rows = [f for level in verdict["levels"] for f in level["families"] if f["value"] is not None]
    assert rows and any(f["low"] is not None and f["low"] <= f["value"] <= f["high"] for f in rows), verdict
    best = max(rows, key=lambda f: f["value"])

    folder = tmp_path / "winner"
    code, out, err = child(["model", STUDY, str(best["trial"]), "--out", str(folder)], work, site)
    assert code == 0, err
    assert folder.is_dir() and any(folder.iterdir())
    assert f"trial {best['trial']} of '{STUDY}'" in out and "ext-mlp" in out, out


@pytest.fixture
def on_path(site, monkeypatch, tmp_path):
    """`site` on this process's path, entry points to be loaded afresh; afterwards no
    trace of extpkg (module, entry-point state) is left for later tests."""
    import search.plugins.discovery as discovery

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SEARCH_STORAGE", raising=False)
    monkeypatch.delenv("SEARCH_PLUGINS", raising=False)
    monkeypatch.syspath_prepend(str(site))
    loaded = discovery._entry_points_loaded
    discovery._entry_points_loaded = False
    try:
        yield site
    finally:
        discovery._entry_points_loaded = loaded
        for name in [m for m in sys.modules if m == "extpkg" or m.startswith("extpkg.")]:
            sys.modules.pop(name, None)


def test_entry_point_family_and_task_found_by_the_python_api(on_path, tmp_path):
    import torch

    import search
    from models import FAMILIES
    from tasks import TASKS

    storage = str(tmp_path / "api.db")
    study = search.run(space="ext-mlp", budget="2K", trials=4, repeats=2, epochs=2, storage=storage, report=False)
    assert FAMILIES.origin("ext-mlp") == ORIGIN
    assert FAMILIES.origin("ext-mlp") == ORIGIN
    assert "ext-data" in TASKS and TASKS.origin("ext-data") == ORIGIN
    assert study.name == STUDY

    trials = study.trials()
    assert len(trials) == 4
    assert set(trials["status"]) == {"complete"}
    assert (trials["params"] <= 2000).all() and (trials["params"] > 0).all()
    assert set(trials["family"].astype(str)) == {"ext-mlp"}

    front = study.front()
    assert len(front) > 0
    assert len(study.front("ext-mlp")) == len(front)

    verdict = study.compare().to_dict()
    assert verdict["metric"] == "accuracy" and verdict["direction"] == "maximize"
    rows = [f for level in verdict["levels"] for f in level["families"] if f["value"] is not None]
    assert rows and any(f["low"] is not None and f["low"] <= f["value"] <= f["high"] for f in rows), verdict
    best = max(rows, key=lambda f: f["value"])

    model = study.load_model(best["trial"])
    assert isinstance(model, torch.nn.Module) and not model.training
    params = int(trials.loc[trials["number"] == best["trial"], "params"].iloc[0])
    assert sum(p.numel() for p in model.parameters() if p.requires_grad) == params

    again = search.open(study.name, storage=storage)
    assert again.name == study.name
    columns = ["number", "status", "family", "params"]
    assert again.trials()[columns].reset_index(drop=True).equals(trials[columns].reset_index(drop=True))


def test_an_entry_point_that_registers_no_family_of_its_name_is_one_line_exit_2(tmp_path):
    site = make_site(tmp_path / "site", families="ext-mlp = extpkg\nghost = extpkg\n")
    code, out, err = child(["spaces"], tmp_path, site, timeout=120)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "registered no family named 'ghost'" in lines[0] and "shape_search.families" in lines[0], err
    assert "Traceback" not in err
