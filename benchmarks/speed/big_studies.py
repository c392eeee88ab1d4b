"""Big studies (issue 33): a study page's build time and size at 1K, 10K, 100K trials, and
`search serve` under polling clients on the largest study.

A study of instant trials is written straight into a SQLite store, the rows `search run`
writes (`Store.add_trial`, `Store.finish_trial`) inserted in one transaction: two families
(hourglass, conventional) on mnist-denoise taking turns, configs drawn at random within
the budget with their exact parameter counts, each result from `orchestration_overhead.py`'s
`InstantExecutor` (a metric that is a smooth function of the config); 3% of the proposals
are rejected and 2% of the trials fail. Then, per size:

* the page: `reports.site.study_page` of the study as `search report` builds it (the
  trials frame read from the database, the sample lookups included), seconds (median of
  `--repeats`) and megabytes;
* `search serve` (`--serve-size`, default the largest size): the page fetched by 16 and
  64 clients at once, each fetching it `--requests` times back to back, p50/p95/max
  milliseconds and requests per second, for plain GETs (the kept page, gzip-compressed as
  browsers accept it) and for conditional GETs (the browser's If-None-Match: 304 answers
  while unchanged); the server runs in its
  own process, the clients are threads of this one, on the same machine. With `--writer`,
  a thread adds a trial to the study every 0.5 s meanwhile, so every change rebuilds the
  page once (with the ETag of the first request, most conditional GETs then get the page).

Run: OMP_NUM_THREADS=1 python -m benchmarks.speed.big_studies [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from benchmarks.bench_util import cpu_name, fail
from benchmarks.speed.orchestration_overhead import InstantExecutor
from core.trials import TrialResult, TrialSpec
from models import get_family
from reports.samples import store_samples
from reports.site import study_page
from storage import Store
from storage.convert import dims, finite, jsonable, now_utc
from storage.schema import Epoch, Run, Trial, TrialMetric
from tasks import get_task

REPO = Path(__file__).resolve().parents[2]
STUDY = "big"
FAMILIES = ("hourglass", "conventional")
TASK = "mnist-denoise"
BUDGET = 80_000_000
REJECTED = "over budget: 81,000,000 parameters > 80,000,000"


def draw_config(family: str, rng: random.Random, io: Any) -> tuple[dict[str, Any], int]:
    """A random config of `family` within the budget, with its exact count (as the
    budget-aware sampler proposes: over-budget draws are drawn again)."""
    count = get_family(family).count_params
    while True:
        d_z = rng.randint(2, 4000)
        d_h = rng.randint(2, 1200) if family == "hourglass" else d_z + rng.randint(0, 400)
        config = {
            "fixed_w_in": False,
            "L": rng.randint(1, 30),
            "d_z": d_z,
            "d_h": d_h,
            "lr": rng.choice([1e-4, 5e-4, 1e-3, 5e-3]),
        }
        params = count(config, io)
        if params <= BUDGET:
            return config, params


def noisy(result: TrialResult, rng: random.Random, sd: float = 0.3) -> TrialResult:
    """`result` with each run's psnr moved by its own seed noise (normal, `sd` dB), as
    repeated runs of a real trial differ (`InstantExecutor` gives every seed the same)."""
    for r in result.runs:
        shift = rng.gauss(0.0, sd)
        r.metrics = {k: v + shift if k.endswith("psnr") else v for k, v in r.metrics.items()}
    return result


def planned_trials(n: int, seed: int = 0, seeds: int = 1) -> list[tuple[str, dict[str, Any], int, TrialResult | None]]:
    """`n` trials (family, config, params, result; no result: rejected) in number order:
    two families taking turns, 3% rejected, 2% failed, the rest `InstantExecutor` results
    (with `seeds` > 1, that many runs each, with seed noise: `noisy`)."""
    rng = random.Random(seed)
    io = get_task(TASK).io()
    executor = InstantExecutor()
    out = []
    for number in range(n):
        family = FAMILIES[number % 2]
        config, params = draw_config(family, rng, io)
        if rng.random() < 0.03:
            out.append((family, config, params, None))
        elif rng.random() < 0.02:
            out.append(
                (
                    family,
                    config,
                    params,
                    TrialResult(number, "failed", [], 0.0, "cpu", error="RuntimeError: out of memory"),
                )
            )
        else:
            result = executor.run(TrialSpec(STUDY, number, family, config, TASK, tuple(range(seeds))))
            out.append((family, config, params, noisy(result, rng) if seeds > 1 else result))
    return out


def _create(store: Store, n: int) -> None:
    store.create_or_load_study(
        STUDY,
        task=TASK,
        families=FAMILIES,
        metric="psnr",
        direction="maximize",
        budget=BUDGET,
        settings={"sampler": "tpe", "trials": n},
    )


def write_one_by_one(store: Store, trials: list) -> None:
    """Through the store's writes, a transaction or two per trial (`search run`'s path)."""
    _create(store, len(trials))
    for family, config, params, result in trials:
        if result is None:
            store.add_rejected(STUDY, family=family, config=config, params=params, reason=REJECTED)
            continue
        number = store.add_trial(
            STUDY, family=family, config=config, params=params, seeds=[r.seed for r in result.runs] or [0]
        )
        store.finish_trial(STUDY, number, result)


def write_in_bulk(store: Store, trials: list, optuna: list[dict[str, Any] | None] | None = None) -> None:
    """The same rows as `write_one_by_one` (checked by tests/test_big_studies_benchmark.py),
    inserted in one transaction: 100,000 trials in a minute instead of hours. `optuna`: per
    trial, the sampler's record that a resumed study replays (`Proposal.optuna`), or None."""
    _create(store, len(trials))
    now = now_utc()
    rows: dict[Any, list[dict[str, Any]]] = {Trial: [], TrialMetric: [], Run: [], Epoch: []}
    with store._session() as s:
        study_id = store._study_id(s, STUDY)
        first_run = (s.scalar(select(func.max(Run.id))) or 0) + 1
        first_trial = (s.scalar(select(func.max(Trial.id))) or 0) + 1
        for number, (family, config, params, result) in enumerate(trials):
            tid = first_trial + number
            trial = dict(
                id=tid,
                study_id=study_id,
                number=number,
                family=family,
                params=int(params),
                config=jsonable(config),
                seeds=[] if result is None else [r.seed for r in result.runs] or [0],
                optuna=None if optuna is None or result is None else optuna[number],
                owner=None,
                heartbeat_at=None,
                attempt=0,
                retry_of=None,
                **dims(config),
                status="rejected",
                note=REJECTED,
                started_at=None,
                finished_at=now,
                objective=None,
                error=None,
                traceback=None,
                device=None,
                duration_s=None,
            )
            rows[Trial].append(trial)
            if result is None:
                continue
            aggregate = result.aggregate()
            primary = aggregate.get("psnr")
            trial.update(
                status=result.status,
                note=None,
                started_at=now,
                error=result.error,
                traceback=result.traceback,
                device=result.device,
                duration_s=finite(result.duration_s),
                objective=finite(primary[0]) if primary else None,
            )
            rows[TrialMetric] += [
                dict(trial_id=tid, name=name, mean=finite(mean), std=finite(std), n=k)
                for name, (mean, std, k) in aggregate.items()
            ]
            for i, r in enumerate(result.runs):
                rid = first_run + len(rows[Run])
                rows[Run].append(
                    dict(
                        id=rid,
                        trial_id=tid,
                        repeat=i,
                        seed=int(r.seed),
                        status=r.status,
                        best_epoch=r.best_epoch,
                        metrics=jsonable(r.metrics),
                        duration_s=finite(r.duration_s),
                        error=r.error,
                    )
                )
                rows[Epoch] += [
                    dict(
                        run_id=rid,
                        epoch=int(e.epoch),
                        train_loss=finite(e.train_loss),
                        metrics=jsonable(e.metrics),
                        elapsed_s=finite(e.elapsed_s),
                    )
                    for e in r.epochs
                ]
        for table, values in rows.items():
            if values:
                s.execute(table.__table__.insert(), values)


