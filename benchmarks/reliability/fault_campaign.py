"""Fault campaign: `search run` killed with SIGKILL at random moments (every other kill
after a trial has started running), resumed each time,
then run to the end. Counts completed trials lost (complete in a snapshot taken after a
kill, but changed or gone at the end) and duplicated (a trial number twice, or a retry of
a trial that had completed). Targets: 0 and 0.

Run: python -m benchmarks.reliability.fault_campaign [--kills 20] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARGS = [
    "run",
    "--space",
    "hourglass,conventional",
    "--task",
    "digits-denoise",
    "--budget",
    "60K",
    "--trials",
    "{trials}",
    "--epochs",
    "{epochs}",
    "--no-report",
    "--seed-checks",
    "0",  # the trials alone, as this benchmark measures them
    "--study",
    "campaign",
    "--pruner",
    "none",
]  # every trial runs out, so a complete count measures losses


def _complete(db: Path) -> dict[int, tuple]:
    if not db.exists():
        return {}
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT number, family, config, params, objective FROM trials WHERE status='complete'")
        return {r[0]: r[1:] for r in rows}
    except sqlite3.Error:
        return {}
    finally:
        con.close()


def _wait_for_running(db: Path, proc: subprocess.Popen, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        try:
            con = sqlite3.connect(db)
            owners = [r[0] or "" for r in con.execute("SELECT owner FROM trials WHERE status='running'")]
            con.close()
            if any(o.split(":")[1:2] == [str(proc.pid)] for o in owners):  # a trial of THIS process
                return
        except sqlite3.Error:
            pass
        time.sleep(0.05)


def campaign(
    workdir: Path, kills: int = 20, trials: int = 30, seed: int = 0, max_wait: float = 4.0, epochs: int = 20
) -> dict:
    rng = random.Random(seed)
    db = workdir / "search.db"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    args = [a.format(trials=trials, epochs=epochs) for a in ARGS]
    seen: dict[int, tuple] = {}
    killed = 0
    t0 = time.monotonic()
    for i in range(kills):
        p = subprocess.Popen(
            [sys.executable, "-m", "search.cli", *args],
            cwd=workdir,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if i % 2:  # every other kill lands while a trial is running, not during start-up
            _wait_for_running(db, p, timeout=60)
        time.sleep(rng.uniform(0.0 if i % 2 else 0.2, max_wait))
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            killed += 1
        p.wait()
        seen.update(_complete(db))
    final = subprocess.run(
        [sys.executable, "-m", "search.cli", *args], cwd=workdir, env=env, capture_output=True, text=True
    )
    end = _complete(db)
    con = sqlite3.connect(db)
    numbers = [r[0] for r in con.execute("SELECT number FROM trials")]
    retried_complete = con.execute(
        "SELECT count(*) FROM trials r JOIN trials o ON o.number = r.retry_of AND o.study_id = r.study_id "
        "WHERE o.status = 'complete'"
    ).fetchone()[0]
    interrupted = con.execute("SELECT count(*) FROM trials WHERE status='interrupted'").fetchone()[0]
    con.close()
    lost = sum(1 for n, row in seen.items() if end.get(n) != row)
    duplicated = (len(numbers) - len(set(numbers))) + retried_complete
    return {
        "kills": killed,
        "final_rc": final.returncode,
        "complete": len(end),
        "trials": trials,
        "lost": lost,
        "duplicated": duplicated,
        "interrupted": interrupted,
        "seconds": time.monotonic() - t0,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        r = campaign(Path(d), a.kills, a.trials, a.seed)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print("| runs killed | trials | complete at the end | interrupted (re-run) | lost | duplicated | wall s |")
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {r['kills']} | {r['trials']} | {r['complete']} | {r['interrupted']} | {r['lost']} | "
        f"{r['duplicated']} | {r['seconds']:.0f} |"
    )


if __name__ == "__main__":
    main()
