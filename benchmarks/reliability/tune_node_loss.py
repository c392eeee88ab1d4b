"""A lost node on the `tune` path (issue 29 item 3): a two-node Ray cluster on this
machine (`ray.cluster_utils.Cluster`: a head node and a worker node, one CPU each), the
study run by the real command line joining it (`search run ... --executor tune
--ray-address HEAD`), and the worker node killed (SIGKILL of its raylet and workers,
`Cluster.remove_node(allow_graceful=False)`) while a trial runs on it. The study must
store that trial `failed` (its Tune trial errored: the actor died with its node), run it
again as a retry on the node that is left, and end with `--trials` complete trials:
none lost (a trial complete before the kill changed or missing after it; a killed trial
not retried) and none duplicated (a trial number twice, a configuration trained to
completion twice, a retry of a trial that had completed).

With one CPU per node and two trials in flight, the moment two trials run is a moment
one of them runs on the worker node (the head has room for one). `--executor ray` runs
the same campaign on the Ray executor, for comparison. A driver that gives up (exits
non-zero) is run again once with the same command, as a user would (the product's
resume), once Ray's GCS has declared the killed node dead (its health check takes some
seconds: before that Ray may still place work on the dead node), and the study is
judged after that; the table says so.

The cluster does not announce itself to other programs on the machine: `Cluster` would
write /tmp/ray/ray_current_cluster, which makes every plain `ray.init()` on the machine
(another user's tests, `search run --executor ray` without an address) join it instead
of starting its own Ray; the benchmark keeps that file as it was.

Run:  OMP_NUM_THREADS=1 python -m benchmarks.reliability.tune_node_loss [--trials 12] [--executor tune,ray]
          [--kill-after 3,6,9] [--out docs/data/tune-node-loss.json]
      python -m benchmarks.reliability.tune_node_loss --quick    # 4 trials on tune, about 40 s (tests)

One campaign per executor and --kill-after value, each on a fresh cluster and study.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_util import write_json

REPO = Path(__file__).resolve().parents[2]

STUDY = "node-loss"


def rows(db: Path) -> list[tuple]:
    """(number, status, config, attempt, retry_of, error) of every trial; [] before the
    schema is there."""
    if not db.exists():
        return []
    con = sqlite3.connect(db, timeout=10)
    try:
        return con.execute(
            "SELECT number, status, config, attempt, retry_of, error FROM trials ORDER BY number"
        ).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


@contextlib.contextmanager
def unannounced():
    """`Cluster` writes (and at shutdown deletes) /tmp/ray/ray_current_cluster, the address
    every `ray.init()` without one on this machine would join: keep the file as it was."""
    import ray._common.utils
    import ray._private.utils

    write, reset = ray._private.utils.write_ray_address, ray._common.utils.reset_ray_address
    ray._private.utils.write_ray_address = lambda *a, **k: None
    ray._common.utils.reset_ray_address = lambda *a, **k: None
    try:
        yield
    finally:
        ray._private.utils.write_ray_address, ray._common.utils.reset_ray_address = write, reset


def node_alive(cluster: Any, node_id: str) -> bool | None:
    """Whether Ray's GCS still counts the node alive (its health check declares a killed
    node dead some seconds later); None when the GCS cannot be asked."""
    try:
        for node in cluster.global_state.node_table():
            if node.get("NodeID") == node_id:
                return bool(node.get("Alive"))
    except Exception:
        return None
    return False


def campaign(a: argparse.Namespace, folder: Path) -> dict[str, Any]:
    from ray.cluster_utils import Cluster

    os.environ["OMP_NUM_THREADS"] = "1"  # the nodes' workers inherit it
    t0 = time.perf_counter()
    with unannounced():
        cluster = Cluster(
            initialize_head=True, head_node_args={"num_cpus": 1, "num_gpus": 0, "include_dashboard": False}
        )
        worker = cluster.add_node(num_cpus=1, num_gpus=0)
        cluster.wait_for_nodes()
    cluster_s = time.perf_counter() - t0
    db = folder / "node-loss.db"
    args = [
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "100K",
        "--trials",
        str(a.trials),
        "--epochs",
        str(a.epochs),
        "--pruner",
        "none",
        "--study",
        STUDY,
        "--storage",
        f"sqlite:///{db}",
        "--no-report",
        "--seed-checks",
        "0",  # the trials alone, as this benchmark measures them
        "--executor",
        a.executor,
        "--ray-address",
        cluster.address,
        "--max-concurrent",
        "2",
        "--retries",
        "1",
    ]
    if a.max_train_samples:
        args[args.index("--pruner") : args.index("--pruner")] = ["--max-train-samples", str(a.max_train_samples)]
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    proc = None
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "search.cli", *args],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # wait until `kill_after` trials are complete and two have run for `settle` seconds: both placed (one
        # on each node: one CPU each) and training
        deadline = time.time() + a.timeout
        seen: dict[int, float] = {}  # running trial -> when first seen running
        while time.time() < deadline and proc.poll() is None:
            now = rows(db)
            running = {r[0] for r in now if r[1] == "running"}
            seen = {n: seen.get(n, time.time()) for n in running}
            settled = [n for n, t in seen.items() if time.time() - t >= a.settle]
            if sum(r[1] == "complete" for r in now) >= a.kill_after and len(settled) >= 2:
                break
            time.sleep(0.05)
        if proc.poll() is not None or time.time() >= deadline:
            proc.kill()
            out, err = proc.communicate(timeout=60)
            return {
                "args": args,
                "returncode": proc.returncode,
                "stdout_tail": out[-1500:],
                "stderr_tail": err[-3000:],
                "cluster_start_s": cluster_s,
                "wall_s": time.perf_counter() - t0,
                "kill_s": None,
                "killed_after_s": None,
                "failure_recorded_after_kill_s": None,
                "node_declared_dead_after_kill_s": None,
                "before": rows(db),
                "after_first_run": rows(db),
                "rerun": None,
                "after": rows(db),
                "no_kill": "the study never had two trials running long enough",
            }
        before = rows(db)
        killed_at = time.perf_counter()
        cluster.remove_node(worker, allow_graceful=False)
        kill_s = time.perf_counter() - killed_at
        failed_at = dead_at = None
        while proc.poll() is None and time.perf_counter() - t0 < a.timeout:
            if failed_at is None and any(r[1] == "failed" for r in rows(db)):
                failed_at = time.perf_counter()
            if dead_at is None and node_alive(cluster, worker.node_id) is False:
                dead_at = time.perf_counter()
            time.sleep(0.1)
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate(timeout=60)
        wall = time.perf_counter() - t0
        first_exit, first_rows, rerun = proc.returncode, rows(db), None
        if proc.returncode != 0:  # the driver gave up: the same command again, as a user would (the node is gone)
            while dead_at is None and time.perf_counter() - killed_at < 120:  # once Ray has declared the node dead
                if node_alive(cluster, worker.node_id) is False:
                    dead_at = time.perf_counter()
                time.sleep(0.2)
            t1 = time.perf_counter()
            again = subprocess.run(
                [sys.executable, "-m", "search.cli", *args],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=a.timeout,
            )
            rerun = {
                "returncode": again.returncode,
                "wall_s": time.perf_counter() - t1,
                "stderr_tail": again.stderr[-1500:],
            }
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
        with unannounced():
            cluster.shutdown()
    after = rows(db)
    return {
        "args": args,
        "returncode": first_exit,
        "stdout_tail": out[-1500:],
        "stderr_tail": err[-3000:],
        "cluster_start_s": cluster_s,
        "wall_s": wall,
        "kill_s": kill_s,
        "killed_after_s": killed_at - t0,
        "failure_recorded_after_kill_s": (failed_at - killed_at) if failed_at else None,
        "node_declared_dead_after_kill_s": (dead_at - killed_at) if dead_at else None,
        "before": before,
        "after_first_run": first_rows,
        "rerun": rerun,
        "after": after,
        "no_kill": None,
    }


def verdict(before: list[tuple], after: list[tuple], trials: int) -> dict[str, Any]:
    """Trials, complete, retried, lost, duplicated (see the module docstring)."""
    status = {r[0]: r[1] for r in after}
    by_number = {r[0]: r for r in after}
    complete = [r for r in after if r[1] == "complete"]
    failed = [r for r in after if r[1] == "failed"]
    running_at_kill = [r[0] for r in before if r[1] == "running"]
    retried = [r for r in after if r[4] is not None]
    lost = [r[0] for r in before if r[1] == "complete" and by_number.get(r[0]) != r]  # changed or missing
    for r in failed + [r for r in after if r[1] == "interrupted"]:
        if not any(x[4] == r[0] for x in after):  # a failed or interrupted trial that nothing ran again
            lost.append(r[0])
    lost = sorted(set(lost))
    numbers = [r[0] for r in after]
    duplicated = len(numbers) - len(set(numbers))
    configs = [r[2] for r in complete]
    duplicated += len(configs) - len(set(configs))  # a configuration trained to completion twice
    duplicated += sum(1 for r in retried if status.get(r[4]) == "complete")  # a retry of a complete trial
    return {
        "trials": trials,
        "rows": len(after),
        "complete": len(complete),
        "failed": len(failed),
        "failed_errors": [r[5] for r in failed],
        "running_at_kill": running_at_kill,
        "retried": len(retried),
        "retried_complete": sum(r[1] == "complete" for r in retried),
        "lost": len(lost),
        "lost_numbers": lost,
        "duplicated": duplicated,
        "still_running": sum(r[1] == "running" for r in after),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--executor", default="tune", help="tune, ray or both (tune,ray): one campaign each")
    ap.add_argument("--trials", type=int, default=12)
    ap.add_argument("--epochs", type=int, default=100, help="long enough for a kill to find trials running")
    ap.add_argument("--max-train-samples", type=int, help="default: the task's whole training set")
    ap.add_argument(
        "--kill-after",
        default="3",
        help="complete trials before the kill; a list (3,6,9): one campaign each, a fresh cluster and study every time",
    )
    ap.add_argument("--settle", type=float, default=1.0, help="seconds each of two trials must have been running")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--quick", action="store_true", help="4 trials of 200 epochs, the kill after the first, tune only")
    ap.add_argument("--out", help="write the figures as JSON here")
    a = ap.parse_args(argv)
    if a.quick:  # 200 epochs: at 60 some draws (a learning rate drawn at the smallest corner) train in 2 s a
        # trial, too short for two to be running when the first has finished (2026-12-05)
        a.trials, a.kill_after, a.timeout, a.executor, a.epochs = 4, "1", 240, "tune", 200
    executors = [e.strip() for e in a.executor.split(",") if e.strip()]
    try:
        kills = [int(k) for k in a.kill_after.split(",")]
    except ValueError:
        kills = []
    if (
        not kills
        or min(kills) < 0
        or a.trials < max(kills) + 2
        or a.epochs < 1
        or not executors
        or set(executors) - {"tune", "ray"}
    ):
        print(
            f"{os.path.basename(sys.argv[0])}: need --executor tune and/or ray, --kill-after counts >= 0, "
            "--trials >= the largest --kill-after + 2 and --epochs >= 1",
            file=sys.stderr,
        )
        sys.exit(2)
    import ray

    campaigns = []
    for executor in executors:
        for kill_after in kills:
            a.executor, a.kill_after = executor, kill_after
            load = os.getloadavg()
            with tempfile.TemporaryDirectory() as tmp:
                run = campaign(a, Path(tmp))
            v = verdict(run["before"], run["after"], a.trials)
            campaigns.append(
                {
                    "executor": executor,
                    "kill_after": kill_after,
                    "load": [load, os.getloadavg()],
                    "command": "search " + " ".join(x for x in run["args"] if not x.startswith("sqlite:")),
                    "returncode": run["returncode"],
                    "cluster_start_s": run["cluster_start_s"],
                    "wall_s": run["wall_s"],
                    "killed_after_s": run["killed_after_s"],
                    "kill_s": run["kill_s"],
                    "failure_recorded_after_kill_s": run["failure_recorded_after_kill_s"],
                    "no_kill": run["no_kill"],
                    "node_declared_dead_after_kill_s": run["node_declared_dead_after_kill_s"],
                    "first_run": {
                        "complete": sum(r[1] == "complete" for r in run["after_first_run"]),
                        "interrupted": sum(r[1] == "interrupted" for r in run["after_first_run"]),
                    },
                    "rerun": run["rerun"],
                    **v,
                    "rows_before_kill": run["before"],
                    "rows_after_first_run": run["after_first_run"],
                    "rows_after": run["after"],
                    "stderr_tail": run["stderr_tail"],
                }
            )
            if run["returncode"] != 0:  # why the driver gave up (its last line)
                print(
                    f"{executor}, kill after {kill_after}: exit {run['returncode']}: "
                    f"{run['stderr_tail'].strip().splitlines()[-1][:300] if run['stderr_tail'].strip() else ''}"
                )
    totals = {
        k: sum(c[k] for c in campaigns) for k in ("trials", "complete", "failed", "retried", "lost", "duplicated")
    }
    result = {
        "benchmark": "tune_node_loss",
        "when_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "ray": ray.__version__},
        "quick": a.quick,
        "settings": {
            "trials": a.trials,
            "epochs": a.epochs,
            "max_train_samples": a.max_train_samples,
            "nodes": "head 1 CPU + worker 1 CPU",
            "max_concurrent": 2,
            "retries": 1,
        },
        "totals": totals,
        "campaigns": campaigns,
    }
    print(
        f"two-node cluster on this machine (head 1 CPU + worker 1 CPU, ray {ray.__version__}); {a.trials} trials "
        f"of {a.epochs} epochs, 2 in flight; the worker node killed (SIGKILL) while two trials run"
    )
    print(
        "| executor | killed after (complete) | running then | exit | complete | failed (node lost) | retried "
        "| lost | duplicated | failure stored after the kill s | wall s | load (1 min) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c in campaigns:
        fr = c["failure_recorded_after_kill_s"]
        when = "no kill" if c["no_kill"] else f"{c['killed_after_s']:.1f} s"
        exits = f"{c['returncode']}" + (f", rerun {c['rerun']['returncode']}" if c["rerun"] else "")
        complete = f"{c['complete']}/{c['trials']}" + (
            f" ({c['first_run']['complete']} before the rerun)" if c["rerun"] else ""
        )
        wall = f"{c['wall_s']:.1f}" + (f" + {c['rerun']['wall_s']:.1f}" if c["rerun"] else "")
        print(
            f"| {c['executor']} | {c['kill_after']} ({when}) | {c['running_at_kill']} | {exits} | {complete} "
            f"| {c['failed']} | {c['retried']} | {c['lost']} | {c['duplicated']} "
            f"| {'-' if fr is None else f'{fr:.1f}'} | {wall} | {c['load'][0][0]:.2f}-{c['load'][1][0]:.2f} |"
        )
    for c in campaigns:
        for e in c["failed_errors"]:
            print(f"{c['executor']}, kill after {c['kill_after']}: failed: {(e or '')[:200]}")
    if a.out:
        write_json(a.out, result, default=str)
    return result


if __name__ == "__main__":
    main()