def build_study(store: Store, n: int, seed: int = 0, seeds: int = 1) -> None:
    """Write a study of `n` instant trials (two families, taking turns; `seeds` runs each)
    into `store`."""
    write_in_bulk(store, planned_trials(n, seed, seeds))


def page_build(store: Store) -> tuple[float, int]:
    """Seconds and bytes of one study page, from reading the database to the HTML text."""
    t = time.perf_counter()
    html = study_page(store.get_study(STUDY), store.trials_frame(STUDY), store_samples(store))
    return time.perf_counter() - t, len(html.encode("utf-8"))


def fetch(url: str, etag: str | None) -> tuple[float, int]:
    """Milliseconds and status of one GET accepting gzip (conditional when `etag` is
    given); the body is read, not decompressed."""
    headers = {"Accept-Encoding": "gzip", **({"If-None-Match": etag} if etag else {})}  # as a browser asks
    req = urllib.request.Request(url, headers=headers)
    t = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    return 1000 * (time.perf_counter() - t), status


def load(url: str, clients: int, requests: int, etag: str | None) -> dict[str, float]:
    """`clients` threads each fetching `url` `requests` times: latency percentiles (ms),
    requests per second and how many answers were not 200/304."""
    times: list[float] = []
    bad = 0
    lock = threading.Lock()

    def client() -> None:
        nonlocal bad
        for _ in range(requests):
            ms, status = fetch(url, etag)
            with lock:
                times.append(ms)
                bad += status not in (200, 304)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t
    times.sort()
    q = statistics.quantiles(times, n=100, method="inclusive")
    return {"p50": q[49], "p95": q[94], "max": times[-1], "rps": len(times) / wall, "bad": bad}


