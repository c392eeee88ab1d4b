"""`search run` and `search.run(...)`: one path from the options to the studies. The CLI
(search/cli/run.py) parses flags into a namespace, the Python API (search/api/study.py)
builds the same namespace from keywords (search/api/options.py); both call `execute`."""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

from core.errors import UserError
from search.api.options import print_frame
from search.artifacts.location import DEFAULT_KEEP
from search.engine.pruners import DEFAULT_PRUNER
from search.engine.sampling.policies import (
    DEFAULT_CHECK_ORDER,
    DEFAULT_CORNERS,
    DEFAULT_REVISIT,
    DEFAULT_SEED_CHECKS,
    DEFAULT_SHARE,
    DEFAULT_SIZE_SCALE,
    DEFAULT_SPREAD,
    DEFAULT_START,
)
from search.executors.packs import check_pack


def open_store(url: str | None, wait_s: float = 0.0):
    from storage import Store

    return Store(url, wait_s=wait_s)


def task_options(a: Any) -> dict[str, Any]:
    """--task-option KEY=VALUE (and --data) as a dict."""
    options: dict[str, Any] = {}
    for kv in a.task_option or []:
        if "=" not in kv:
            raise UserError(f"expected --task-option key=value, got {kv!r}")
        k, v = kv.split("=", 1)
        options[k.strip()] = parse_value(v.strip())
    if getattr(a, "data", None):
        options["data"] = a.data
    return options


