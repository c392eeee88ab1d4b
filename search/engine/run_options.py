"""`search run`'s options, declared once: `RunOptions`, one typed field per option, each
with its flag, group, help and the value it holds when not given (None: the run's own
default, or a recipe's). Everything that starts a search reads this one table:

- the command line: search/cli/run.py adds a flag per field (`add_run_flags`) and turns
  the parsed flags into `RunOptions` (`from_namespace`);
- Python: `search.run(**options)` fills it from Python values (`from_python`); its
  signature and the options part of its docstring are made from the table;
- a user's Tune script: search/tune/api.py `budgeted_searcher` fills it the same way;
- the documentation: the reference pages list the flags and `search.run`'s keywords
  from it (docs/hooks/cli_reference.py).

Each then builds its `RunSpec` through search/engine/from_options.py `spec_from_options`. Values are typed as
the run takes them (families a tuple, a budget a count, task options a dict), whether
they came as text from the command line or as Python objects."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.errors import UserError
from search.engine.run_option_help import DEFAULT_REPORT_DIR, HELP
from search.engine.sampling.policies import CHECK_ORDERS

WHAT, HOW, TRAINING, WHERE, RESULTS = "what to search", "how to search", "training", "where trials run", "results"
GROUPS = (WHAT, HOW, TRAINING, WHERE, RESULTS)


# -- how a value becomes what the run takes ---------------------------------------------
def families(value: Any) -> tuple[str, ...] | None:
    """'a,b' or ['a', 'b'] as ('a', 'b')."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(str(s).strip() for s in items if str(s).strip())


def budget_count(value: Any) -> int | None:
    """'100K', '1.5M', 100000 or 1e5 as a count of parameters."""
    if value is None:
        return None
    from core.budget import parse_budget

    if isinstance(value, bool):
        raise UserError(f"--budget must be a count of parameters such as 100K, got {value!r}")
    return int(parse_budget(str(value)))


def budget_list(value: Any) -> tuple[float, ...] | None:
    """--decide '10K,60K' (or a list of budgets) as numbers."""
    if value is None:
        return None
    from core.budget import parse_budget

    items = [str(b).strip() for b in (value.split(",") if isinstance(value, str) else value)]
    if not any(items):
        raise UserError("--decide needs at least one budget, e.g. --decide 10K,60K")
    return tuple(float(parse_budget(b)) for b in items if b)


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