def writer(db: str, stop: threading.Event, every_s: float) -> None:
    """Add one instant trial to the study every `every_s` seconds until `stop`."""
    store = Store(f"sqlite:///{db}")
    rng = random.Random(1)
    io = get_task(TASK).io()
    executor = InstantExecutor()
    while not stop.wait(every_s):
        config, params = draw_config("hourglass", rng, io)
        number = store.add_trial(STUDY, family="hourglass", config=config, params=params, seeds=[0])
        store.finish_trial(STUDY, number, executor.run(TrialSpec(STUDY, number, "hourglass", config, TASK, (0,))))
    store.close()


def start_server(db: str, tree: Path = REPO) -> tuple[subprocess.Popen, str]:
    """`search serve` of `db` in its own process, running the code of `tree` (a checkout;
    another one gives a baseline), its request log dropped; its address."""
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "search.cli", "serve", "--storage", f"sqlite:///{db}", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tree,
    )
    line = proc.stdout.readline()
    m = re.search(r"at (http://\S+/) ", line)
    if m is None:
        proc.kill()
        raise RuntimeError(f"search serve did not start: {line!r}")
    return proc, m[1]


def serve_figures(
    db: str, clients: list[int], requests: int, with_writer: bool, tree: Path = REPO
) -> list[tuple[str, dict]]:
    """Latencies of the study page under `clients` concurrent clients, each fetching it
    `requests` times back to back (no pause: the worst case of polling), against
    `search serve` in its own process; the clients are threads of this process."""
    from reports.site import study_filename

    proc, base = start_server(db, tree)
    url = base + study_filename(STUDY)
    try:
        t = time.perf_counter()
        with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept-Encoding": "gzip"}), timeout=600) as r:
            r.read()
            etag = r.headers.get("ETag")
        first = 1000 * (time.perf_counter() - t)
        stop = threading.Event()
        if with_writer:
            threading.Thread(target=writer, args=(db, stop, 0.5), daemon=True).start()
        out = [
            (
                "first request (builds the page)",
                {"p50": first, "p95": first, "max": first, "rps": 1000 / first, "bad": 0},
            )
        ]
        try:
            for c in clients:
                out.append((f"{c} clients, plain GET", load(url, c, requests, None)))
                out.append((f"{c} clients, If-None-Match", load(url, c, requests, etag)))
        finally:
            stop.set()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000", help="comma list of study sizes (trials)")
    ap.add_argument("--repeats", type=int, default=3, help="page builds per size (the median is reported)")
    ap.add_argument("--serve-size", type=int, default=None, help="the study size served (default: the largest)")
    ap.add_argument("--clients", default="16,64")
    ap.add_argument("--requests", type=int, default=10, help="requests per client")
    ap.add_argument("--writer", action="store_true", help="add a trial every 0.5 s while serving")
    ap.add_argument(
        "--seeds", type=int, default=1, help="runs per trial, with seed noise (> 1: the verdicts' intervals are drawn)"
    )
    ap.add_argument("--no-serve", action="store_true")
    ap.add_argument("--dir", default=None, help="keep the databases here (default: a temporary folder)")
    ap.add_argument(
        "--server-tree",
        default=str(REPO),
        help="the checkout whose `search serve` is measured (default this one; another gives a baseline)",
    )
    args = ap.parse_args()
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
        clients = [int(c) for c in args.clients.split(",")]
    except ValueError:
        fail(f"--sizes and --clients take comma lists of whole numbers, got {args.sizes!r} and {args.clients!r}")
    if min(sizes) < 1 or min(clients) < 1 or args.repeats < 1 or args.requests < 1 or args.seeds < 1:
        fail("sizes, clients, --repeats, --requests and --seeds must be positive")
    print(
        f"machine: {cpu_name()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f} "
        f"(1 min average at start), python {sys.version.split()[0]}, OMP_NUM_THREADS="
        f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, {args.seeds} run(s) per trial"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.dir or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        dbs: dict[int, str] = {}
        print(
            "\n| trials | study written (s) | page build (s, median of "
            f"{args.repeats}) | page size (MB) |\n|---|---|---|---|"
        )
        for n in sizes:
            db = str((folder / (f"big-{n}.db" if args.seeds == 1 else f"big-{n}-s{args.seeds}.db")).resolve())
            if not os.path.exists(db):
                t = time.perf_counter()
                build_study(Store(f"sqlite:///{db}"), n, seeds=args.seeds)
                written = f"{time.perf_counter() - t:.1f}"
            else:
                written = "(kept)"
            dbs[n] = db
            store = Store(f"sqlite:///{db}")
            runs = [page_build(store) for _ in range(args.repeats)]
            store.close()
            secs = statistics.median(s for s, _ in runs)
            print(
                f"| {n:,} | {written} | {secs:.2f} ({' / '.join(f'{s:.2f}' for s, _ in runs)}) | "
                f"{runs[0][1] / 1e6:.2f} |",
                flush=True,
            )
        if args.no_serve:
            return
        size = args.serve_size or max(sizes)
        if size not in dbs:
            fail(f"--serve-size {size} is not one of --sizes {args.sizes}")
        print(
            f"\n`search serve` of the {size:,}-trial study page, {args.requests} requests per client"
            f"{', a trial added every 0.5 s' if args.writer else ', the study unchanged'}"
            f"{'' if Path(args.server_tree) == REPO else f', server code of {args.server_tree}'}:\n"
        )
        print("| clients | p50 (ms) | p95 (ms) | max (ms) | requests/s | errors |\n|---|---|---|---|---|---|")
        for name, r in serve_figures(dbs[size], clients, args.requests, args.writer, Path(args.server_tree)):
            print(
                f"| {name} | {r['p50']:.0f} | {r['p95']:.0f} | {r['max']:.0f} | {r['rps']:.1f} | {int(r['bad'])} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
