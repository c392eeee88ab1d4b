"""Recipes (issue 12): every paper experiment is a named file that `search run --recipe`
runs; every paper-scale recipe has a -small twin for a 2-core CPU (a miniature on small
data), and may have a -short one (the paper's own data, shortened to fit a CPU)."""

import pytest

from core.budget import parse_budget
from core.errors import UserError
from search.engine.prepare import prepare
from search.engine.sampling.policies import DEFAULT_SEED_CHECKS
from search.engine.specs import RunSpec
from search.recipes import RUN_KEYS, load_recipe, parse_recipe, recipe_names
from storage import Store
from tests.search.conftest import SHARED_DATA, data_dir_for_mechanics

NAMES = recipe_names()
SMALL = [n for n in NAMES if n.endswith("-small")]
SHORT = [n for n in NAMES if n.endswith("-short")]


def test_every_recipe_has_a_small_twin_and_one_per_seed_paper():
    big = [n for n in NAMES if not n.endswith(("-small", "-short"))]
    assert sorted(f"{n}-small" for n in big) == SMALL
    assert all(n.removesuffix("-short") in big for n in SHORT)
    papers = " ".join(load_recipe(n).paper for n in NAMES)
    for author in ("Chen et al.", "Liao et al.", "Hayase & Karakida", "Yu & Zhang", "Hu et al."):
        assert author in papers


@pytest.mark.parametrize("name", NAMES)
def test_every_recipe_names_valid_settings(name):
    """Families, task, budget, sampler: everything `search run` checks before it writes."""
    r = load_recipe(name)
    assert r.description and r.paper and r.claim
    run = r.run
    spec = RunSpec(
        spaces=tuple(run["space"].split(",")),
        task=run["task"],
        budget=parse_budget(str(run["budget"])),
        trials=run.get("trials", 20),
        repeats=run.get("repeats", 1),
        sampler=run.get("sampler"),
        task_options=r.task_options,
    )
    prepare(spec)


def the_one_study(url: str):
    """(study, trials frame) of the one study a recipe's smoke run left in `url`."""
    store = Store(url)
    try:
        (summary,) = store.list_studies()
        study = store.get_study(summary.name)
        return study, store.trials_frame(study.name)
    finally:
        store.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", SMALL)
def test_every_small_recipe_runs_in_smoke_mode(cli, tmp_path, name):
    """With ../shared/data (CI) every recipe must run. In a clone with nothing beside it
    every recipe must run too: digits, checkerboard and sines need no files, and
    liao-ffn-small reads a generated stand-in for the Shakespeare corpus; a recipe whose
    task needs other data files that are neither cached nor downloadable here is skipped,
    naming what is missing."""
    data = data_dir_for_mechanics(tmp_path)
    code, out, err = cli(
        "run",
        "--recipe",
        name,
        "--smoke",
        "--no-report",
        "--storage",
        f"sqlite:///{tmp_path}/r.db",
        "--data-dir",
        str(data),
    )
    if code == 2 and data != SHARED_DATA and any(w in err for w in ("data", "download", "not found", "--data-dir")):
        pytest.skip(f"{name} needs data files that {SHARED_DATA} would hold: {err.strip()}")
    assert code == 0, err
    study, df = the_one_study(f"sqlite:///{tmp_path}/r.db")
    assert study.settings["recipe"] == name
    assert (df["status"] == "complete").sum() >= 2
    assert set(df["family"]) <= set(load_recipe(name).run["space"].split(","))


CHEN = [n for n in NAMES if n.startswith("chen-") and not n.endswith("-small")]


