"""Trials per hour of a small-model MNIST search with k trials sharing one GPU: k `search
run` processes on one study (one SQLite database; each process trains one trial at a
time, the study hands out the trials), k = 1, 2, 4, 8, against k = 1 in the same command;
with `--packs 4,8,16`, also one process training K trials at a time as one batched program
(`search run --pack K`, fused trials: issue 62).

Every setting runs the same grid of `--trials` small hourglass models (d_z 785, L 2,
d_h 9, 10, ...; the GPU checklist's small model and its neighbours) for `--epochs`
epochs of mnist-denoise (`--task`) on a fresh study. Reported per k: the wall time from the first
process's start to the last one's exit (process start-up, CUDA initialisation and the
report included, as a user would see it), complete trials per hour, the median seconds
of one trial as the progress line gives it (how much packing slows each trial), and the
GPU utilisation and memory nvidia-smi reads every half second while the setting runs.

    python -m benchmarks.gpu.gpu_pack --data-dir DIR [--k 1,2,4,8] [--packs 4,8,16] [--trials 16] [--epochs 2] [--task T]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.bench_util import write_json
from storage import load_trials

REPO = Path(__file__).resolve().parents[2]


class GpuSampler:
    """nvidia-smi's utilisation (%) and memory used (MiB), every 500 ms, in a thread."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []
        try:
            self.proc = subprocess.Popen(
                [
                    "nvidia-smi",
                    "--query-gpu=utilization.gpu,memory.used",
                    "--format=csv,noheader,nounits",
                    "-lms",
                    "500",
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
        except FileNotFoundError:  # no NVIDIA GPU here: no readings (NaN)
            self.proc = None
            return
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                util, mem = (float(v) for v in line.split(","))
            except ValueError:
                continue
            self.samples.append((util, mem))

    def stop(self) -> tuple[float, float, float]:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()
        util = [u for u, _ in self.samples] or [float("nan")]
        mem = [m for _, m in self.samples] or [float("nan")]
        return statistics.mean(util), statistics.median(util), max(mem)


def setting(k: int, trials: int, epochs: int, data_dir: str | None, threads: int, task: str, pack: int = 1) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"pack{k}x{pack}-"))
    d_h = ", ".join(str(9 + i) for i in range(trials))
    (work / "grid.toml").write_text(f"[hourglass]\nd_z = [785]\nd_h = [{d_h}]\nL = [2]\nlr = [0.001]\n")
    args = [
        sys.executable,
        "-m",
        "search.cli",
        "run",
        "--space",
        "hourglass",
        "--task",
        task,
        "--budget",
        "2M",
        "--sampler",
        "grid",
        "--space-file",
        "grid.toml",
        "--trials",
        str(trials),
        "--epochs",
        str(epochs),
        "--study",
        "pack",
        "--no-report",
        "--seed-checks",
        "0",  # the trials alone, as this benchmark measures them
        "--retries",
        "0",
        "--pack",
        str(pack),
        *(["--data-dir", data_dir] if data_dir else []),
    ]
    path = os.pathsep.join(v for v in (str(REPO), os.environ.get("PYTHONPATH")) if v)
    env = dict(os.environ, PYTHONPATH=path, OMP_NUM_THREADS=str(threads))
    gpu = GpuSampler()
    t0 = time.perf_counter()
    procs = []
    for i in range(k):
        procs.append(
            subprocess.Popen(args, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        )
        if i == 0:
            time.sleep(1.0)  # the first process creates the database and the study
    logs = [p.communicate()[0] for p in procs]
    wall = time.perf_counter() - t0
    util_mean, util_median, mem_max = gpu.stop()
    codes = [p.returncode for p in procs]
    if any(codes):
        print(
            f"k={k}: exit codes {codes}; a failed process's log:\n"
            f"{next(log for log, c in zip(logs, codes) if c)[-3000:]}",
            flush=True,
        )
    df = load_trials("pack", f"sqlite:///{work / 'search.db'}")
    complete = int((df.status == "complete").sum())
    return {
        "k": k,
        "pack": pack,
        "wall_s": wall,
        "complete": complete,
        "rows": len(df),
        "trials_per_hour": complete / wall * 3600,
        "median_trial_s": float(df.duration_s.median()),
        "gpu_util_mean": util_mean,
        "gpu_util_median": util_median,
        "gpu_mem_max_mib": mem_max,
        "exit_codes": codes,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--task", default="mnist-denoise", help="digits-denoise: a quick look without MNIST")
    p.add_argument("--k", default="1,2,4,8")
    p.add_argument(
        "--packs", default="", help="also one process with --pack K for each K here (fused trials), e.g. 4,8,16"
    )
    p.add_argument("--trials", type=int, default=16)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    ks = [int(v) for v in args.k.split(",")]
    cores = os.cpu_count() or 1
    print(f"{cores} CPUs; {args.trials} trials of {args.epochs} epochs per setting", flush=True)
    print(
        "| processes | trials per pack | wall s | complete | trials/hour | vs 1 | median s per trial | GPU util mean / median % | GPU memory max MiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    rows = []
    runs = [(k, 1) for k in ks] + [(1, int(v)) for v in args.packs.split(",") if v]
    for k, pack in runs:
        r = setting(k, args.trials, args.epochs, args.data_dir, max(1, cores // k), args.task, pack)
        rows.append(r)
        base = rows[0]["trials_per_hour"]
        print(
            f"| {k} | {pack} | {r['wall_s']:.1f} | {r['complete']}/{args.trials} | {r['trials_per_hour']:,.0f} | "
            f"{r['trials_per_hour'] / base:.2f}x | {r['median_trial_s']:.1f} | "
            f"{r['gpu_util_mean']:.0f} / {r['gpu_util_median']:.0f} | {r['gpu_mem_max_mib']:,.0f} |",
            flush=True,
        )
    if args.json:
        write_json(args.json, {"trials": args.trials, "epochs": args.epochs, "rows": rows})


if __name__ == "__main__":
    main()
