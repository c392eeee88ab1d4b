"""`search run`: parse the flags into a RunSpec, check everything, run the study, print
its Pareto table and write its report page."""
from __future__ import annotations

import argparse
from pathlib import Path

from core.errors import UserError
from search.artifacts.location import DEFAULT_KEEP, KEEP
from search.cli.common import open_store, print_frame, storage_arg, task_options
from search.engine.policies import (
    CORNERS,
    DEFAULT_CORNERS,
    DEFAULT_SIZE_SCALE,
    DEFAULT_REVISIT,
    DEFAULT_START,
    REVISITS,
    MODELLED_FROM,
    SHAPE_DRAWS,
    SIZE_SCALES,
    STARTS,
    DEFAULT_SAMPLER,
    DEFAULT_SCOPE,
    DEFAULT_SHARE,
    DEFAULT_SPREAD,
    FREE_SHARE_SAMPLER,
    SCOPES,
    SHARES,
    SPREADS,
)
from search.engine.pruners import DEFAULT_PRUNER
from search.engine.samplers import SAMPLERS

DEFAULT_REPORT_DIR = "search-reports"


def add_parser(sub) -> None:
    """`search run`'s flags, in groups as `search run --help` shows them."""
    r = sub.add_parser("run", help="run or resume a study")
    what = r.add_argument_group("what to search")
    what.add_argument("--recipe", help="a paper experiment by name ('search recipes') or a recipe .toml file; "
                                       "flags given here override its values")
    what.add_argument("--space", help="family or comma list, e.g. hourglass,conventional (required without --recipe)")
    what.add_argument("--budget", help="max trainable parameters: 500K, 80M, 1.5B, 80000000 (required without --recipe)")
    what.add_argument("--task", help="task (default: the first family's paper task)")
    what.add_argument("--budget-of", help="what --budget counts: params (each family's parameter convention, the "
                                          "default) or omega (connections per layer: mixer, s-mixer, rp-mixer, "
                                          "sw-mlp; the sparse-MLP paper's fixed quantity)")
    what.add_argument("--trials", type=int, help="finished trials to reach (default 20)")
    what.add_argument("--repeats", type=int, help="seeds per configuration (default 1)")
    what.add_argument("--study", help="study name (default: TASK-FAMILIES)")
    what.add_argument("--seed", type=int, help="study seed (default 0)")
    what.add_argument("--search-repeats", type=int, default=1, metavar="K",
                      help="run K independent searches of the question (studies NAME-r1..NAME-rK, seeds SEED.."
                           "SEED+K-1); 'search compare NAME' pools them, with intervals from the spread between "
                           "them (default 1)")
    what.add_argument("--space-file", help="TOML or YAML file overriding the spaces' ranges")
    what.add_argument("--smoke", action="store_true", help="tiny run: 2 trials, 1 epoch, 512 samples")
    how = r.add_argument_group("how to search")
    how.add_argument("--sampler",
                     help=f"{', '.join(SAMPLERS.names())} (default {DEFAULT_SAMPLER}; {FREE_SHARE_SAMPLER} with --share free "
                          f"and several families)")
    how.add_argument("--spread",
                     help=f"{', '.join(SPREADS)}: with an Optuna sampler, draw a target size log-uniformly between the "
                          f"smallest model and the budget first and aim the config at it, or not (default {DEFAULT_SPREAD})")
    how.add_argument("--share",
                     help=f"{', '.join(SHARES)}: with an Optuna sampler and several families, give the families "
                          f"turns, let the sampler choose the family, or give the next trial to the family whose "
                          f"last trials most often joined its front (default {DEFAULT_SHARE})")
    how.add_argument("--sampler-scope",
                     help=f"{', '.join(SCOPES)}: with an Optuna sampler and several families, one sampler for the "
                          f"study (it ranks every family's trials together) or one per family under the turns (each "
                          f"learns from its own family's trials only) (default: family for gp, {DEFAULT_SCOPE} for the others "
                          f"and with --share free)")
    how.add_argument("--corners",
                     help=f"{', '.join(CORNERS)}: with an Optuna sampler and --spread size, what a new study trains "
                          f"first: each family's smallest model and a model at the budget, the smallest only, "
                          f"neither (the sampler's own start), or the smallest first and the budget models as the "
                          f"study's last trials (default {DEFAULT_CORNERS})")
    how.add_argument("--start",
                     help=f"{', '.join(STARTS)}: with an Optuna sampler and --spread size, the target sizes of each "
                          f"family's random start: spread over its whole size range, or under a cap that rises from "
                          f"its smallest model to the budget, so that the first trials are cheap (default {DEFAULT_START})")
    how.add_argument("--revisit",
                     help=f"{', '.join(REVISITS)}: with an Optuna sampler, what a proposal of a configuration the "
                          f"study has already trained or pruned gets (its seeds follow from it, so training it again "
                          f"recomputes the stored curve): the sampler is told the stored result and proposes again, "
                          f"or it is trained again (default {DEFAULT_REVISIT})")
    how.add_argument("--shape-draw",
                     help=f"{', '.join(SHAPE_DRAWS)}: with an Optuna sampler, how each width and depth is drawn: "
                          f"as a parameter over the range it may take (under a target size that range moves, so "
                          f"a GP sampler leaves it to its random draw), or as its position in that range, which "
                          f"the sampler models (default: modelled with gp when --space names several families, "
                          f"or one given at least {MODELLED_FROM} trials, else random)")
    how.add_argument("--size-scale",
                     help=f"{', '.join(SIZE_SCALES)}: how an Optuna sampler is told each trial's parameter count "
                          f"(its first objective): as counted, or log10 of it, the axis the fronts are drawn and "
                          f"measured on (default {DEFAULT_SIZE_SCALE})")
    how.add_argument("--pruner", help="pareto: stop a trial after an epoch at which a finished trial of its family "
                                      "with no more parameters was clearly better; rungs: judge at the epochs 1, 3, 9, "
                                      "27, ... and keep a trial while fewer than a third of its family rank ahead of it "
                                      "there (non-dominated sorting); checked-rungs: a rung judges a family only "
                                      "while, replayed on the family's finished trials, it keeps 0.99 of their "
                                      "front, and the pareto rule judges elsewhere; none: never "
                                      f"(default {DEFAULT_PRUNER})")
    how.add_argument("--prune-grace", type=float,
                     help="the first epoch at which a trial may be stopped, a fraction of the epochs in (0, 1) "
                          "(default: 1/3 for pareto, the first epoch for rungs and checked-rungs)")
    train = r.add_argument_group("training")
    train.add_argument("--epochs", type=int, help="epochs per trial (default: the task's)")
    train.add_argument("--batch-size", type=int, help="batch size (default: the task's)")
    train.add_argument("--optimizer", help="adamw (AdamW, linear decay; the default), sgd-step (SGD with momentum "
                                           "0.9, lr x0.2 at 50/70/90%% of the steps, Yu & Zhang's recipe) or adamw-uvit "
                                           "(betas 0.9/0.9, warm-up then constant: Hu & Rostami's Table 5)")
    train.add_argument("--lr", type=float, help="learning rate when the space does not search one (default: the task's)")
    train.add_argument("--ema", type=float, metavar="DECAY",
                       help="an exponential moving average of the weights with this decay per step, in [0, 1) "
                            "(e.g. 0.9999, U-ViT's); validation, the kept state and the test metrics (sample "
                            "quality) use the average (default 0: off; supervised tasks)")
    train.add_argument("--ema-warmup", action=argparse.BooleanOptionalAction, default=None,
                       help="with --ema: the decay of update n is min(DECAY, (1+n)/(10+n)), as latent-diffusion's "
                            "LitEma, so the average forgets the initialisation on a short run (default off, as U-ViT)")
    train.add_argument("--compile", metavar="MODE",
                       help="train through torch.compile(mode=MODE): default, reduce-overhead (CUDA graphs: what "
                            "pays for small models on a GPU), max-autotune, max-autotune-no-cudagraphs (default: eager)")
    train.add_argument("--device", default="auto", help="auto (cuda when available), cpu, cuda, cuda:1, ...")
    train.add_argument("--max-train-samples", type=int, help="cap the training set (quick looks)")
    train.add_argument("--tokens", type=int, help="training tokens per run (language-model tasks)")
    train.add_argument("--data", help="a data file the task reads (e.g. a text file for lm-text)")
    train.add_argument("--data-dir", help="where data sets are (default: $SEARCH_DATA_DIR, then the user cache)")
    train.add_argument("--task-option", action="append", metavar="KEY=VALUE", help="task option, e.g. noise=0.5 (repeatable)")
    where = r.add_argument_group("where trials run")
    where.add_argument("--executor", help="where trials run (default: local, in this process)")
    where.add_argument("--retries", type=int, help="re-runs of a failed or interrupted trial (default 1)")
    where.add_argument("--oom-retry", action="store_true", help="re-run an out-of-memory trial once with half the batch")
    where.add_argument("--ray-address", help="with --executor ray or tune: 'auto' or HOST:PORT of a cluster (default: a local Ray)")
    where.add_argument("--gpus-per-trial", type=float, help="with --executor ray or tune: GPUs per trial, e.g. 0.25 packs 4 on a GPU")
    where.add_argument("--cpus-per-trial", type=float, help="with --executor ray or tune: CPUs per trial (default 1)")
    where.add_argument("--max-concurrent", type=int, help="with --executor ray or tune: trials at once (default: what fits)")
    where.add_argument("--trial-timeout", type=float, help="with --executor ray: seconds a trial may run, from its start in a worker, before it counts as hung")
    where.add_argument("--tune-dir", help="with --executor tune: where Tune's experiment folders go, one per study "
                                          "(default: beside the SQLite database, search-tune/ for search.db); "
                                          "tensorboard --logdir DIR/STUDY shows the trials' curves")
    out = r.add_argument_group("results")
    storage_arg(out)
    out.add_argument("--keep", help=f"whose trained weights are kept: {', '.join(KEEP)} (pareto: the trials on "
                                    f"their family's Pareto front; a trial that falls off it loses its file; "
                                    f"default {DEFAULT_KEEP})")
    out.add_argument("--artifacts", metavar="URL",
                     help="where weights are kept: a folder, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX (default: "
                          "a folder beside the SQLite database, search-artifacts/ for search.db)")
    out.add_argument("--out", default=DEFAULT_REPORT_DIR, help=f"report folder (default {DEFAULT_REPORT_DIR})")
    out.add_argument("--no-report", action="store_true", help="do not write the report pages")
    r.set_defaults(func=cmd_run)


