"""Storage under load: several processes writing trials to ONE study at the same time.

Each of P processes (default 4) writes T trivial trials (default 200): `add_trial` as
running, then `finish_trial` with a small result (1 run, 3 epochs, 2 metrics), each in its
own transaction, the way `search run` records a trial. All processes start together
(a barrier); the figure is trials per second of wall time over all processes. Then the
stored study is checked: every (process, i) trial exactly once, complete, numbered
0..P*T-1 (lost, duplicated and missing numbers: target 0, 0, 0). "retried" counts the
inserts that lost the race for a trial number and were retried with the next one.

Runs on PostgreSQL (a new schema, dropped afterwards) and on a SQLite file:

    python -m benchmarks.reliability.storage_load [POSTGRES_URL] [--processes 4] [--trials 200]

POSTGRES_URL defaults to $SEARCH_TEST_POSTGRES_URL (e.g.
postgresql+psycopg://user:password@127.0.0.1:5432/db); without either, SQLite only.
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import sqlite3
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

PG_ENV = "SEARCH_TEST_POSTGRES_URL"
STUDY = "load"


def _result(number: int, i: int) -> Any:
    from core.trials import EpochRecord, RunResult, TrialResult

    epochs = [EpochRecord(e, 1.0 / e, {"val_psnr": 20.0 + e, "val_ssim": 0.5 + 0.1 * e}, 0.01 * e) for e in (1, 2, 3)]
    run = RunResult(
        seed=i,
        status="complete",
        metrics={"psnr": 23.0 + i % 7, "ssim": 0.8},
        best_epoch=3,
        epochs=epochs,
        duration_s=0.03,
    )
    return TrialResult(number=number, status="complete", runs=[run], duration_s=0.03, device="cpu")


def _worker(url: str, tag: str, n: int, barrier: Any, queue: Any) -> None:
    """Add and finish `n` trials; put (tag, numbers, retried, start, end) or (tag, error)."""
    from storage import Store
    from storage.database import _Conflict

    class CountingStore(Store):
        retried = 0

        @contextmanager
        def _session(self) -> Iterator[Any]:
            try:
                with super()._session() as s:
                    yield s
            except _Conflict:
                self.retried += 1
                raise

    try:
        with CountingStore(url) as store:
            barrier.wait(timeout=300)
            start = time.time()
            numbers = []
            for i in range(n):
                number = store.add_trial(
                    STUDY, family="f", config={"worker": tag, "i": i}, params=1, seeds=[i], owner=tag
                )
                store.finish_trial(STUDY, number, _result(number, i))
                numbers.append(number)
            end = time.time()
            queue.put((tag, numbers, store.retried, start, end))
    except BaseException as exc:
        queue.put((tag, f"{type(exc).__name__}: {exc}"))
        raise


def run_load(url: str, processes: int, trials: int) -> dict[str, Any]:
    """One load run on the (empty) database `url`; returns the figures of one table row."""
    from storage import Store

    with Store(url) as store:  # the schema and the study exist before the clock starts
        store.create_or_load_study(STUDY, task="t", families=["f"], metric="psnr", direction="maximize", budget=1)
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, f"p{k}", trials, barrier, queue)) for k in range(processes)]
    for p in procs:
        p.start()
    try:
        reports = [queue.get(timeout=1800) for _ in procs]
    finally:
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()
    errors = [r for r in reports if isinstance(r[1], str)]
    if errors:
        raise SystemExit(f"worker failed: {errors}")
    wall = max(r[4] for r in reports) - min(r[3] for r in reports)
    expected = processes * trials
    with Store(url) as store:
        stored = store.trials(STUDY)
    pairs = Counter((t.config.get("worker"), t.config.get("i")) for t in stored if t.status == "complete")
    numbers = Counter(t.number for t in stored)
    returned = Counter(n for r in reports for n in r[1])
    wanted = {(f"p{k}", i) for k in range(processes) for i in range(trials)}
    return {
        "trials": expected,
        "rows": len(stored),
        "wall_s": wall,
        "per_s": expected / wall,
        "lost": len(wanted - set(pairs)),
        "duplicated": sum(c - 1 for c in pairs.values() if c > 1)
        + sum(c - 1 for c in numbers.values() if c > 1)
        + sum(c - 1 for c in returned.values() if c > 1),
        "gaps": len(set(range(expected)) - set(numbers)),
        "retried": sum(r[2] for r in reports),
    }


@contextmanager
def postgres_schema(base: str) -> Iterator[tuple[str, str]]:
    """A URL whose search_path is a new schema (dropped afterwards), and the server version."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    schema = f"storage_load_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        version = conn.execute(text("SHOW server_version")).scalar()
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
        yield url.render_as_string(hide_password=False), str(version).split()[0]
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "postgres_url", nargs="?", default=os.environ.get(PG_ENV), help=f"PostgreSQL SQLAlchemy URL (default ${PG_ENV})"
    )
    ap.add_argument("--processes", type=int, default=4)
    ap.add_argument("--trials", type=int, default=200, help="trials per process")
    ap.add_argument("--sqlite-dir", default=None, help="folder of the SQLite file (default: a temporary one)")
    args = ap.parse_args(argv)

    rows: list[tuple[str, dict[str, Any]]] = []
    load_before = os.getloadavg()
    if args.postgres_url:
        with postgres_schema(args.postgres_url) as (url, version):
            rows.append((f"PostgreSQL {version}", run_load(url, args.processes, args.trials)))
    else:
        print(f"(no PostgreSQL URL given and ${PG_ENV} unset: SQLite only)", file=sys.stderr)
    with tempfile.TemporaryDirectory(dir=args.sqlite_dir) as d:
        url = f"sqlite:///{d}/load.db"
        rows.append((f"SQLite {sqlite3.sqlite_version} (file, WAL)", run_load(url, args.processes, args.trials)))
    load_after = os.getloadavg()

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"machine: {platform.machine()}, {cpus} CPUs, python {platform.python_version()}; "
        f"load average (1/5/15 min) before {' '.join(f'{x:.2f}' for x in load_before)}, "
        f"after {' '.join(f'{x:.2f}' for x in load_after)}"
    )
    print(
        f"{args.processes} processes x {args.trials} trials on one study "
        "(add_trial running + finish_trial: 1 run, 3 epochs, 2 metrics)\n"
    )
    print("| backend | trials | wall s | trials/s | lost | duplicated | missing numbers | number races retried |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in rows:
        print(
            f"| {name} | {r['trials']} | {r['wall_s']:.1f} | {r['per_s']:.0f} | {r['lost']} | "
            f"{r['duplicated']} | {r['gaps']} | {r['retried']} |"
        )
    bad = [name for name, r in rows if r["lost"] or r["duplicated"] or r["gaps"] or r["rows"] != r["trials"]]
    if bad:
        print(f"\nFAILED: lost, duplicated or extra trials on {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
