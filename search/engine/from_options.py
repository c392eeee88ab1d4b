"""A search's `RunSpec` from its options (search/engine/run_options.py `RunOptions`), one
builder for the command line, `search.run` and the Tune searcher."""

from __future__ import annotations

from core.errors import UserError
from core.trials import TrainSettings
from search.artifacts.location import DEFAULT_KEEP
from search.engine.pruners import DEFAULT_PRUNER
from search.engine.run_options import RunOptions, task_options_of
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
from search.engine.specs import RunSpec


def spec_from_options(a: RunOptions) -> RunSpec:
    """The `RunSpec` of a search's options (search/engine/run_options.py `RunOptions`, as
    the command line, `search.run` and the Tune searcher fill it): `--smoke`'s values,
    then a recipe's for options not given, then the defaults. The spec validates itself."""
    from search.engine.prepare import default_task
    from search.executors.local import default_workers
    from search.executors.packs import check_pack

    a = a.smoke_filled()  # as if given on the command line: they win over a recipe's values
    warmup_given = a.ema_warmup is not None  # given, before a recipe fills it
    a, recipe = a.with_recipe()
    if a.space is None or a.budget is None:
        raise UserError("search run needs --space and --budget (or a --recipe that sets them)")
    executor = _or(a.executor, "local")
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
    if a.pack is not None:
        executor_options["pack"] = check_pack(a.pack)
    if executor == "local":
        executor_options |= {"workers": a.workers or default_workers(), "device": a.device or "auto"}
        if a.threads is not None:
            executor_options["threads"] = a.threads
    elif a.workers is not None or a.threads is not None:
        raise UserError(
            "--workers and --threads are for the local executor (with Ray: --max-concurrent, --cpus-per-trial)"
        )
    if a.tune_dir is not None and executor != "tune":
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
        fuse=_or(a.fuse, True),
        # `--ema 0` turns a recipe's EMA off, its warm-up with it
        ema_warmup=bool(a.ema_warmup) and (warmup_given or _or(a.ema, 0.0) > 0),
    )
    return RunSpec(
        spaces=a.space,
        task=a.task or (default_task(a.space) if a.space else ""),
        budget=a.budget,
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
        decide=a.decide or (),
        margin=a.margin,
        time_limit=a.time_limit,
        study=a.study,
        storage=a.storage,
        data_dir=a.data_dir,
        seed=_or(a.seed, 0),
        executor=executor,
        space_file=a.space_file,
        train=train,
        task_options=(recipe.task_options if recipe else {}) | task_options_of(a),
        retries=_or(a.retries, 1),
        oom_retry=a.oom_retry,
        recipe=recipe.name if recipe else None,
        recipe_version=recipe.version if recipe else None,
        executor_options=executor_options,
        keep=_or(a.keep, DEFAULT_KEEP),
        artifacts=a.artifacts,
    )


def _or(value, default):
    return default if value is None else value