def cmd_run(a: argparse.Namespace) -> int:
    from search.cli.progress import ConsoleProgress
    from search.engine.specs import replicate_specs
    from search.engine.search_flags import search_settings
    from search.engine.study import prepare, run_study
    from search.tune import run_tune_study
    from reports.savings import early_stopping_savings, savings_line
    from tasks import load_data

    spec = run_spec(a)
    specs = replicate_specs(spec, a.search_repeats)
    prep = prepare(spec)  # every name, range and the budget checked before the database is touched
    if a.data_dir is not None and not Path(a.data_dir).is_dir():
        raise UserError(f"data directory {a.data_dir!r} does not exist")
    load_data(prep.task, spec.data_dir, spec.train.device)  # missing data fails here, before any write
    weights = check_weights_store(spec)  # and a store the weights cannot go to
    store = open_store(a.storage)
    done = []
    for k, one in enumerate(specs, 1):
        if len(specs) > 1:
            print(f"search {k} of {len(specs)}: study {one.study_name!r}, seed {one.seed}", flush=True)
        run = run_tune_study if one.executor == "tune" else run_study
        out = run(one, store, ConsoleProgress(search=search_settings(one)), prepare(one) if one is not spec else prep)
        df = store.trials_frame(one.study_name)
        print(f"study {one.study_name!r}: {out.finished} finished trial(s), {out.ran} run now"
              + (f" ({out.retried} retries)" if out.retried else "") +
              f", {out.rejected} proposal(s) rejected over budget or shape"
              + (" (grid exhausted)" if out.exhausted else "")
              + (f", {out.answered} proposal(s) of a trained configuration answered from its result"
                 if out.answered else ""))
        savings = early_stopping_savings(df)
        if savings is not None:
            print(savings_line(savings))
        print_pareto(df, out.study.metric, out.study.direction, prep.convention)
        if one.executor == "tune":
            from search.tune import experiment_dir

            print(f"Tune experiment: {experiment_dir(one, store.url)} (tensorboard --logdir it)")
        if weights is not None:
            print(f"weights ({'the fronts' if spec.keep == 'pareto' else 'every complete trial'}): {weights}; "
                  f"search model {one.study_name} TRIAL --out DIR")
        done.append((out.study, df))
    if len(specs) > 1:
        print(f"{len(specs)} replicate searches; which family wins, pooled over them: "
              f"search compare {spec.study_name}")
    if not a.no_report:
        from reports import write_site
        from reports.kept import store_kept

        index = write_site(done, a.out, samples_for(store), kept=store_kept(store))
        page = Path(a.out) / study_page_name(done[0][0].name)
        print(f"report: {page if page.exists() and len(done) == 1 else index}")
    return 0


