"""`search run`'s options as the Python API takes them: every flag's name (dashes as
underscores) with the default the command line gives it, so `search.run(**options)` and
`search run --flags` build the same `RunSpec` through one function (search/api/run.py).
tests/search/api/test_run_api.py holds this table against the parser's defaults."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from core.errors import UserError

DEFAULT_REPORT_DIR = "search-reports"

# name -> default, as `search run` parses an empty command line (None: the flag not given).
RUN_OPTIONS: dict[str, Any] = {
    "recipe": None,
    "space": None,
    "budget": None,
    "task": None,
    "budget_of": None,
    "trials": None,
    "repeats": None,
    "study": None,
    "seed": None,
    "search_repeats": 1,
    "space_file": None,
    "smoke": False,
    "sampler": None,
    "spread": None,
    "share": None,
    "sampler_scope": None,
    "corners": None,
    "start": None,
    "revisit": None,
    "shape_draw": None,
    "size_scale": None,
    "pruner": None,
    "prune_grace": None,
    "seed_checks": None,
    "seed_check_order": None,
    "decide": None,
    "margin": None,
    "time_limit": None,
    "epochs": None,
    "batch_size": None,
    "optimizer": None,
    "lr": None,
    "ema": None,
    "ema_warmup": None,
    "compile": None,
    "fuse": None,
    "device": "auto",
    "max_train_samples": None,
    "tokens": None,
    "data": None,
    "data_dir": None,
    "task_option": None,
    "executor": None,
    "retries": None,
    "oom_retry": False,
    "ray_address": None,
    "gpus_per_trial": None,
    "cpus_per_trial": None,
    "max_concurrent": None,
    "trial_timeout": None,
    "tune_dir": None,
    "pack": None,
    "workers": None,
    "threads": None,
    "storage": None,
    "storage_wait": None,
    "keep": None,
    "artifacts": None,
    "out": DEFAULT_REPORT_DIR,
    "no_report": False,
    "plugin": None,
}


def run_namespace(options: Mapping[str, Any]) -> SimpleNamespace:
    """The options of a `search.run(...)` call as the namespace `search run` parses: unknown
    names refused (one line), Python values turned into what the flags hold (a list of
    families into 'a,b', a budget number into text, task options from a dict)."""
    if "family" in options:  # the family by its own name, as `--family` on the command line
        if options.get("space") is not None:
            raise UserError("search.run() takes space= or family=, not both")
        options = {**{k: v for k, v in options.items() if k != "family"}, "space": options["family"]}
    unknown = sorted(set(options) - set(RUN_OPTIONS))
    if unknown:
        raise UserError(f"search.run() got unknown option {unknown[0]!r}; options: {', '.join(RUN_OPTIONS)}")
    values = {**RUN_OPTIONS, **options}
    space = values["space"]
    if isinstance(space, (list, tuple)):
        values["space"] = ",".join(str(s) for s in space)
    if values["budget"] is not None and not isinstance(values["budget"], str):
        values["budget"] = str(values["budget"])
    opts = values["task_option"]
    if isinstance(opts, Mapping):
        values["task_option"] = [f"{k}={v}" for k, v in opts.items()]
    if isinstance(values["fuse"], bool):
        values["fuse"] = "on" if values["fuse"] else "off"
    plugins = values["plugin"]
    if isinstance(plugins, str):
        values["plugin"] = [plugins]
    return SimpleNamespace(command="run", **values)


def print_frame(df, fmt: str) -> None:
    """A DataFrame on stdout as a table, CSV or JSON records."""
    import pandas as pd

    if fmt == "csv":
        sys.stdout.write(df.to_csv(index=False))
    elif fmt == "json":
        print(json.dumps(json.loads(df.to_json(orient="records")), indent=2))
    elif df.empty:
        print("(no rows)")
    else:
        with pd.option_context(
            "display.max_rows", None, "display.max_columns", None, "display.width", 200, "display.max_colwidth", 60
        ):
            print(df.to_string(index=False))
