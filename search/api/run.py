"""`search run` and `search.run(...)`: one path from the options to the studies. The CLI
(search/cli/run.py) parses flags, the Python API (search/api/study.py) takes keywords, and
the Tune searcher (search/tune/api.py) its arguments, each into the one typed table of
options (search/engine/run_options.py `RunOptions`); `run_spec` builds the `RunSpec` from it
and `execute` runs the searches."""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

from core.errors import UserError
from search.api.options import print_frame
from search.engine.run_options import RunOptions, budget_list
from search.engine.run_options import parse_value as parse_value  # noqa: PLC0414  (search/cli/common.py)


def open_store(url: str | None, wait_s: float = 0.0):
    from storage import Store

    return Store(url, wait_s=wait_s)


def task_options(a: Any) -> dict[str, Any]:
    """--task-option KEY=VALUE (and --data) as a dict (a parsed namespace or `RunOptions`)."""
    from search.engine.run_options import task_options_of

    return task_options_of(a)


def execute(a: RunOptions) -> list[tuple[Any, Any]]:
    """Run the searches a `search run` command (or a `search.run(...)` call) asks for: the
    RunSpec checked, the data and the weights store checked, then each study run, its
    summary and Pareto table printed (stdout) with its progress (stderr), and the pages
    written. Returns (study record, trials frame) per study. Nothing is written to the
    database before every check has passed."""
    from core.durations import format_duration
    from reports.savings import early_stopping_savings, savings_line
    from search.api.progress import ConsoleProgress, drawn_clause, time_outside
    from search.engine.search_flags import search_settings
    from search.engine.specs import replicate_specs
    from search.engine.study import prepare, run_study
    from search.tune import run_tune_study
    from tasks import load_data

    spec = run_spec(a)  # `a`'s fields read below are none a recipe or --smoke sets
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
        progress = ConsoleProgress(search=search_settings(one), at_once=where and where.describe() + pack_words(one))
        started = time.monotonic()
        out = run(one, store, progress, prepare(base) if base is not spec else prep)
        wall = time.monotonic() - started
        df = store.trials_frame(one.study_name)
        print(
            f"study {one.study_name!r}: {out.finished} finished trial(s), {out.ran} run now "
            f"({time_outside(wall, progress.trained_s, where.workers if where else 1)})"
            + (f" ({out.retried} retries)" if out.retried else "")
            + f", {out.rejected} proposal(s) rejected over budget or shape"
            + drawn_clause(out.drawn)
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


def run_spec(a: RunOptions | Any):
    """The `RunSpec` of the options (`RunOptions`, or a parsed `search run` namespace):
    search/engine/from_options.py `spec_from_options`."""
    from search.engine.from_options import spec_from_options

    return spec_from_options(a if isinstance(a, RunOptions) else RunOptions.from_namespace(a))


def local_placement(spec):
    """How the local executor runs `spec`'s trials (search/executors/local.py `Placement`),
    None for another executor."""
    from search.executors.local import placement_of

    return placement_of(spec.executor_options) if spec.executor == "local" else None


def spec_pack(spec) -> int:
    """Trials a pack holds in `spec`'s search (`--pack`, "auto" resolved for its device)."""
    from search.executors.packs import resolve_pack

    return resolve_pack(spec.executor_options.get("pack", "auto"), spec.train.device or "auto")


def pack_words(spec) -> str:
    """What the first line says of `--pack` (search/executors/packs.py `describe_pack`)."""
    from search.executors.packs import describe_pack
    from tasks.loading import device_type

    return describe_pack(spec_pack(spec), device_type(spec.train.device))


def say_alone(spec, prep) -> None:
    """With `--pack K` (K > 1): once, on stderr, which of the search's trials will not share
    a pack, and why (tasks/fused_train.py `alone_reasons`)."""
    from tasks.fused_train import alone_reasons  # torch: imported only when a search runs

    pack = spec_pack(spec)
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
    return budget_list(text) or ()


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
