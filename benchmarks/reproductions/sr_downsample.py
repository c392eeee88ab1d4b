"""Super-resolution: what the downsampling of the input changes (issue 12).

The SR task's `downsample` option: "bicubic" (the default, as the authors' code:
F.interpolate bicubic without antialiasing, not clamped) or "antialias" (antialiased
bicubic, clamped; ours before). Side by side in one command, for each:
  1. the no-learning baseline: the test inputs upsampled back by bicubic interpolation,
     PSNR against the targets;
  2. the same fixed hourglass configs trained with the real CLI (`search run --sampler
     grid` on a space file with one value per key), `--repeats` seeds each; test PSNR
     mean and std, and the difference antialias - bicubic per config.

    python -m benchmarks.reproductions.sr_downsample [--task mnist-sr] [--epochs 5] [--repeats 3]
        [--data-dir ../shared/data] [--out bench-sr-downsample]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = str(REPO.parent / "shared" / "data") if (REPO.parent / "shared" / "data").is_dir() else None

MODES = ("bicubic", "antialias")
# (L, d_z, d_h, lr): a small and a larger hourglass of the paper-shaped space (d_z scaled to the input)
CONFIGS = {"mnist-sr": [(1, 256, 32, 1e-3), (3, 1024, 128, 1e-3)], "digits-sr": [(1, 32, 8, 5e-3), (3, 128, 32, 5e-3)]}


def bicubic_baseline(task_name: str, mode: str, data_dir: str) -> float:
    """Test PSNR of the inputs upsampled back to full size by bicubic interpolation."""
    import torch
    import torch.nn.functional as F

    import tasks
    from tasks.metrics import psnr

    task = tasks.get_task(task_name, {"downsample": mode})
    data = tasks.load_data(task, data_dir, "cpu")
    c, h, w = task.image_shape
    values = []
    for inp, target, _ in data.eval_batches("test", 4096):
        low = inp.view(-1, c, h // 2, w // 2)
        up = F.interpolate(low, size=(h, w), mode="bicubic", align_corners=False).clamp(0, 1).flatten(1)
        values.append(psnr(up, target))
    return float(torch.cat(values).mean())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="mnist-sr", choices=sorted(CONFIGS))
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--flips", default="false", help="the task's flips option (false: the short setting)")
    p.add_argument(
        "--data-dir",
        default=SHARED_DATA,
        help="default: ../shared/data when it is there, else the search order (cache, download)",
    )
    p.add_argument("--out", default="bench-sr-downsample")
    a = p.parse_args()
    from storage import load_trials

    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    print(f"load {os.getloadavg()[0]:.2f}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}", flush=True)
    base = {m: bicubic_baseline(a.task, m, a.data_dir) for m in MODES}
    print(
        f"{a.task}: bicubic upsampling of the test inputs (no model): "
        + ", ".join(f"{m} {v:.3f} dB" for m, v in base.items()),
        flush=True,
    )
    db = f"sqlite:///{out / 'bench.db'}"
    results: dict[tuple, dict[str, list[float]]] = {}
    for i, (L, dz, dh, lr) in enumerate(CONFIGS[a.task]):
        space = out / f"config{i}.toml"
        space.write_text(f"[hourglass]\nL = [{L}]\nd_z = [{dz}]\nd_h = [{dh}]\nlr = [{lr}]\n")
        for mode in MODES:
            study = f"{a.task}-{mode}-{i}"
            t = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "search.cli",
                    "run",
                    "--space",
                    "hourglass",
                    "--task",
                    a.task,
                    "--budget",
                    "1B",
                    "--sampler",
                    "grid",
                    "--trials",
                    "1",
                    "--repeats",
                    str(a.repeats),
                    "--epochs",
                    str(a.epochs),
                    "--space-file",
                    str(space),
                    "--storage",
                    db,
                    "--study",
                    study,
                    *(("--data-dir", a.data_dir) if a.data_dir else ()),
                    "--task-option",
                    f"downsample={mode}",
                    "--task-option",
                    f"flips={a.flips}",
                    "--no-report",
                    "--seed-checks",
                    "0",  # the trials alone, as this benchmark measures them
                ],
                check=True,
                cwd=out,
                env=dict(os.environ, PYTHONPATH=str(REPO)),
                stdout=subprocess.DEVNULL,
            )
            df = load_trials(study, db)
            row = df[df.status == "complete"].iloc[0]
            results.setdefault((L, dz, dh, lr), {})[mode] = [float(row.psnr), float(row.get("psnr_std", float("nan")))]
            print(
                f"  L={L} d_z={dz} d_h={dh} lr={lr} {mode}: test PSNR {row.psnr:.3f} ± "
                f"{row.get('psnr_std', float('nan')):.3f} ({a.repeats} seeds, {time.perf_counter() - t:.0f} s)",
                flush=True,
            )
    print("\n| config (L, d_z, d_h, lr) | bicubic (authors') | antialias | antialias - bicubic |\n|---|---|---|---|")
    diffs = []
    for cfg, r in results.items():
        d = r["antialias"][0] - r["bicubic"][0]
        diffs.append(d)
        print(
            f"| {cfg} | {r['bicubic'][0]:.3f} ± {r['bicubic'][1]:.3f} | {r['antialias'][0]:.3f} ± "
            f"{r['antialias'][1]:.3f} | {d:+.3f} |"
        )
    print(
        f"| no model: bicubic upsampling | {base['bicubic']:.3f} | {base['antialias']:.3f} | "
        f"{base['antialias'] - base['bicubic']:+.3f} |"
    )
    print(
        f"\nmedian difference over configs (trained): {statistics.median(diffs):+.3f} dB; "
        f"{a.epochs} epochs, flips={a.flips}, load at the end {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
