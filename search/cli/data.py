"""`search data`: each task's data, whether it is present and where, its size and how to
get it; `search data fetch NAME` downloads one data set ahead of a run (e.g. before a
cluster job with no network). The data sets are tasks/datasets/sources.py's."""

from __future__ import annotations

import argparse
import json

from core.errors import UserError


def add_parser(sub) -> None:
    d = sub.add_parser(
        "data",
        help="each task's data: present or not, where, size, how to get it; 'data fetch NAME' downloads one",
        description="Without arguments: one row per task. 'search data fetch NAME' downloads data set NAME "
        "(or a task's) into the cache unless it is found in the search order; with --data-dir DIR, "
        "into DIR/<its folder>/ unless it is in DIR already.",
    )
    d.add_argument("action", nargs="?", metavar="fetch", help="fetch: download NAME now")
    d.add_argument("name", nargs="?", help="with fetch: a data set (mnist, cifar10, tiny-shakespeare, ...) or a task")
    d.add_argument(
        "--data-dir", help="look here first (default: $SEARCH_DATA_DIR, then the user cache); fetch downloads into it"
    )
    d.add_argument("--json", action="store_true", help="the rows as JSON")
    d.set_defaults(func=cmd_data)


def cmd_data(a: argparse.Namespace) -> int:
    if a.action is None:
        return _list(a.data_dir, a.json)
    if a.action != "fetch":
        hint = f"; did you mean 'search data fetch {a.action}'?" if a.name is None else ""
        raise UserError(f"unknown data command {a.action!r} (known: fetch){hint}")
    if not a.name:
        raise UserError("search data fetch needs a NAME: a data set or a task ('search data' lists them)")
    return _fetch(a.name, a.data_dir, a.json)


def _names(name: str) -> tuple[str, ...]:
    """The data sets NAME stands for: itself, or a task's (preferred first; () for none)."""
    from tasks import TASKS, get_task
    from tasks.datasets.sources import DATASETS

    if name in DATASETS:
        return (name,)
    if name in TASKS.names():
        return get_task(name).data_sets()
    raise UserError(f"unknown data set or task {name!r}; data sets: {', '.join(DATASETS)}")


def _fetch(name: str, data_dir: str | None, as_json: bool) -> int:
    from tasks import get_task
    from tasks.datasets import catalog, fetch

    names = _names(name)
    if not names:
        print(f"{name} reads no data files ({get_task(name).data_note}): nothing to fetch")
        return 0
    loc = catalog.fetch_first(names, data_dir)
    if as_json:
        print(json.dumps(_location_row(loc)))
    elif loc.directory is None:
        print(f"{loc.name}: {catalog.how_to_get(loc.name)}; nothing to fetch")
    else:
        print(f"{loc.name}: present in {loc.where()}, {fetch.format_bytes(loc.size)}")
    return 0


def _location_row(loc) -> dict:
    from tasks.datasets import catalog

    return {
        "data": loc.name,
        "present": loc.present,
        "directory": str(loc.directory) if loc.directory else None,
        "origin": loc.origin or None,
        "bytes": loc.size,
        "how": catalog.how_to_get(loc.name),
    }


def _list(data_dir: str | None, as_json: bool) -> int:
    from tasks import TASKS, get_task
    from tasks.datasets import catalog, fetch, sources

    rows = []
    for task_name in TASKS.names():
        task = get_task(task_name)
        needs = task.data_sets()
        if not needs:
            rows.append(
                {
                    "task": task_name,
                    "data": task.data_note,
                    "present": None,
                    "directory": None,
                    "origin": None,
                    "bytes": None,
                    "how": "-",
                }
            )
        for i, n in enumerate(needs):
            row = _location_row(catalog.locate(n, data_dir))
            if i:
                row["data"] = f"else {n}"
            rows.append({"task": task_name if not i else "", **row})
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    table = [("task", "data", "present", "where", "size", "how to get it")]
    for r in rows:
        present = "-" if r["present"] is None else ("yes" if r["present"] else "no")
        where = f"{r['directory']} ({r['origin']})" if r["directory"] else "-"
        size = "-" if r["bytes"] is None else fetch.format_bytes(r["bytes"])
        if r["present"] is False and r["bytes"] is not None:
            size = f"~{size}"
        how = r["how"] if len(r["how"]) <= 60 else r["how"][:57] + "..."
        table.append((r["task"], r["data"], present, where, size, how))
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1])
    manual = sorted({n for t in TASKS.names() for n in get_task(t).data_sets() if sources.get(n).manual})
    for n in manual:
        if not catalog.locate(n, data_dir).present:
            print(f"{n}: {sources.get(n).manual}")
    order = [f"{d} ({o})" for o, d in fetch.search_roots(data_dir)]
    print(
        f"search order: {', then '.join(order)}; in each, the files or the data set's folder "
        f"(mnist/, cifar-10-batches-py/, ...)"
    )
    return 0
