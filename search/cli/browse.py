"""Reading a database: `search report`, `studies`, `trials` and `sql`."""

from __future__ import annotations

import argparse
import json
from typing import Any

from core.errors import UserError
from core.limits import SQL_TIMEOUT_S
from search.cli.common import open_store, print_frame, storage_arg
from search.cli.run import DEFAULT_REPORT_DIR


def add_parsers(sub) -> None:
    """report, studies, trials, sql and serve."""
    rep = sub.add_parser("report", help="write the report pages")
    rep.add_argument("studies", nargs="*", metavar="STUDY", help="studies (default: all)")
    rep.add_argument("--out", default=DEFAULT_REPORT_DIR, help=f"folder (default {DEFAULT_REPORT_DIR})")
    rep.add_argument(
        "--predict-at",
        metavar="BUDGETS",
        help="comma list of budgets above the studies' (e.g. 1M,10M): the front figures extend each "
        "family's fitted law to the largest and mark each (default: the law to 10x the budget)",
    )
    storage_arg(rep)
    rep.set_defaults(func=cmd_report)

    st = sub.add_parser("studies", help="list studies")
    st.add_argument("--format", choices=("table", "csv", "json"), default="table")
    storage_arg(st)
    st.set_defaults(func=cmd_studies)

    tr = sub.add_parser("trials", help="list a study's trials")
    tr.add_argument("study")
    tr.add_argument(
        "--pareto",
        action="store_true",
        help="only Pareto-optimal trials (per family), by parameters, with overall_front",
    )
    tr.add_argument("--family", help="only this family")
    tr.add_argument("--format", choices=("table", "csv", "json"), default="table")
    storage_arg(tr)
    tr.set_defaults(func=cmd_trials)

    q = sub.add_parser("sql", help="run a read-only SQL query")
    q.add_argument("query")
    q.add_argument(
        "--timeout",
        type=float,
        default=SQL_TIMEOUT_S,
        metavar="SECONDS",
        help=f"stop the query after this long (default {SQL_TIMEOUT_S:g})",
    )
    q.add_argument("--format", choices=("table", "csv", "json"), default="table")
    storage_arg(q)
    q.set_defaults(func=cmd_sql)

    sv = sub.add_parser("serve", help="browse the studies in a web browser, live while they run")
    storage_arg(sv)
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    sv.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    sv.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host header is NAME (repeatable; the address served always "
        "is; '*' answers any host, which lets other sites' pages read the studies)",
    )
    sv.set_defaults(func=cmd_serve)


def cmd_report(a: argparse.Namespace) -> int:
    from core.budget import parse_targets
    from reports import write_site
    from reports.kept import store_kept
    from reports.samples import store_samples

    store = open_store(a.storage)
    names = a.studies or [s.name for s in store.list_studies()]
    if not names:
        raise UserError("no studies in this database yet: run 'search run' first")
    records = [store.get_study(n) for n in names]
    targets = (
        () if a.predict_at is None else parse_targets(a.predict_at, max(r.budget for r in records), "--predict-at")
    )
    studies = [(rec, store.trials_frame(rec.name)) for rec in records]
    index = write_site(
        studies,
        a.out,
        store_samples(store),
        predict_at=targets,  # one query for all samples
        kept=store_kept(store),
    )
    print(f"report: {index}")
    return 0


def cmd_studies(a: argparse.Namespace) -> int:
    import pandas as pd

    from core.budget import format_count

    rows = [
        {
            "study": s.name,
            "task": s.task,
            "families": ",".join(s.families),
            "budget": format_count(s.budget),
            "done": s.n_complete,
            "failed": s.n_failed,
            "running": s.n_running,
            "rejected": s.n_rejected,
            "pruned": s.n_pruned,
            "best": None if s.best is None else round(s.best, 4),
            "metric": s.metric,
        }
        for s in open_store(a.storage).list_studies()
    ]
    if not rows and a.format == "table":
        print("no studies yet: run 'search run --space hourglass --task digits-denoise --budget 200K'")
        return 0
    print_frame(pd.DataFrame(rows), a.format)
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
        if "overall_front" in r:  # with --pareto: also on the front over all families
            rec["overall_front"] = bool(r["overall_front"])
        for k in ("n_runs", "seeds", "note", "error", "device", "duration_s"):
            v = r.get(k)
            rec[k] = None if (isinstance(v, float) and v != v) else v
        out.append(rec)
    return out


def cmd_trials(a: argparse.Namespace) -> int:
    import pandas as pd

    from storage.frames import metric_columns

    store = open_store(a.storage)
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
        overall = {int(n) for n in fronts.overall_numbers}
        df = df.assign(overall_front=df["number"].isin(overall)).sort_values(["params", "number"], kind="stable")
    metrics = metric_columns(df)
    if a.format == "json":
        print(json.dumps(trials_records(df, metrics), indent=2, default=str))
        return 0
    if a.format == "csv":
        from storage.frames import with_config_columns

        out = with_config_columns(df)
        out["config"] = out["config"].map(lambda c: json.dumps(c, sort_keys=True))
        out["seeds"] = out["seeds"].map(json.dumps)
        print_frame(out, "csv")
        return 0
    from search.api.progress import format_config

    cols = {
        "number": df["number"],
        "status": df["status"],
        "family": df["family"],
        "config": df["config"].map(format_config),
        "params": df["params"],
    }
    for m in metrics:
        cols[m] = df[m].round(4)
        if df[f"{m}_std"].notna().any():
            cols[f"{m}_std"] = df[f"{m}_std"].round(4)
    if "overall_front" in df.columns:
        cols["overall_front"] = df["overall_front"].map({True: "✓", False: ""})
    cols["time_s"] = df["duration_s"].round(1)
    cols["reason"] = df["error"].fillna(df["note"]).fillna("")
    print_frame(pd.DataFrame(cols), "table")
    return 0


def cmd_sql(a: argparse.Namespace) -> int:
    import pandas as pd

    if not a.timeout > 0:
        raise UserError(f"--timeout must be a positive number of seconds, got {a.timeout:g}")
    cols, rows = open_store(a.storage).query_readonly(a.query, timeout_s=a.timeout)
    print_frame(pd.DataFrame(rows, columns=cols), a.format)
    return 0


def cmd_serve(a: argparse.Namespace) -> int:
    from reports.server import make_server

    server = make_server(open_store(a.storage), a.host, a.port, allow_hosts=a.allow_host, read_file=read_kept_file)
    host, port = server.server_address[:2]
    print(
        f"serving the studies of {a.storage or 'the default database'} at http://{host}:{port}/ "
        "(read-only; Ctrl-C stops)",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def read_kept_file(store_url: str, key: str) -> bytes:
    """A kept file's bytes from its artifact store (what `search serve` offers for download)."""
    from search.artifacts.location import open_location

    return open_location(store_url).read(key)