def parse_value(text: str) -> Any:
    """'true'/'false', an int, a float, else the text."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def execute(a: Any) -> list[tuple[Any, Any]]:
    """Run the searches a parsed `search run` (or a `search.run(...)` call) asks for: the
    RunSpec checked, the data and the weights store checked, then each study run, its
    summary and Pareto table printed (stdout) with its progress (stderr), and the pages
    written. Returns (study record, trials frame) per study. Nothing is written to the
    database before every check has passed."""
    from core.durations import format_duration
    from reports.savings import early_stopping_savings, savings_line
    from search.api.progress import ConsoleProgress, time_outside
    from search.engine.search_flags import search_settings
    from search.engine.specs import replicate_specs
    from search.engine.study import prepare, run_study
    from search.tune import run_tune_study
    from tasks import load_data

    spec = run_spec(a)
    from storage.waiting import check_wait

    wait_s = check_wait(a.storage_wait)
    replicate_specs(spec, a.search_repeats)  # its checks first, as before
    prep = prepare(spec)  # every name, range and the budget checked before the database is touched
    spec = prep.spec  # the sampler a conditional space needs (prepare's `route_sampler`)
    specs = replicate_specs(spec, a.search_repeats)
    if a.data_dir is not None and not Path(a.data_dir).is_dir():
        raise UserError(f"data directory {a.data_dir!r} does not exist")
    load_data(prep.task, spec.data_dir, spec.train.device)  # missing data fails here, before any write
    weights = check_weights_store(spec)  # and a store the weights cannot go to
    say_alone(spec, prep)
    if spec.routed:
        print(f"note: {spec.routed}", file=sys.stderr, flush=True)
    store = open_store(a.storage, wait_s)
    done = []
    deadline = None if spec.time_limit is None else time.monotonic() + spec.time_limit  # the whole command's
    for k, base in enumerate(specs, 1):
        one = base
        if deadline is not None:  # replicate searches share the command's --time-limit
            if deadline - time.monotonic() <= 0:
                print(f"time limit reached: replicate searches {k} to {len(specs)} not started", flush=True)
                break
            one = dataclasses.replace(one, time_limit=deadline - time.monotonic())
        if len(specs) > 1:
            print(f"search {k} of {len(specs)}: study {one.study_name!r}, seed {one.seed}", flush=True)
        run = run_tune_study if one.executor == "tune" else run_study
        where = local_placement(one)
        progress = ConsoleProgress(search=search_settings(one), at_once=where and where.describe())
        started = time.monotonic()
        out = run(one, store, progress, prepare(base) if base is not spec else prep)
        wall = time.monotonic() - started
        df = store.trials_frame(one.study_name)
        print(
            f"study {one.study_name!r}: {out.finished} finished trial(s), {out.ran} run now "
            f"({time_outside(wall, progress.trained_s, where.workers if where else 1)})"
            + (f" ({out.retried} retries)" if out.retried else "")
            + f", {out.rejected} proposal(s) rejected over budget or shape"
            + (" (grid exhausted)" if out.exhausted else "")
            + (
                f" (stopped at the time limit, {format_duration(spec.time_limit)}: the same command goes on)"
                if out.timed_out
                else ""
            )
            + (
                f", {out.answered} proposal(s) of a trained configuration answered from its result"
                if out.answered
                else ""
            )
        )
        savings = early_stopping_savings(df)
        if savings is not None:
            print(savings_line(savings))
        print_pareto(df, out.study.metric, out.study.direction, prep.convention)
        if one.decide:
            print_decisions(one, store, out)
        if one.executor == "tune":
            from search.tune import experiment_dir

            print(f"Tune experiment: {experiment_dir(one, store.url)} (tensorboard --logdir it)")
        if weights is not None:
            print(
                f"weights ({'the fronts' if spec.keep == 'pareto' else 'every complete trial'}): {weights}; "
                f"search model {one.study_name} TRIAL --out DIR"
            )
        done.append((out.study, df))
    if len(specs) > 1:
        print(f"{len(specs)} replicate searches; which family wins, pooled over them: search compare {spec.study_name}")
    if not a.no_report:
        from reports import write_site
        from reports.kept import store_kept

        index = write_site(done, a.out, samples_for(store), kept=store_kept(store))
        page = Path(a.out) / study_page_name(done[0][0].name)
        print(f"report: {page if page.exists() and len(done) == 1 else index}")
    return done


def run_spec(a: Any):
    """The `RunSpec` of the flags: `--smoke`'s values, then a recipe's for flags not given,
    then the defaults. The spec validates itself."""
    from core.budget import parse_budget
    from core.trials import TrainSettings
    from search.engine.prepare import default_task
    from search.engine.specs import RunSpec
    from search.executors.local import default_workers

    if a.smoke:  # as if given on the command line: they win over a recipe's values
        a.trials = 2 if a.trials is None else a.trials
        a.epochs = 1 if a.epochs is None else a.epochs
        a.max_train_samples = 512 if a.max_train_samples is None else a.max_train_samples
    warmup_given = a.ema_warmup is not None  # on the command line, before a recipe fills it
    recipe = _apply_recipe(a)
    if a.space is None or a.budget is None:
        raise UserError("search run needs --space and --budget (or a --recipe that sets them)")
    spaces = tuple(s.strip() for s in str(a.space).split(",") if s.strip())
    executor_options = {
        k: v
        for k, v in (
            ("address", a.ray_address),
            ("gpus_per_trial", a.gpus_per_trial),
            ("cpus_per_trial", a.cpus_per_trial),
            ("max_concurrent", a.max_concurrent),
            ("trial_timeout", a.trial_timeout),
            ("tune_dir", a.tune_dir),
        )
        if v is not None
    }
    if a.fuse not in (None, "on", "off"):
        raise UserError(f"--fuse must be on or off, got {a.fuse!r}")
    if a.pack is not None:
        executor_options["pack"] = check_pack(a.pack)
    if _or(a.executor, "local") == "local":
        executor_options |= {"workers": a.workers or default_workers(), "device": a.device or "auto"}
        if a.threads is not None:
            executor_options["threads"] = a.threads
    elif a.workers is not None or a.threads is not None:
        raise UserError(
            "--workers and --threads are for the local executor (with Ray: --max-concurrent, --cpus-per-trial)"
        )
    if a.tune_dir is not None and _or(a.executor, "local") != "tune":
        raise UserError("--tune-dir is for --executor tune")
    train = TrainSettings(
        epochs=a.epochs,
        batch_size=a.batch_size,
        lr=a.lr,
        device=a.device,
        max_train_samples=a.max_train_samples,
        tokens=a.tokens,
        optimizer=a.optimizer,
        ema=_or(a.ema, 0.0),
        compile=a.compile,
        fuse=_or(a.fuse, "on") == "on",
        # `--ema 0` turns a recipe's EMA off, its warm-up with it
        ema_warmup=bool(a.ema_warmup) and (warmup_given or _or(a.ema, 0.0) > 0),
    )
    return RunSpec(
        spaces=spaces,
        task=a.task or (default_task(spaces) if spaces else ""),
        budget=parse_budget(str(a.budget)),
        trials=_or(a.trials, 20),
        repeats=_or(a.repeats, 1),
        sampler=a.sampler,
        spread=_or(a.spread, DEFAULT_SPREAD),
        share=_or(a.share, DEFAULT_SHARE),
        scope=a.sampler_scope,
        corners=_or(a.corners, DEFAULT_CORNERS),
        size_scale=_or(a.size_scale, DEFAULT_SIZE_SCALE),
        start=_or(a.start, DEFAULT_START),
        revisit=_or(a.revisit, DEFAULT_REVISIT),
        shape_draw=a.shape_draw,
        budget_of=_or(a.budget_of, "params"),
        pruner=_or(a.pruner, DEFAULT_PRUNER),
        prune_grace=a.prune_grace,
        seed_checks=_or(a.seed_checks, DEFAULT_SEED_CHECKS),
        seed_check_order=_or(a.seed_check_order, DEFAULT_CHECK_ORDER),
        decide=decide_budgets(a.decide),
        margin=a.margin,
        time_limit=a.time_limit,
        study=a.study,
        storage=a.storage,
        data_dir=a.data_dir,
        seed=_or(a.seed, 0),
        executor=_or(a.executor, "local"),
        space_file=a.space_file,
        train=train,
        task_options=(recipe.task_options if recipe else {}) | task_options(a),
        retries=_or(a.retries, 1),
        oom_retry=a.oom_retry,
        recipe=recipe.name if recipe else None,
        recipe_version=recipe.version if recipe else None,
        executor_options=executor_options,
        keep=_or(a.keep, DEFAULT_KEEP),
        artifacts=a.artifacts,
    )


def local_placement(spec):
    """How the local executor runs `spec`'s trials (search/executors/local.py `Placement`),
    None for another executor."""
    from search.executors.local import placement_of

    return placement_of(spec.executor_options) if spec.executor == "local" else None


def say_alone(spec, prep) -> None:
    """With `--pack K` (K > 1): once, on stderr, which of the search's trials will not share
    a pack, and why (tasks/fused_train.py `alone_reasons`)."""
    from search.executors.packs import resolve_pack
    from tasks.fused_train import alone_reasons  # torch: imported only when a search runs

    pack = resolve_pack(spec.executor_options.get("pack", "auto"), spec.train.device or "auto")
    if pack > 1:
        for line in alone_reasons(list(spec.spaces), spec.train, prep.task):
            print(f"--pack {pack}: {line}", file=sys.stderr, flush=True)


def check_weights_store(spec) -> str | None:
    """The store `--keep` and `--artifacts` name (None: none kept), reachable (a folder
    made if missing), before the database is opened: UserError (one line) otherwise."""
    from search.artifacts.location import open_location, weights_location
    from storage.database import default_url, normalize_url

    target = weights_location(spec.keep, spec.artifacts, normalize_url(spec.storage or default_url()))
    if target is not None:
        open_location(target, create=True)
    return target


def samples_for(store):
    """The report's source of sample grids: the "samples" artifacts of a trial's runs."""
    return lambda study, number: store.artifacts(study, number, "samples")


def print_decisions(spec: Any, store: Any, out: Any) -> None:
    """`--decide`'s answer: each named budget's verdict as `search compare` reads it now."""
    from search.engine.deciding import decisions_text, read_verdicts
    from verdicts.uncertainty import DEFAULT_WINDOW

    rec = out.study
    verdicts, _ = read_verdicts(
        store.trials(rec.name),
        rec.metric,
        rec.direction,
        rec.families,
        spec.decide,
        spec.margin,
        DEFAULT_WINDOW,
        rec.settings,
    )
    print("\n".join(decisions_text(verdicts, out.finished, out.decided, out.timed_out)))


def decide_budgets(text: Any) -> tuple[float, ...]:
    """--decide "10K,60K" (or a list of budgets from Python) as numbers."""
    from core.budget import parse_budget

    if text is None:
        return ()
    items = [str(b).strip() for b in (text.split(",") if isinstance(text, str) else text)]
    if not any(items):
        raise UserError("--decide needs at least one budget, e.g. --decide 10K,60K")
    return tuple(float(parse_budget(b)) for b in items if b)


def _or(value, default):
    return default if value is None else value


def _apply_recipe(a: Any):
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
