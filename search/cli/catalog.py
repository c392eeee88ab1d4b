"""What the registries hold: `search params`, `spaces` and `tasks`."""

from __future__ import annotations

import argparse
import json
import sys

from search.cli.common import key_values, task_options


def add_parsers(sub) -> None:
    """recipes, params, spaces and tasks."""
    rc = sub.add_parser("recipes", help="list the paper experiments 'search run --recipe NAME' runs")
    rc.add_argument("name", nargs="?", help="show this recipe's settings")
    rc.set_defaults(func=cmd_recipes)

    pa = sub.add_parser("params", help="exact parameter count of one configuration")
    pa.add_argument("--space", "--family", dest="space", required=True, help="the family (--family: the same flag)")
    pa.add_argument("--task")
    pa.add_argument("config", nargs="*", metavar="key=value")
    pa.add_argument("--data", help="a data file the task reads")
    pa.add_argument("--task-option", action="append", metavar="KEY=VALUE", help="task option (repeatable)")
    pa.add_argument("--json", action="store_true")
    pa.set_defaults(func=cmd_params)

    sp = sub.add_parser("spaces", help="list model families, or show one family's default search space")
    sp.add_argument("family", nargs="?", help="show this family's keys, ranges and shape rules")
    sp.add_argument("--task", help="with a family: the task whose input size scales the ranges (default: its own)")
    sp.set_defaults(func=cmd_spaces)
    sub.add_parser("tasks", help="list tasks").set_defaults(func=cmd_tasks)


def cmd_params(a: argparse.Namespace) -> int:
    from core.budget import format_count
    from models import get_family
    from tasks import get_task

    fam = get_family(a.space)
    task = get_task(a.task or fam.default_task, task_options(a))
    io = task.io()
    config = key_values(a.config, "config")
    n = fam.count_params(config, io)
    parts = fam.param_breakdown(config, io)
    violation = fam.shape_violation(config, io)
    if a.json:
        print(
            json.dumps(
                {
                    "space": fam.name,
                    "task": task.name,
                    "config": config,
                    "params": n,
                    "convention": fam.param_convention,
                    "breakdown": parts,
                    "d_x": io.d_in,
                    "d_out": io.d_out,
                    "shape_ok": violation is None,
                    "shape_violation": violation,
                }
            )
        )
    else:
        print(
            f"{n} {fam.param_convention} ({format_count(n)}) for {fam.name} on {task.name} "
            f"(d_x={io.d_in}, d_out={io.d_out})"
        )
        for name, count in parts.items():
            print(f"  {name}: {count} ({format_count(count)})")
        if violation:
            print(f"note: {violation}", file=sys.stderr)
    return 0


def cmd_spaces(a: argparse.Namespace) -> int:
    from models import FAMILIES
    from tasks import TASKS, get_task

    if a.family:
        return _show_space(a.family, a.task)
    for name, fam in FAMILIES.items():
        fits = [t for t in TASKS.names() if fam.fits(get_task(t).io())]
        print(
            f"{name:<14} {fam.description}; default task {fam.default_task or 'none'}; "
            f"keys {', '.join(fam.key_dims)}; tasks: {', '.join(fits)}; from: {FAMILIES.origin(name)}"
        )
    return 0


def cmd_tasks(a: argparse.Namespace) -> int:
    from tasks import TASKS, get_task

    for name in TASKS.names():
        t = get_task(name)
        print(f"{name:<20} {t.description} [{t.metric}, {t.direction}]; from: {TASKS.origin(name)}")
    return 0


def cmd_recipes(a: argparse.Namespace) -> int:
    from search.recipes import load_recipe, recipe_names

    if a.name:
        r = load_recipe(a.name)
        print(f"{r.name}: {r.description}")
        for label, text in (("paper", r.paper), ("claim", r.claim)):
            if text:
                print(f"{label}: {text}")
        flags = " ".join(
            f"--{'' if v else 'no-'}{k.replace('_', '-')}"
            if isinstance(v, bool)  # ema_warmup
            else f"--{k.replace('_', '-')} {v}"
            for k, v in r.run.items()
        )
        opts = " ".join(f"--task-option {k}={v}" for k, v in r.task_options.items())
        print(f"runs: search run {flags}{' ' + opts if opts else ''}")
        return 0
    for name in recipe_names():
        print(f"{name:<28} {load_recipe(name).description}")
    return 0


def _show_space(family: str, task: str | None) -> int:
    """The default search space of `family` on `task` (its default task if None): every
    key with its range or choices, the shape rules, and the smallest model."""
    from core.budget import format_count
    from search.engine.prepare import default_task, prepare
    from search.engine.specs import RunSpec
    from search.spaces import build_spaces, min_params

    prep = prepare(RunSpec(spaces=(family,), task=task or default_task((family,)), budget=10**15))
    space = build_spaces([family], prep.io, None, prep.task.search_lrs)[family]
    print(f"{family} on {prep.task.name} (d_x={prep.io.d_in}, d_out={prep.io.d_out}):")
    for d in space.dims:
        if d.kind == "choice":
            print(f"  {d.name:<14} one of {', '.join(map(str, d.choices))}")
        else:
            extra = ", log" if d.log else (f", step {d.step}" if d.step > 1 else "")
            print(f"  {d.name:<14} {d.kind} {d.low:g}..{d.high:g}{extra}; grid {', '.join(map(str, d.grid_values()))}")
    if space.constraints:
        print(f"  shape: {'; '.join(map(str, space.constraints))}")
    smallest = min_params(space, prep.io, lambda c: prep.count(family, c))
    print(f"  smallest model: {format_count(int(smallest))} parameters")
    return 0