def key_values(value: Any, what: str = "--task-option") -> dict[str, Any] | None:
    """`what` KEY=VALUE (repeated) or a dict as a dict, each text value read as a bool,
    int or float where it is one (--task-option; `search params --config`)."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return dict(value)
    out: dict[str, Any] = {}
    for kv in [value] if isinstance(value, str) else value:
        if "=" not in kv:
            raise UserError(f"expected {what} key=value, got {kv!r}")
        k, v = kv.split("=", 1)
        out[k.strip()] = parse_value(v.strip())
    return out


def on_off(value: Any) -> bool | None:
    """--fuse on|off (or a bool) as a bool."""
    if value is None or isinstance(value, bool):
        return value
    if value in ("on", "off"):
        return value == "on"
    raise UserError(f"--fuse must be on or off, got {value!r}")


def names(value: Any) -> tuple[str, ...] | None:
    """One name or several (--plugin) as a tuple."""
    if value is None:
        return None
    return (value,) if isinstance(value, str) else tuple(value)


def as_given(value: Any) -> Any:
    return value


# -- the table --------------------------------------------------------------------------
def option(
    group: str,
    default: Any = None,
    *,
    parse: Callable[[Any], Any] = as_given,
    type: Callable[[str], Any] | None = None,  # the parser's, for a number flag
    flags: tuple[str, ...] = (),  # other spellings of the flag (--family for --space)
    metavar: str | None = None,
    choices: tuple[str, ...] | None = None,
    action: str | None = None,  # store_true, append, bool (--x / --no-x)
    cli: bool = True,  # False: not a flag of `search run` (added to every command elsewhere)
) -> Any:
    """A field of `RunOptions` with what the parser and the documentation need."""
    meta = dict(
        group=group, parse=parse, type=type, flags=flags, metavar=metavar, choices=choices, action=action, cli=cli
    )
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class RunOptions:
    """The options of one `search run` command or `search.run(...)` call, typed; None
    where not given (the run's default, or a recipe's value, applies)."""

    # what to search
    recipe: str | None = option(WHAT)
    space: tuple[str, ...] | None = option(WHAT, parse=families, flags=("--family",))
    budget: int | None = option(WHAT, parse=budget_count)
    task: str | None = option(WHAT)
    budget_of: str | None = option(WHAT)
    trials: int | None = option(WHAT, type=int)
    repeats: int | None = option(WHAT, type=int)
    study: str | None = option(WHAT)
    seed: int | None = option(WHAT, type=int)
    search_repeats: int = option(WHAT, 1, type=int, metavar="K")
    space_file: str | None = option(WHAT)
    smoke: bool = option(WHAT, False, action="store_true")
    # how to search
    sampler: str | None = option(HOW)
    spread: str | None = option(HOW)
    share: str | None = option(HOW)
    sampler_scope: str | None = option(HOW)
    corners: str | None = option(HOW)
    start: str | None = option(HOW)
    revisit: str | None = option(HOW)
    shape_draw: str | None = option(HOW)
    size_scale: str | None = option(HOW)
    pruner: str | None = option(HOW)
    prune_grace: float | None = option(HOW, type=float)
    decide: tuple[float, ...] | None = option(HOW, parse=budget_list, metavar="BUDGETS")
    margin: float | None = option(HOW, type=float, metavar="D")
    time_limit: str | float | None = option(HOW, metavar="DURATION")
    seed_checks: float | None = option(HOW, type=float, metavar="SHARE")
    seed_check_order: str | None = option(HOW, choices=CHECK_ORDERS)
    # training
    epochs: int | None = option(TRAINING, type=int)
    batch_size: int | None = option(TRAINING, type=int)
    optimizer: str | None = option(TRAINING)
    lr: float | None = option(TRAINING, type=float)
    ema: float | None = option(TRAINING, type=float, metavar="DECAY")
    ema_warmup: bool | None = option(TRAINING, action="bool")
    compile: str | None = option(TRAINING, metavar="MODE")
    fuse: bool | None = option(TRAINING, parse=on_off, choices=("on", "off"))
    device: str = option(TRAINING, "auto")
    max_train_samples: int | None = option(TRAINING, type=int)
    tokens: int | None = option(TRAINING, type=int)
    data: str | None = option(TRAINING)
    data_dir: str | None = option(TRAINING)
    task_option: dict[str, Any] | None = option(TRAINING, parse=key_values, action="append", metavar="KEY=VALUE")
    # where trials run
    executor: str | None = option(WHERE)
    pack: int | str | None = option(WHERE, metavar="K")
    workers: int | str | None = option(WHERE, metavar="N")
    threads: int | str | None = option(WHERE, metavar="T")
    retries: int | None = option(WHERE, type=int)
    oom_retry: bool = option(WHERE, False, action="store_true")
    ray_address: str | None = option(WHERE)
    gpus_per_trial: float | None = option(WHERE, type=float)
    cpus_per_trial: float | None = option(WHERE, type=float)
    max_concurrent: int | None = option(WHERE, type=int)
    trial_timeout: float | None = option(WHERE, type=float)
    tune_dir: str | None = option(WHERE)
    # results
    storage: str | None = option(RESULTS, metavar="URL")
    storage_wait: float | None = option(RESULTS, type=float, metavar="S")
    keep: str | None = option(RESULTS)
    artifacts: str | None = option(RESULTS, metavar="URL")
    out: str = option(RESULTS, DEFAULT_REPORT_DIR)
    no_report: bool = option(RESULTS, False, action="store_true")
    plugin: tuple[str, ...] | None = option(RESULTS, parse=names, cli=False)

    @classmethod
    def from_python(cls, **values: Any) -> RunOptions:
        """`search.run`'s keywords (and the Tune searcher's): unknown names refused in one
        line, `family=` as `space=`, each value made what the run takes."""
        if "family" in values:  # the family by its own name, as `--family` on the command line
            if values.get("space") is not None:
                raise UserError("search.run() takes space= or family=, not both")
            values = {**{k: v for k, v in values.items() if k != "family"}, "space": values["family"]}
        unknown = sorted(set(values) - set(OPTION_NAMES))
        if unknown:
            raise UserError(f"search.run() got unknown option {unknown[0]!r}; options: {', '.join(OPTION_NAMES)}")
        return cls(**{k: _parse(k, v) for k, v in values.items()})

    @classmethod
    def from_namespace(cls, parsed: Any) -> RunOptions:
        """The flags `search run` parsed (argparse's namespace)."""
        return cls(**{k: _parse(k, getattr(parsed, k)) for k in OPTION_NAMES if hasattr(parsed, k)})

    def with_recipe(self) -> tuple[RunOptions, Any]:
        """These options with `--recipe`'s values for the ones not given, and the recipe
        (None without one)."""
        if not self.recipe:
            return self, None
        from search.recipes import load_recipe

        recipe = load_recipe(self.recipe)
        filled = {k: _parse(k, v) for k, v in recipe.run.items() if k in OPTION_NAMES and getattr(self, k) is None}
        return dataclasses.replace(self, **filled), recipe

    def smoke_filled(self) -> RunOptions:
        """`--smoke`'s values where not given: 2 trials, 1 epoch, 512 training samples."""
        if not self.smoke:
            return self
        return dataclasses.replace(
            self,
            trials=2 if self.trials is None else self.trials,
            epochs=1 if self.epochs is None else self.epochs,
            max_train_samples=512 if self.max_train_samples is None else self.max_train_samples,
        )


OPTIONS = tuple(dataclasses.fields(RunOptions))
OPTION_NAMES = tuple(f.name for f in OPTIONS)
# name -> what it holds when not given (the parser's defaults: tests hold them equal)
DEFAULTS: dict[str, Any] = {f.name: f.default for f in OPTIONS}


def task_options_of(a: Any) -> dict[str, Any]:
    """--task-option KEY=VALUE (and --data) as a dict (`RunOptions`, or a parsed namespace)."""
    options = dict(key_values(a.task_option) or {})
    if getattr(a, "data", None):
        options["data"] = a.data
    return options


def _parse(name: str, value: Any) -> Any:
    return RunOptions.__dataclass_fields__[name].metadata["parse"](value)


def flag(name: str) -> str:
    """An option's flag: --name-with-dashes."""
    return "--" + name.replace("_", "-")


def help_of(name: str) -> str:
    """The option's help, as `search run --help` prints it."""
    return HELP[name]


def said(name: str) -> str:
    """The option's help as one line of prose (argparse's '%%' a '%'): the docstring's and
    the reference table's text."""
    return " ".join(help_of(name).split()).replace("%%", "%")


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """A flag per option of the table, in its group, as `search run --help` shows them."""
    groups = {g: parser.add_argument_group(g) for g in GROUPS}
    for f in OPTIONS:
        m = f.metadata
        if not m["cli"]:
            continue
        kwargs: dict[str, Any] = {"dest": f.name, "help": help_of(f.name)}
        if m["action"] == "bool":
            kwargs |= {"action": argparse.BooleanOptionalAction, "default": None}
        elif m["action"] is not None:
            kwargs["action"] = m["action"]
        if f.default is not None and m["action"] != "store_true":
            kwargs["default"] = f.default
        for key in ("type", "metavar", "choices"):
            if m[key] is not None:
                kwargs[key] = m[key]
        groups[m["group"]].add_argument(flag(f.name), *m["flags"], **kwargs)


def signature(head: Callable) -> inspect.Signature:
    """`head`'s own parameters, then every option of the table not among them as a
    keyword with its default: `search.run`'s signature as `help()` and editors show it."""
    own = [p for p in inspect.signature(head).parameters.values() if p.kind is not p.VAR_KEYWORD]
    taken = {p.name for p in own} | {"no_report", "plugin"}  # `report=` and `plugins=` say them
    rest = [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=_annotation(f))
        for f in OPTIONS
        if f.name not in taken
    ]
    return inspect.Signature([*own, *rest], return_annotation=inspect.signature(head).return_annotation)


def _annotation(f: dataclasses.Field) -> Any:
    return f.type if isinstance(f.type, str) else inspect.Parameter.empty


def options_doc() -> str:
    """The options, one line each with the flag they stand for, for `search.run`'s
    docstring."""
    lines = ["", "", "    Every option (a keyword, the flag it stands for, what it does):", ""]
    for f in OPTIONS:
        if f.metadata["cli"]:
            text = said(f.name)
            lines.append(f"    - {f.name} ({flag(f.name)}): {text}")
    return "\n".join(lines)


def options_table() -> str:
    """`search.run`'s keywords as a Markdown table (the Python reference page)."""
    rows = ["| keyword | flag | group | what it does |", "|---|---|---|---|"]
    for f in OPTIONS:
        if f.metadata["cli"]:
            text = said(f.name).replace("|", "\\|")
            rows.append(f"| `{f.name}` | `{flag(f.name)}` | {f.metadata['group']} | {text} |")
    return "\n".join(rows)
