"""Restart campaign: `search run` on PostgreSQL while its database server is stopped
(`pg_ctl -m immediate`, as a crash or a failover) and started again, several times per
search; beside it, the same search with no restart. Counts, per seed:

- restarts survived: the search went on past each one (it ends with exit status 0);
- trials lost: complete in a snapshot taken after a restart, but changed or gone at the end;
- trials duplicated: a trial left running or interrupted, a trial with more or fewer runs
  or epochs than asked, or more finished trials than asked;
- seconds lost per restart: (wall with restarts - wall without) / restarts, and the same
  less the seconds the database was down.

Targets: every restart survived, 0 lost, 0 duplicated. Medians over the seeds.

Needs Debian's PostgreSQL server binaries (package postgresql); a private server in a
temporary folder (tests/storage/pg_server.py).

Run: python -m benchmarks.reliability.restart_campaign [--seeds 3] [--restarts 4] [--down 5] [--trials 40]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core.statuses import FINISHED_STATUSES
from storage import Store
from tests.storage.pg_server import PgServer

REPO = Path(__file__).resolve().parents[2]


def search_args(url: str, study: str, trials: int, epochs: int, seed: int) -> list[str]:
    return [
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "20K",
        "--trials",
        str(trials),
        "--epochs",
        str(epochs),
        "--sampler",
        "random",
        "--seed",
        str(seed),
        "--keep",
        "none",
        "--no-report",
        "--seed-checks",
        "0",  # the trials alone, as this benchmark measures them
        "--pruner",
        "none",  # every trial runs out, so a complete count measures losses
        "--study",
        study,
        "--storage",
        url,
    ]


def _complete(url: str, study: str) -> dict[int, tuple]:
    try:
        with Store(url) as store:
            return {
                r.number: (r.family, repr(r.config), r.params, r.metrics.get("psnr"))
                for r in store.trials(study)
                if r.status == "complete"
            }
    except Exception:  # noqa: BLE001 - the database is down or the study not there yet
        return {}


def _start(args: list[str], cwd: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    return subprocess.Popen(
        [sys.executable, "-m", "search.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def one_search(
    pg: PgServer,
    workdir: Path,
    study: str,
    trials: int,
    epochs: int,
    seed: int,
    restarts: int,
    down_s: float,
    rng: random.Random,
) -> dict:
    """One search, with `restarts` restarts of `down_s` seconds each (0: none)."""
    started = time.monotonic()
    proc = _start(search_args(pg.url, study, trials, epochs, seed), workdir)
    snapshots, done, downtime = {}, 0, 0.0
    while restarts and not _complete(pg.url, study) and proc.poll() is None:
        time.sleep(0.2)  # the search has started (opening a store does not wait: a wrong URL fails at once)
    while done < restarts and proc.poll() is None:
        time.sleep(rng.uniform(1.0, 3.0))  # a restart at a random moment of the search
        if proc.poll() is not None:
            break
        snapshots.update(_complete(pg.url, study))
        t = time.monotonic()
        pg.stop("immediate")
        time.sleep(down_s)
        pg.start()
        downtime += time.monotonic() - t
        done += 1
    _, err = proc.communicate(timeout=1800)
    wall = time.monotonic() - started
    with Store(pg.url) as store:
        recs = store.trials(study)
        final = [r for r in recs if r.status in FINISHED_STATUSES]
        end = {
            r.number: (r.family, repr(r.config), r.params, r.metrics.get("psnr"))
            for r in recs
            if r.status == "complete"
        }
        wrong_runs = [r.number for r in final if len(store.epochs(study, r.number)) != epochs]
    lost = sum(1 for n, row in snapshots.items() if end.get(n) != row)
    duplicated = (
        len([r for r in recs if r.status in ("running", "interrupted")]) + len(wrong_runs) + max(0, len(final) - trials)
    )
    return {
        "study": study,
        "seed": seed,
        "exit": proc.returncode,
        "restarts": done,
        "survived": done if proc.returncode == 0 else 0,
        "finished": len(final),
        "lost": lost,
        "duplicated": duplicated,
        "wall_s": round(wall, 2),
        "down_s": round(downtime, 2),
        "reported_outages": err.count("is unreachable since"),
        "error": err.strip().splitlines()[-1:] if proc.returncode else [],
    }


def campaign(seeds: int = 3, restarts: int = 4, down_s: float = 5.0, trials: int = 40, epochs: int = 5) -> dict:
    pg = PgServer()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for seed in range(seeds):
                rng = random.Random(seed)
                base = one_search(pg, Path(tmp), f"baseline-{seed}", trials, epochs, seed, 0, 0.0, rng)
                hit = one_search(pg, Path(tmp), f"restarts-{seed}", trials, epochs, seed, restarts, down_s, rng)
                lost_s = (hit["wall_s"] - base["wall_s"]) / max(hit["restarts"], 1)
                beyond = (hit["wall_s"] - base["wall_s"] - hit["down_s"]) / max(hit["restarts"], 1)
                rows.append(
                    {
                        "seed": seed,
                        "baseline": base,
                        "restarts": hit,
                        "seconds_lost_per_restart": round(lost_s, 2),
                        "seconds_lost_per_restart_beyond_down": round(beyond, 2),
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
    finally:
        pg.close()
    med = lambda key: statistics.median(r[key] for r in rows)  # noqa: E731
    return {
        "command": f"python -m benchmarks.reliability.restart_campaign --seeds {seeds} --restarts {restarts} --down {down_s:g} "
        f"--trials {trials} --epochs {epochs}",
        "restarts": sum(r["restarts"]["restarts"] for r in rows),
        "survived": sum(r["restarts"]["survived"] for r in rows),
        "lost": sum(r["restarts"]["lost"] + r["baseline"]["lost"] for r in rows),
        "duplicated": sum(r["restarts"]["duplicated"] + r["baseline"]["duplicated"] for r in rows),
        "median_seconds_lost_per_restart": med("seconds_lost_per_restart"),
        "median_seconds_lost_per_restart_beyond_down": med("seconds_lost_per_restart_beyond_down"),
        "per_seed": rows,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--restarts", type=int, default=4, help="restarts per search")
    p.add_argument("--down", type=float, default=5.0, help="seconds the database stays down each time")
    p.add_argument("--trials", type=int, default=40)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--out", help="write the result as JSON here")
    a = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a kill still stops the private server
    out = campaign(a.seeds, a.restarts, a.down, a.trials, a.epochs)
    text = json.dumps(out, indent=1)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")
    ok = out["survived"] == out["restarts"] and out["lost"] == 0 and out["duplicated"] == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