def run_spec(a: argparse.Namespace):
    """The `RunSpec` of the flags: `--smoke`'s values, then a recipe's for flags not given,
    then the defaults. The spec validates itself."""
    from core.budget import parse_budget
    from core.trials import TrainSettings
    from search.engine.specs import RunSpec
    from search.engine.study import default_task

    if a.smoke:  # as if given on the command line: they win over a recipe's values
        a.trials = 2 if a.trials is None else a.trials
        a.epochs = 1 if a.epochs is None else a.epochs
        a.max_train_samples = 512 if a.max_train_samples is None else a.max_train_samples
    warmup_given = a.ema_warmup is not None  # on the command line, before a recipe fills it
    recipe = _apply_recipe(a)
    if a.space is None or a.budget is None:
        raise UserError("search run needs --space and --budget (or a --recipe that sets them)")
    spaces = tuple(s.strip() for s in str(a.space).split(",") if s.strip())
    executor_options = {k: v for k, v in (
        ("address", a.ray_address), ("gpus_per_trial", a.gpus_per_trial), ("cpus_per_trial", a.cpus_per_trial),
        ("max_concurrent", a.max_concurrent), ("trial_timeout", a.trial_timeout), ("tune_dir", a.tune_dir))
        if v is not None}
    if a.tune_dir is not None and _or(a.executor, "local") != "tune":
        raise UserError("--tune-dir is for --executor tune")
    train = TrainSettings(epochs=a.epochs, batch_size=a.batch_size, lr=a.lr, device=a.device,
                          max_train_samples=a.max_train_samples, tokens=a.tokens, optimizer=a.optimizer,
                          ema=_or(a.ema, 0.0), compile=a.compile,
                          # `--ema 0` turns a recipe's EMA off, its warm-up with it
                          ema_warmup=bool(a.ema_warmup) and (warmup_given or _or(a.ema, 0.0) > 0))
    return RunSpec(
        spaces=spaces, task=a.task or (default_task(spaces) if spaces else ""), budget=parse_budget(str(a.budget)),
        trials=_or(a.trials, 20), repeats=_or(a.repeats, 1), sampler=a.sampler,
        spread=_or(a.spread, DEFAULT_SPREAD), share=_or(a.share, DEFAULT_SHARE),
        scope=a.sampler_scope, corners=_or(a.corners, DEFAULT_CORNERS),
        size_scale=_or(a.size_scale, DEFAULT_SIZE_SCALE), start=_or(a.start, DEFAULT_START),
        revisit=_or(a.revisit, DEFAULT_REVISIT), shape_draw=a.shape_draw,
        budget_of=_or(a.budget_of, "params"),
        pruner=_or(a.pruner, DEFAULT_PRUNER), prune_grace=a.prune_grace, study=a.study,
        storage=a.storage, data_dir=a.data_dir, seed=_or(a.seed, 0), executor=_or(a.executor, "local"),
        space_file=a.space_file, train=train, task_options=(recipe.task_options if recipe else {}) | task_options(a),
        retries=_or(a.retries, 1), oom_retry=a.oom_retry, recipe=recipe.name if recipe else None,
        executor_options=executor_options, keep=_or(a.keep, DEFAULT_KEEP), artifacts=a.artifacts,
    )