@pytest.mark.slow
@pytest.mark.parametrize("name", CHEN)
def test_every_chen_mnist_recipe_runs_in_smoke_mode(cli, tmp_path, name):
    """The -short recipes (a CPU's hour) and the paper-scale ones (the GPU checklist's step
    7) run end to end on MNIST with their own space, task and search settings: two trials
    of one epoch on 512 images, at a budget of 3M (the recipes' own reach 5M to 80M; their
    smallest models, 0.6M-1.9M, fit under 3M)."""
    if not (SHARED_DATA / "mnist").is_dir():
        pytest.skip(f"{name} trains on MNIST, which is not in {SHARED_DATA}")
    db = f"sqlite:///{tmp_path}/r.db"
    code, _, err = cli(
        "run", "--recipe", name, "--smoke", "--budget", "3M", "--no-report", "--keep", "none",
        "--storage", db, "--data-dir", str(SHARED_DATA),
    )  # fmt: skip
    assert code == 0, err
    study, df = the_one_study(db)
    recipe = load_recipe(name)
    assert study.settings["recipe"] == name and study.settings["recipe_version"] == recipe.version
    assert study.settings["sampler"] == recipe.run["sampler"] and study.budget == 3_000_000
    assert (df["status"] == "complete").sum() >= 2 and (df["params"] <= 3_000_000).all()


def test_flags_on_the_command_line_override_the_recipe(cli, tmp_path):
    code, out, err = cli(
        "run",
        "--recipe",
        "chen-denoise-small",
        "--trials",
        "1",
        "--repeats",
        "1",
        "--epochs",
        "1",
        "--max-train-samples",
        "256",
        "--budget",
        "30K",
        "--no-report",
        "--storage",
        f"sqlite:///{tmp_path}/r.db",
    )
    assert code == 0, err
    store = Store(f"sqlite:///{tmp_path}/r.db")
    (summary,) = store.list_studies()
    study = store.get_study(summary.name)
    assert study.budget == 30_000 and study.settings["repeats"] == 1 and study.settings["trials"] == 1
    assert study.settings["train"]["epochs"] == 1
    store.close()


def test_recipes_command_lists_and_shows(cli):
    code, out, _ = cli("recipes")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == NAMES
    code, out, _ = cli("recipes", "chen-denoise")
    assert "runs: search run --space hourglass,conventional --task mnist-denoise --budget 80M" in out
    assert "--epochs 30" in out


@pytest.mark.parametrize(
    "data,match",
    [
        ({"run": {"space": "hourglass", "budget": "1M"}}, "needs a one-line description"),
        ({"description": "x", "run": {"space": "hourglass"}}, r"\[run\] needs budget"),
        ({"description": "x", "run": {"space": "hourglass", "budget": "1M", "epoch": 3}}, "unknown key.*epoch"),
        ({"description": "x", "run": {"space": "hourglass", "budget": "1M", "trials": "5"}}, "trials must be int"),
        ({"description": "x", "run": {"space": "hourglass", "budget": "1M", "trials": True}}, "trials must be int"),
        ({"description": "x", "runs": {}}, "unknown key"),
        ({"description": "x", "run": {"space": "lmlp", "budget": "1M", "ema": "0.9999"}}, "ema must be float or int"),
        ({"description": "x", "run": {"space": "lmlp", "budget": "1M", "ema_warmup": 1}}, "ema_warmup must be bool"),
        ({"description": "x", "run": {"space": "hourglass", "budget": "1M"}, "task_options": 3}, "must be a table"),
    ],
)
def test_malformed_recipes_are_one_line_errors(data, match):
    with pytest.raises(UserError, match=match):
        parse_recipe("x", data)


def test_run_keys_are_search_run_flags():
    from search.cli import build_parser

    run = build_parser()._subparsers._group_actions[0].choices["run"]
    dests = {a.dest for a in run._actions}
    assert set(RUN_KEYS) <= dests


