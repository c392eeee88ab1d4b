"""`search.run`, `search.open` and the study handle (issue 60, item 1) with a family and a
task registered in-process, as a script or notebook would; the run options against the
parser's defaults; `search --help` without torch."""

import importlib
import subprocess
import sys

import pytest
import torch

import search
from core.errors import UserError
from search.engine.run_options import DEFAULTS as RUN_OPTIONS
from tests.search.plugins.conftest import clean_registries  # noqa: F401  (autouse: forget the registrations)
from tests.search.plugins.sources import PRELUDE

NS: dict = {}
exec(compile(PRELUDE, "prelude", "exec"), NS)


@pytest.fixture
def registered():
    search.array_task("api-data", NS["splits"], metrics={"accuracy": "maximize"}, epochs=2, batch_size=32, lr=1e-2)
    search.family("api-mlp", space=NS["SPACE"], build=NS["mlp"], default_task="api-data")


def test_run_returns_a_study_handle_of_trials_fronts_verdicts_and_models(registered, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    study = search.run(
        space="api-mlp", budget="2K", trials=4, repeats=2, storage=str(tmp_path / "api.db"), report=False
    )
    df = study.trials()
    assert len(df) == 4 and (df.params <= 2000).all() and set(df.family) == {"api-mlp"}
    front = study.front("api-mlp")
    assert len(front) >= 1 and set(front["family"]) == {"api-mlp"}
    verdict = study.compare().to_dict()
    rows = [f for level in verdict["levels"] for f in level["families"] if f["value"] is not None]
    assert rows and any(f["low"] is not None and f["low"] <= f["value"] <= f["high"] for f in rows)
    best = max(rows, key=lambda f: f["value"])
    model = study.load_model(best["trial"])
    assert isinstance(model, torch.nn.Module) and sum(p.numel() for p in model.parameters()) == best["params"]
    again = search.open(study.name, storage=str(tmp_path / "api.db"))
    assert again.trials()["number"].tolist() == df["number"].tolist()


def test_run_refuses_bad_options_before_any_write(registered, tmp_path):
    db = tmp_path / "api.db"
    with pytest.raises(UserError, match="unknown option 'bugdet'"):
        search.run(space="api-mlp", budget="2K", bugdet=3, storage=str(db))
    with pytest.raises(UserError, match="budget 10 is below the smallest api-mlp model"):
        search.run(space="api-mlp", budget=10, storage=str(db))
    with pytest.raises(UserError, match="budget 10 is below the smallest api-mlp model"):
        search.run(family="api-mlp", budget=10, storage=str(db))  # family= is space= by its own name
    with pytest.raises(UserError, match="takes space= or family=, not both"):
        search.run(space="api-mlp", family="api-mlp", budget="2K", storage=str(db))
    with pytest.raises(UserError, match="--pack must be a whole number of trials of at least 1"):
        search.run(space="api-mlp", budget="2K", pack=0, storage=str(db))
    with pytest.raises(UserError, match="--fuse must be on or off"):
        search.run(space="api-mlp", budget="2K", fuse="maybe", storage=str(db))
    assert not db.exists()


def test_open_a_missing_study_is_one_line(tmp_path):
    with pytest.raises(UserError) as e:
        search.open("nope", storage=str(tmp_path / "x.db"))
    assert "nope" in str(e.value) and "\n" not in str(e.value)


def test_the_run_options_are_the_parsers_with_its_defaults():
    parsed = vars(importlib.import_module("search.cli.main").build_parser().parse_args(["run"]))
    assert {k: v for k, v in parsed.items() if k not in ("command", "func")} == RUN_OPTIONS


def test_every_public_name_has_a_docstring():
    for name in ("run", "open", "Study", "family", "array_task", "task", "load_model"):
        doc = getattr(search, name).__doc__ or ""
        assert len(doc) > 100, name
    for name in ("trials", "front", "compare", "predict", "load_model"):
        assert len(getattr(search.Study, name).__doc__ or "") > 60, name


def test_help_imports_neither_torch_nor_plugins(tmp_path):
    code = (
        "import sys\nfrom search.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('search_plugin')))"
    )
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('imported')\n")
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"SEARCH_PLUGINS": str(bad), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