def check_weights_store(spec) -> str | None:
    """The store `--keep` and `--artifacts` name (None: none kept), reachable (a folder
    made if missing), before the database is opened: UserError (one line) otherwise."""
    from search.artifacts.location import open_location, weights_location
    from storage.engine import default_url, normalize_url

    target = weights_location(spec.keep, spec.artifacts, normalize_url(spec.storage or default_url()))
    if target is not None:
        open_location(target, create=True)
    return target


def samples_for(store):
    """The report's source of sample grids: the "samples" artifacts of a trial's runs."""
    return lambda study, number: store.artifacts(study, number, "samples")


def _or(value, default):
    return default if value is None else value


def _apply_recipe(a: argparse.Namespace):
    """Fill the flags not given on the command line from `--recipe` (None without one)."""
    if not a.recipe:
        return None
    from search.recipes import load_recipe

    recipe = load_recipe(a.recipe)
    for key, value in recipe.run.items():
        if getattr(a, key, None) is None:
            setattr(a, key, value)
    return recipe


def study_page_name(name: str) -> str:
    from reports.site import study_filename

    return study_filename(name)


def print_pareto(df, metric: str, direction: str, convention: str = "parameters") -> None:
    from reports.tables import pareto_table

    table = pareto_table(df, metric, direction, formatted=True)
    if table.empty:
        print("no complete trials yet, so no Pareto front")
        return
    print(f"Pareto-optimal configurations ({metric} vs. {convention}, per family):")
    print_frame(table, "table")