def test_the_paper_scale_hu_recipe_turns_on_u_vits_ema(cli):
    """Hu & Rostami Table 5 is U-ViT's recipe; U-ViT's code keeps an EMA at 0.9999."""
    from search.cli import build_parser
    from search.cli.run import run_spec

    assert load_recipe("hu-lmlp").run["ema"] == 0.9999
    spec = run_spec(build_parser().parse_args(["run", "--recipe", "hu-lmlp"]))
    assert (spec.train.ema, spec.train.ema_warmup, spec.train.optimizer) == (
        0.9999,
        True,
        "adamw-uvit",
    )  # warm-up: ours, stated
    flags = run_spec(build_parser().parse_args(["run", "--recipe", "hu-lmlp", "--ema", "0.99", "--ema-warmup"]))
    assert (flags.train.ema, flags.train.ema_warmup) == (0.99, True)  # the command line wins
    off = run_spec(build_parser().parse_args(["run", "--recipe", "hu-lmlp", "--ema", "0"]))
    assert off.train.ema == 0.0
    r = parse_recipe(
        "x", {"description": "x", "run": {"space": "lmlp", "budget": "1M", "ema": 0.999, "ema_warmup": True}}
    )
    assert r.run["ema_warmup"] is True
    code, out, _ = cli("recipes", "hu-lmlp")
    assert code == 0 and "--ema 0.9999" in out


# What decides a search besides its question: the keys every recipe must state (issue 63),
# and those that only a sampler drawing sizes (not the grid) reads.
PINNED = ("sampler", "pruner", "epochs", "seed", "trials", "repeats", "seed_checks")
PINNED_OPTUNA = ("sampler_scope", "shape_draw", "size_scale", "revisit", "corners", "start", "spread", "share")


def unpinned(run: dict) -> list[str]:
    """The settings a recipe's [run] table leaves to a default (the pruner's grace too, with a pruner)."""
    needed = list(PINNED) + ([] if run.get("sampler") == "grid" else list(PINNED_OPTUNA))
    if run.get("pruner") != "none":
        needed.append("prune_grace")
    if run.get("seed_checks", DEFAULT_SEED_CHECKS) > 0 and run.get("repeats", 1) == 1:  # which ones are checked
        needed.append("seed_check_order")
    return [k for k in needed if k not in run]


@pytest.mark.parametrize("name", NAMES)
def test_every_recipe_pins_every_setting_that_decides_its_search(name):
    """A later change of a default cannot change a recipe's search."""
    assert unpinned(load_recipe(name).run) == []


def test_a_recipe_left_to_a_default_is_caught():
    bare = parse_recipe("x", {"description": "d", "run": {"space": "hourglass", "budget": "1M"}})
    assert unpinned(bare.run) == [*PINNED, *PINNED_OPTUNA, "prune_grace", "seed_check_order"]
    grid = parse_recipe("g", {"description": "d", "run": {"space": "hourglass", "budget": "1M", "sampler": "grid"}})
    assert unpinned(grid.run) == [
        *("pruner", "epochs", "seed", "trials", "repeats", "seed_checks", "prune_grace", "seed_check_order")
    ]
    checked = {"space": "hourglass", "budget": "1M", "repeats": 1, "seed_checks": 0.2}
    assert "seed_check_order" in unpinned(parse_recipe("c", {"description": "d", "run": checked}).run)
    assert "seed_check_order" not in unpinned(
        parse_recipe("c", {"description": "d", "run": checked | {"repeats": 3}}).run
    )


def test_a_study_records_its_recipes_version(cli, tmp_path):
    code, _, err = cli(
        "run", "--recipe", "chen-denoise-small", "--smoke", "--no-report", "--storage", f"sqlite:///{tmp_path}/r.db"
    )
    assert code == 0, err
    store = Store(f"sqlite:///{tmp_path}/r.db")
    (study,) = store.list_studies()
    settings = store.get_study(study.name).settings
    store.close()
    version = load_recipe("chen-denoise-small").version
    assert settings["recipe"] == "chen-denoise-small" and settings["recipe_version"] == version and len(version) == 12
    assert settings["sampler"] == "tpe" and settings["revisit"] == "train" and settings["shape_draw"] == "random"
