"""`search train STUDY TRIAL --epochs E [--repeats R] [--recipe NAME]`: a trial's
configuration trained again, recorded as a retraining of that trial beside the search's
results (search/engine/retrain.py)."""

from __future__ import annotations

import argparse

from search.cli.common import open_store, storage_arg


def add_parser(sub) -> None:
    t = sub.add_parser("train", help="train a trial's configuration again: longer, more seeds, a recipe's settings")
    t.add_argument("study", help="study name")
    t.add_argument("trial", type=int, help="trial number (a complete trial)")
    t.add_argument("--epochs", type=int, required=True, help="epochs per run")
    t.add_argument(
        "--repeats",
        type=int,
        default=1,
        metavar="R",
        help="runs, one per seed (default 1; the seeds are the trial's own, then more)",
    )
    t.add_argument(
        "--recipe",
        help="take a recipe's training settings (batch size, optimizer, lr, EMA, ...): "
        "a name ('search recipes') or a .toml file; its task must be the study's",
    )
    t.add_argument("--device", default="auto", help="auto (cuda when available), cpu, cuda, cuda:1, ...")
    t.add_argument("--data-dir", help="where data sets are (default: $SEARCH_DATA_DIR, then the user cache)")
    t.add_argument(
        "--artifacts",
        metavar="URL",
        help="where the weights go: a folder, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX "
        "(default: where the study keeps its weights)",
    )
    storage_arg(t)
    t.set_defaults(func=cmd_train)


def cmd_train(a: argparse.Namespace) -> int:
    from pathlib import Path

    from core.errors import UserError
    from search.api.progress import ConsoleProgress
    from search.engine.retrain import RECIPE_TRAIN_KEYS, RetrainRequest, plan_retraining, run_retraining

    if a.data_dir is not None and not Path(a.data_dir).is_dir():
        raise UserError(f"data directory {a.data_dir!r} does not exist")
    recipe = None
    if a.recipe:
        from search.recipes import load_recipe

        recipe = load_recipe(a.recipe)
    req = RetrainRequest(
        study=a.study,
        trial=a.trial,
        epochs=a.epochs,
        repeats=a.repeats,
        recipe=recipe.name if recipe else None,
        recipe_task=recipe.run.get("task") if recipe else None,
        train={k: v for k, v in (recipe.run.items() if recipe else ()) if k in RECIPE_TRAIN_KEYS},
        device=a.device,
        data_dir=a.data_dir,
        artifacts=a.artifacts,
    )
    with open_store(a.storage) as store:
        plan = plan_retraining(store, req)  # everything checked before the first write
        number, result = run_retraining(plan, store, ConsoleProgress())
    print(retraining_summary(plan, number, result))
    return 0 if result.status == "complete" else 1


def retraining_summary(plan, number: int, result) -> str:
    """What `search train` prints: the retraining against the search's result."""
    metric = plan.study.metric
    agg = result.aggregate()
    where = f"retraining {number} of trial {plan.trial.number} of {plan.study.name!r}"
    if result.status != "complete" or metric not in agg:
        return f"{where}: {result.status}: {result.error or 'no complete run'}"
    mean, std, n = agg[metric]
    search = plan.trial.metrics.get(metric)
    searched_epochs = (plan.study.settings.get("train") or {}).get("epochs")
    searched = (
        ""
        if search is None
        else (
            f"; the search's: {search[0]:.4g}"
            + (f" ± {search[1]:.3g}" if search[1] is not None else "")
            + f" over {search[2]} run(s) at {searched_epochs or 'the task default'} epochs"
        )
    )
    kept = [r.artifacts["weights"]["store_key"] for r in result.runs if "weights" in r.artifacts]
    return (
        f"{where}: {metric} {mean:.4g}"
        + (f" ± {std:.3g}" if std is not None else "")
        + f" over {n} run(s) at {plan.settings['epochs']} epochs{searched}\n"
        + (f"weights: {plan.spec.weights} ({len(kept)} file(s))\n" if kept else "")
        + "the study and trial pages show it beside the search's: search report, search serve"
    )
