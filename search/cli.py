"""The `search` command's parser. Thin: each sub-command parses its flags and calls one
function of search/commands/.

Errors a user can fix (UserError) print one line and exit with status 2.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from core.errors import UserError
from core.limits import SQL_TIMEOUT_S
from search.commands import (
    cmd_compare,
    cmd_export_optuna,
    cmd_params,
    cmd_recipes,
    cmd_report,
    cmd_run,
    cmd_serve,
    cmd_spaces,
    cmd_sql,
    cmd_studies,
    cmd_tasks,
    cmd_trials,
)
from search.commands.run import DEFAULT_REPORT_DIR
from search.pruners import DEFAULT_PRUNER
from search.samplers import (
    DEFAULT_SAMPLER,
    DEFAULT_SHARE,
    DEFAULT_SPREAD,
    SAMPLERS,
    SHARES,
    SPREADS,
)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UserError(f"{message} (see '{self.prog} --help')")


def _storage_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--storage", metavar="URL",
                   help="SQLAlchemy URL or SQLite file (default: $SEARCH_STORAGE or sqlite:///search.db)")


# ---------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="search", description="Pareto-frontier architecture search for neural-network shapes.")
    from search import __version__

    p.add_argument("--version", action="version", version=f"search {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="run or resume a study")
    r.add_argument("--recipe", help="a paper experiment by name ('search recipes') or a recipe .toml file; "
                                    "flags given here override its values")
    r.add_argument("--space", help="family or comma list, e.g. hourglass,conventional (required without --recipe)")
    r.add_argument("--budget", help="max trainable parameters: 500K, 80M, 1.5B, 80000000 (required without --recipe)")
    r.add_argument("--task", help="task (default: the first family's paper task)")
    r.add_argument("--budget-of", help="what --budget counts: params (each family's parameter convention, the "
                                       "default) or omega (connections per layer: mixer, s-mixer, rp-mixer, "
                                       "sw-mlp; the sparse-MLP paper's fixed quantity)")
    r.add_argument("--trials", type=int, help="finished trials to reach (default 20)")
    r.add_argument("--repeats", type=int, help="seeds per configuration (default 1)")
    r.add_argument("--sampler",
                   help=f"{', '.join(SAMPLERS.names())} (default {DEFAULT_SAMPLER})")
    r.add_argument("--spread",
                   help=f"{', '.join(SPREADS)}: with an Optuna sampler, draw a target size log-uniformly between the "
                        f"smallest model and the budget first and aim the config at it, or not (default {DEFAULT_SPREAD})")
    r.add_argument("--share",
                   help=f"{', '.join(SHARES)}: with an Optuna sampler and several families, give the families "
                        f"turns, or let the sampler choose the family (default {DEFAULT_SHARE})")
    r.add_argument("--pruner", help="pareto, none: stop a trial after an epoch at which a finished trial with no "
                                    f"more parameters was clearly better, or never (default {DEFAULT_PRUNER})")
    r.add_argument("--prune-grace", type=float,
                   help="the pruner's grace period, a fraction of the epochs in (0, 1): no trial is stopped "
                        "before it (default 1/3)")
    r.add_argument("--study", help="study name (default: TASK-FAMILIES)")
    _storage_arg(r)
    r.add_argument("--data-dir", help="where data sets are (default: $SEARCH_DATA_DIR, then the user cache)")
    r.add_argument("--epochs", type=int, help="epochs per trial (default: the task's)")
    r.add_argument("--batch-size", type=int, help="batch size (default: the task's)")
    r.add_argument("--optimizer", help="adamw (AdamW, linear decay; the default) or sgd-step (SGD with momentum "
                                       "0.9, lr x0.2 at 50/70/90%% of the steps, Yu & Zhang's recipe)")
    r.add_argument("--lr", type=float, help="learning rate when the space does not search one (default: the task's)")
    r.add_argument("--seed", type=int, help="study seed (default 0)")
    r.add_argument("--space-file", help="TOML or YAML file overriding the spaces' ranges")
    r.add_argument("--executor", help="where trials run (default: local, in this process)")
    r.add_argument("--retries", type=int, help="re-runs of a failed or interrupted trial (default 1)")
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

    rc = sub.add_parser("recipes", help="list the paper experiments 'search run --recipe NAME' runs")
    rc.add_argument("name", nargs="?", help="show this recipe's settings")
    rc.set_defaults(func=cmd_recipes)

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
    tr.add_argument("--pareto", action="store_true", help="only Pareto-optimal trials (per family), by parameters, with overall_front")
    tr.add_argument("--family", help="only this family")
    tr.add_argument("--format", choices=("table", "csv", "json"), default="table")
    _storage_arg(tr)
    tr.set_defaults(func=cmd_trials)

    q = sub.add_parser("sql", help="run a read-only SQL query")
    q.add_argument("query")
    q.add_argument("--timeout", type=float, default=SQL_TIMEOUT_S, metavar="SECONDS",
                   help=f"stop the query after this long (default {SQL_TIMEOUT_S:g})")
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

    cp = sub.add_parser("compare", help="which family wins at each budget, with confidence intervals")
    cp.add_argument("studies", nargs="+", metavar="STUDY", help="studies of one task and metric")
    cp.add_argument("--families", help="comma list (default: every family of the studies)")
    levels = cp.add_mutually_exclusive_group()
    levels.add_argument("--budgets", help="comma list of budgets, e.g. 10K,100K,1M")
    levels.add_argument("--levels", type=int, help="log-spaced budgets from the smallest to the largest model (default 5)")
    cp.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    cp.add_argument("--format", choices=("table", "csv", "json"), default="table")
    _storage_arg(cp)
    cp.set_defaults(func=cmd_compare)

    sv = sub.add_parser("serve", help="browse the studies in a web browser, live while they run")
    _storage_arg(sv)
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    sv.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    sv.set_defaults(func=cmd_serve)

    ex = sub.add_parser("export-optuna", help="write a study as an Optuna study (optuna-dashboard opens it)")
    ex.add_argument("study")
    ex.add_argument("--to", required=True, metavar="URL", help="Optuna storage URL, e.g. sqlite:///optuna.db")
    ex.add_argument("--name", help="the Optuna study's name (default: the study's)")
    _storage_arg(ex)
    ex.set_defaults(func=cmd_export_optuna)

    sp = sub.add_parser("spaces", help="list model families, or show one family's default search space")
    sp.add_argument("family", nargs="?", help="show this family's keys, ranges and shape rules")
    sp.add_argument("--task", help="with a family: the task whose input size scales the ranges (default: its own)")
    sp.set_defaults(func=cmd_spaces)
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
