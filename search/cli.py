"""The `search` command. Thin: each sub-command parses its flags and calls one function.

Errors a user can fix (UserError) print one line and exit with status 2.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from core.errors import UserError
from search.samplers import DEFAULT_SAMPLER, SAMPLERS

DEFAULT_REPORT_DIR = "search-reports"


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UserError(f"{message} (see '{self.prog} --help')")


def _storage_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--storage", metavar="URL",
                   help="SQLAlchemy URL or SQLite file (default: $SEARCH_STORAGE or sqlite:///search.db)")


def _open_store(url: str | None):
    from storage import Store

    return Store(url)


def _print_frame(df, fmt: str) -> None:
    import pandas as pd

    if fmt == "csv":
        sys.stdout.write(df.to_csv(index=False))
    elif fmt == "json":
        print(json.dumps(json.loads(df.to_json(orient="records")), indent=2))
    elif df.empty:
        print("(no rows)")
    else:
        with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200,
                               "display.max_colwidth", 60):
            print(df.to_string(index=False))


# ---------------------------------------------------------------- run


def _key_values(items: list[str] | None, what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in items or []:
        if "=" not in kv:
            raise UserError(f"expected {what} key=value, got {kv!r}")
        k, v = kv.split("=", 1)
        out[k.strip()] = _parse_value(v.strip())
    return out


def _task_options(a: argparse.Namespace) -> dict[str, Any]:
    options = _key_values(a.task_option, "--task-option")
    if getattr(a, "data", None):
        options["data"] = a.data
    return options


def cmd_run(a: argparse.Namespace) -> int:
    from core.budget import parse_budget
    from core.trials import TrainSettings
    from search.progress import ConsoleProgress
    from search.specs import RunSpec
    from search.study import default_task, prepare, run_study

    spaces = tuple(s.strip() for s in a.space.split(",") if s.strip())
    if a.smoke:
        a.trials = 2 if a.trials is None else a.trials
        a.epochs = 1 if a.epochs is None else a.epochs
        a.max_train_samples = 512 if a.max_train_samples is None else a.max_train_samples
    spec = RunSpec(
        spaces=spaces, task=a.task or (default_task(spaces) if spaces else ""), budget=parse_budget(a.budget),
        trials=20 if a.trials is None else a.trials, repeats=a.repeats, sampler=a.sampler, study=a.study, storage=a.storage,
        data_dir=a.data_dir, seed=a.seed, executor=a.executor, space_file=a.space_file,
        train=TrainSettings(epochs=a.epochs, batch_size=a.batch_size, lr=a.lr, device=a.device,
                            max_train_samples=a.max_train_samples, tokens=a.tokens),
        task_options=_task_options(a), retries=a.retries, oom_retry=a.oom_retry,
        executor_options={k: v for k, v in (
            ("address", a.ray_address), ("gpus_per_trial", a.gpus_per_trial), ("cpus_per_trial", a.cpus_per_trial),
            ("max_concurrent", a.max_concurrent), ("trial_timeout", a.trial_timeout)) if v is not None},
    )
    prep = prepare(spec)  # every name, range and the budget checked before the database is touched
    if a.data_dir is not None and not Path(a.data_dir).is_dir():
        raise UserError(f"data directory {a.data_dir!r} does not exist")
    from tasks import load_data

    load_data(prep.task, spec.data_dir, spec.train.device)  # missing data fails here, before any write
    store = _open_store(a.storage)
    out = run_study(spec, store, ConsoleProgress(), prep)
    df = store.trials_frame(spec.study_name)
    print(f"study {spec.study_name!r}: {out.finished} finished trial(s), {out.ran} run now"
          + (f" ({out.retried} retries)" if out.retried else "") +
          f", {out.rejected} proposal(s) rejected over budget or shape"
          + (" (grid exhausted)" if out.exhausted else ""))
    _print_pareto(df, out.study.metric, out.study.direction)
    if not a.no_report:
        from reports import write_site

        index = write_site([(out.study, df)], a.out, _samples_for(store))
        page = Path(a.out) / _study_page(out.study.name)
        print(f"report: {page if page.exists() else index}")
    return 0


def _samples_for(store):
    """The report's source of sample grids: the "samples" artifacts of a trial's runs."""
    return lambda study, number: store.artifacts(study, number, "samples")


def _study_page(name: str) -> str:
    from reports.site import study_filename

    return study_filename(name)


def _print_pareto(df, metric: str, direction: str) -> None:
    from reports.tables import pareto_table

    table = pareto_table(df, metric, direction, formatted=True)
    if table.empty:
        print("no complete trials yet, so no Pareto front")
        return
    print(f"Pareto-optimal configurations ({metric} vs. parameters, per family):")
    _print_frame(table, "table")


# ---------------------------------------------------------------- queries


def cmd_report(a: argparse.Namespace) -> int:
    from reports import write_site

    store = _open_store(a.storage)
    names = a.studies or [s.name for s in store.list_studies()]
    if not names:
        raise UserError("no studies in this database yet: run 'search run' first")
    studies = [(store.get_study(n), store.trials_frame(n)) for n in names]
    index = write_site(studies, a.out, _samples_for(store))
    print(f"report: {index}")
    return 0


def cmd_studies(a: argparse.Namespace) -> int:
    import pandas as pd

    from core.budget import format_count

    rows = [
        {"study": s.name, "task": s.task, "families": ",".join(s.families), "budget": format_count(s.budget),
         "done": s.n_complete, "failed": s.n_failed, "running": s.n_running, "rejected": s.n_rejected,
         "best": None if s.best is None else round(s.best, 4), "metric": s.metric}
        for s in _open_store(a.storage).list_studies()
    ]
    if not rows and a.format == "table":
        print("no studies yet: run 'search run --space hourglass --task digits-denoise --budget 200K'")
        return 0
    _print_frame(pd.DataFrame(rows), a.format)
    return 0


def trials_records(df, metric_names: list[str]) -> list[dict[str, Any]]:
    """JSON form of `search trials`: one object per trial, metrics by name."""
    out = []
    for r in df.to_dict(orient="records"):
        rec: dict[str, Any] = {k: r.get(k) for k in ("number", "status", "family", "config", "params")}
        for m in metric_names:
            v = r.get(m)
            rec[m] = None if v is None or v != v else float(v)
            s = r.get(f"{m}_std")
            if s is not None and s == s:
                rec[f"{m}_std"] = float(s)
        for k in ("n_runs", "seeds", "note", "error", "device", "duration_s"):
            v = r.get(k)
            rec[k] = None if (isinstance(v, float) and v != v) else v
        out.append(rec)
    return out


def cmd_trials(a: argparse.Namespace) -> int:
    import pandas as pd

    from storage.frames import metric_columns

    store = _open_store(a.storage)
    study = store.get_study(a.study)
    df = store.trials_frame(a.study)
    if a.family:
        if a.family not in study.families:
            raise UserError(f"study {a.study!r} has no family {a.family!r}; it has {', '.join(study.families)}")
        df = df[df["family"] == a.family]
    if a.pareto:
        from reports.fronts import front_data

        fronts = front_data(df, study.metric, study.direction)
        df = df[df["number"].isin({int(n) for f in fronts.families for n in f.front_numbers})]
    metrics = metric_columns(df)
    if a.format == "json":
        print(json.dumps(trials_records(df, metrics), indent=2, default=str))
        return 0
    if a.format == "csv":
        out = df.copy()
        out["config"] = out["config"].map(lambda c: json.dumps(c, sort_keys=True))
        out["seeds"] = out["seeds"].map(json.dumps)
        _print_frame(out, "csv")
        return 0
    from search.progress import format_config

    cols = {"number": df["number"], "status": df["status"], "family": df["family"],
            "config": df["config"].map(format_config), "params": df["params"]}
    for m in metrics:
        cols[m] = df[m].round(4)
        if df[f"{m}_std"].notna().any():
            cols[f"{m}_std"] = df[f"{m}_std"].round(4)
    cols["time_s"] = df["duration_s"].round(1)
    cols["reason"] = df["error"].fillna(df["note"]).fillna("")
    _print_frame(pd.DataFrame(cols), "table")
    return 0


def cmd_sql(a: argparse.Namespace) -> int:
    import pandas as pd

    cols, rows = _open_store(a.storage).query_readonly(a.query)
    _print_frame(pd.DataFrame(rows, columns=cols), a.format)
    return 0


# ---------------------------------------------------------------- registry info


def _parse_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def cmd_params(a: argparse.Namespace) -> int:
    from core.budget import format_count
    from models import get_family
    from tasks import get_task

    fam = get_family(a.space)
    task = get_task(a.task or fam.default_task, _task_options(a))
    io = task.io()
    config = _key_values(a.config, "config")
    n = fam.count_params(config, io)
    parts = fam.param_breakdown(config, io)
    violation = fam.shape_violation(config, io)
    if a.json:
        print(json.dumps({"space": fam.name, "task": task.name, "config": config, "params": n,
                          "convention": fam.param_convention, "breakdown": parts, "d_x": io.d_in,
                          "d_out": io.d_out, "shape_ok": violation is None, "shape_violation": violation}))
    else:
        print(f"{n} {fam.param_convention} ({format_count(n)}) for {fam.name} on {task.name} "
              f"(d_x={io.d_in}, d_out={io.d_out})")
        for name, count in parts.items():
            print(f"  {name}: {count} ({format_count(count)})")
        if violation:
            print(f"note: {violation}", file=sys.stderr)
    return 0


def cmd_spaces(a: argparse.Namespace) -> int:
    from models import FAMILIES
    from tasks import TASKS, get_task

    for name, fam in FAMILIES.items():
        fits = [t for t in TASKS.names() if fam.fits(get_task(t).io())]
        print(f"{name:<14} {fam.description}; default task {fam.default_task}; "
              f"keys {', '.join(fam.key_dims)}; tasks: {', '.join(fits)}")
    return 0


def cmd_tasks(a: argparse.Namespace) -> int:
    from tasks import TASKS, get_task

    for name in TASKS.names():
        t = get_task(name)
        print(f"{name:<20} {t.description} [{t.metric}, {t.direction}]")
    return 0


# ---------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="search", description="Pareto-frontier architecture search for neural-network shapes.")
    from search import __version__

    p.add_argument("--version", action="version", version=f"search {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="run or resume a study")
    r.add_argument("--space", required=True, help="family or comma list, e.g. hourglass,conventional")
    r.add_argument("--budget", required=True, help="max trainable parameters: 500K, 80M, 1.5B, 80000000")
    r.add_argument("--task", help="task (default: the first family's paper task)")
    r.add_argument("--trials", type=int, help="finished trials to reach (default 20)")
    r.add_argument("--repeats", type=int, default=1, help="seeds per configuration (default 1)")
    r.add_argument("--sampler", default=DEFAULT_SAMPLER,
                   help=f"{', '.join(SAMPLERS.names())} (default {DEFAULT_SAMPLER})")
    r.add_argument("--study", help="study name (default: TASK-FAMILIES)")
    _storage_arg(r)
    r.add_argument("--data-dir", help="where data sets are (default: $SEARCH_DATA_DIR, then the user cache)")
    r.add_argument("--epochs", type=int, help="epochs per trial (default: the task's)")
    r.add_argument("--batch-size", type=int, help="batch size (default: the task's)")
    r.add_argument("--lr", type=float, help="learning rate when the space does not search one (default: the task's)")
    r.add_argument("--seed", type=int, default=0, help="study seed (default 0)")
    r.add_argument("--space-file", help="TOML or YAML file overriding the spaces' ranges")
    r.add_argument("--executor", default="local", help="where trials run (default: local, in this process)")
    r.add_argument("--retries", type=int, default=1, help="re-runs of a failed or interrupted trial (default 1)")
    r.add_argument("--oom-retry", action="store_true", help="re-run an out-of-memory trial once with half the batch")
    r.add_argument("--ray-address", help="with --executor ray: 'auto' or HOST:PORT of a cluster (default: a local Ray)")
    r.add_argument("--gpus-per-trial", type=float, help="with --executor ray: GPUs per trial, e.g. 0.25 packs 4 on a GPU")
    r.add_argument("--cpus-per-trial", type=float, help="with --executor ray: CPUs per trial (default 1)")
    r.add_argument("--max-concurrent", type=int, help="with --executor ray: trials at once (default: what fits)")
    r.add_argument("--trial-timeout", type=float, help="with --executor ray: seconds before a trial counts as hung")
    r.add_argument("--device", default="auto", help="auto (cuda when available), cpu, cuda, cuda:1, ...")
    r.add_argument("--max-train-samples", type=int, help="cap the training set (quick looks)")
    r.add_argument("--tokens", type=int, help="training tokens per run (language-model tasks)")
    r.add_argument("--data", help="a data file the task reads (e.g. a text file for lm-text)")
    r.add_argument("--task-option", action="append", metavar="KEY=VALUE", help="task option, e.g. noise=0.5 (repeatable)")
    r.add_argument("--smoke", action="store_true", help="tiny run: 2 trials, 1 epoch, 512 samples")
    r.add_argument("--out", default=DEFAULT_REPORT_DIR, help=f"report folder (default {DEFAULT_REPORT_DIR})")
    r.add_argument("--no-report", action="store_true", help="do not write the report pages")
    r.set_defaults(func=cmd_run)

    rep = sub.add_parser("report", help="write the report pages")
    rep.add_argument("studies", nargs="*", metavar="STUDY", help="studies (default: all)")
    rep.add_argument("--out", default=DEFAULT_REPORT_DIR, help=f"folder (default {DEFAULT_REPORT_DIR})")
    _storage_arg(rep)
    rep.set_defaults(func=cmd_report)

    st = sub.add_parser("studies", help="list studies")
    st.add_argument("--format", choices=("table", "csv", "json"), default="table")
    _storage_arg(st)
    st.set_defaults(func=cmd_studies)

    tr = sub.add_parser("trials", help="list a study's trials")
    tr.add_argument("study")
    tr.add_argument("--pareto", action="store_true", help="only Pareto-optimal trials (per family)")
    tr.add_argument("--family", help="only this family")
    tr.add_argument("--format", choices=("table", "csv", "json"), default="table")
    _storage_arg(tr)
    tr.set_defaults(func=cmd_trials)

    q = sub.add_parser("sql", help="run a read-only SQL query")
    q.add_argument("query")
    q.add_argument("--format", choices=("table", "csv", "json"), default="table")
    _storage_arg(q)
    q.set_defaults(func=cmd_sql)

    pa = sub.add_parser("params", help="exact parameter count of one configuration")
    pa.add_argument("--space", required=True)
    pa.add_argument("--task")
    pa.add_argument("config", nargs="*", metavar="key=value")
    pa.add_argument("--data", help="a data file the task reads")
    pa.add_argument("--task-option", action="append", metavar="KEY=VALUE", help="task option (repeatable)")
    pa.add_argument("--json", action="store_true")
    pa.set_defaults(func=cmd_params)

    sub.add_parser("spaces", help="list model families").set_defaults(func=cmd_spaces)
    sub.add_parser("tasks", help="list tasks").set_defaults(func=cmd_tasks)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: finished trials are saved; run the same command again to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
