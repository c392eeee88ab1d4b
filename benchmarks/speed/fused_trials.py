"""Fused trials (issue 62): what training many runs as one batched program saves.

Three measurements, each against its baseline in the same command:

  steps    the time of one training step (forward, backward, the per-member AdamW step)
           of a pack of K models against K steps of the same models alone, for identical
           shapes (a trial's seeds: two hourglasses, two HanNets, an FCNet) and for K
           different residual-MLP shapes drawn from the default digits space (a pack of
           different trials, padded to the largest); medians of --repeats timings.
  repeats  `search run` (the README's quickstart search, or --command) with --repeats 1,
           --repeats 3 (fused, the default) and --repeats 3 --fuse off, each seed in turn
           (the three arms interleaved, in rotating order), wall time of the whole command;
           medians over seeds and the ratios to --repeats 1; and for the configurations
           both --repeats 3 arms of a seed trained, each one's duration alone over fused.
  vmap     the families without a fused model (the Mixers), fused the generic way: K
           members of one shape through torch.func's vmap, one step against K alone.
  profile  where a fused step's time goes: torch.profiler's table of one pack of --k
           members (the last of --k) of the small and the deep shape.
  pack     the same search with --pack K against --pack 1: wall time and the front's
           hypervolume (log10 parameters, metric) against the union of both arms' trials
           of that seed, medians over seeds.

    python -m benchmarks.speed.fused_trials steps [--threads 1] [--k 1,2,3,4,8,16]
    python -m benchmarks.speed.fused_trials repeats --seeds 3 [--setting denoise]
    python -m benchmarks.speed.fused_trials pack --seeds 3 --k 4 [--setting denoise,sr]
    python -m benchmarks.speed.fused_trials vmap --k 3,8
    python -m benchmarks.speed.fused_trials profile --k 3

Every command runs in a fresh process with OMP_NUM_THREADS=--threads (1 by default) and
its own SQLite file; the JSON of each part goes to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_util import cpu_name

SETTINGS = {  # the README's quickstart search, and the same on super-resolution
    "denoise": ["--space", "hourglass,conventional", "--task", "digits-denoise", "--budget", "100K", "--trials", "40"],
    "sr": ["--space", "hourglass,conventional", "--task", "digits-sr", "--budget", "100K", "--trials", "40"],
    # HanNet and FCNet (fused since 2026-12-01, identical shapes only) on digits classification
    "classify": ["--space", "han,fcnet", "--task", "digits-classify", "--budget", "100K", "--trials", "40"],
    # two Mixers, which do not stack: a trial's seeds pack without padding on a CPU (since 2026-12-06)
    "mixers": ["--space", "mixer,sw-mlp", "--task", "digits-classify", "--budget", "100K", "--trials", "40"],
}


def machine() -> dict:
    return {"cpu": cpu_name(), "cores": os.cpu_count()}


# -- steps ---------------------------------------------------------------------------------
def step_times(ks: list[int], repeats: int, threads: int) -> list[dict]:
    import torch

    import models
    from core.io import IOSpec
    from tasks.optimizers import StackedAdamW, make_adamw

    torch.set_num_threads(threads)
    io = IOSpec(d_in=64, d_out=64, output="image")
    hourglass = models.get_family("hourglass")
    x1 = torch.randn(64, 64)

    def median_ms(step) -> float:
        return _median_ms(step, repeats)

    def alone_ms(config: dict, family=hourglass) -> float:
        model = family.build(config, io)
        opt = make_adamw(list(model.parameters()), 1e-3, 0.0)

        def step():
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.mse_loss(model(x1), x1).backward()
            opt.step()

        return median_ms(step)

    def fused_ms(configs: list[dict], family=hourglass) -> float:
        fused = family.fuse([family.build(c, io, seed=i) for i, c in enumerate(configs)], configs, io)
        k = len(configs)
        opt = StackedAdamW(fused.stacked(), torch.full((k,), 1e-3), torch.zeros(k), (0.9, 0.999))
        x = torch.randn(k, 64, 64)

        def step():
            opt.zero_grad()
            out = fused(x)
            torch.stack([torch.nn.functional.mse_loss(out[j], x[j]) for j in range(k)]).sum().backward()
            opt.step(torch.ones(k))

        return median_ms(step)

    rng = random.Random(0)
    rows = []
    shapes = {  # name: (family, config)
        "small (d_z 96, d_h 8, L 3)": ("hourglass", {"d_z": 96, "d_h": 8, "L": 3}),
        "deep (d_z 190, d_h 5, L 40)": ("hourglass", {"d_z": 190, "d_h": 5, "L": 40}),
        "han (width 64, depth 20)": ("han", {"width": 64, "depth": 20}),
        "han, deep (width 32, depth 40)": ("han", {"width": 32, "depth": 40}),
        "fcnet (width 64, depth 6)": ("fcnet", {"width": 64, "depth": 6}),
    }
    for name, (family_name, config) in shapes.items():
        family = models.get_family(family_name)
        one = alone_ms(config, family)
        for k in ks:
            fused = fused_ms([config] * k, family)
            rows.append(
                {
                    "pack": "identical",
                    "family": family_name,
                    "shape": name,
                    "k": k,
                    "alone_ms": round(one * k, 2),
                    "fused_ms": round(fused, 2),
                    "speedup": round(one * k / fused, 2),
                }
            )
            print(rows[-1], flush=True)
    for k in [k for k in ks if k > 1]:
        configs = [{"d_z": rng.randint(65, 190), "d_h": rng.randint(4, 12), "L": rng.randint(1, 40)} for _ in range(k)]
        alone = sum(alone_ms(c) for c in configs)
        fused = fused_ms(configs)
        rows.append(
            {
                "pack": "different (d_z 65-190, d_h 4-12, L 1-40)",
                "k": k,
                "alone_ms": round(alone, 2),
                "fused_ms": round(fused, 2),
                "speedup": round(alone / fused, 2),
            }
        )
        print(rows[-1], flush=True)
    return rows


def vmap_steps(ks: list[int], repeats: int, threads: int) -> list[dict]:
    """The families without a fused model, fused the generic way: K members of one shape
    through torch.func (stack_module_state, functional_call inside vmap), one step (forward,
    backward, the per-member AdamW step) against K steps alone, on digits classification.
    What it would save decides whether such a family should fuse (issue 62, item 6)."""
    import copy

    import torch
    from torch.func import functional_call, stack_module_state, vmap

    import models
    import tasks
    from tasks.optimizers import StackedAdamW, make_adamw

    torch.set_num_threads(threads)
    io = tasks.get_task("digits-classify").io()
    x1, y1 = torch.randn(64, io.d_in), torch.randint(0, 10, (64,))
    loss = torch.nn.functional.cross_entropy
    rows = []
    shapes = {
        "mixer": {"S": 16, "C": 16, "gamma": 2, "L": 2, "patch": 2},
        "s-mixer": {"S": 16, "C": 16, "L": 2, "patch": 2},
        "rp-mixer": {"S": 16, "C": 16, "gamma": 2, "L": 2, "patch": 2},
        "han": {"width": 64, "depth": 20},  # beside its hand-fused model (`steps`), for comparison
    }
    for name, config in shapes.items():
        family = models.get_family(name)
        model = family.build(config, io)
        opt = make_adamw(list(model.parameters()), 1e-3, 0.0)

        def alone():
            opt.zero_grad(set_to_none=True)
            loss(model(x1), y1).backward()
            opt.step()

        one = _median_ms(alone, repeats)
        for k in ks:
            members = [family.build(config, io, seed=i) for i in range(k)]
            params, buffers = stack_module_state(members)
            names = list(params)
            stacked = [params[n].detach().clone().requires_grad_() for n in names]
            architecture = copy.deepcopy(members[0]).to("meta")

            def call(p, b, x, architecture=architecture, names=names):
                return functional_call(architecture, ({**dict(zip(names, p)), **b}), (x,))

            fused = vmap(call)
            sopt = StackedAdamW(stacked, torch.full((k,), 1e-3), torch.zeros(k), (0.9, 0.999))
            x, y = torch.randn(k, 64, io.d_in), torch.randint(0, 10, (k, 64))

            def step(fused=fused, stacked=stacked, buffers=buffers, sopt=sopt, x=x, y=y, k=k):
                sopt.zero_grad()
                out = fused(tuple(stacked), buffers, x)
                loss(out.flatten(0, 1), y.flatten(), reduction="none").view(k, -1).mean(1).sum().backward()
                sopt.step(torch.ones(k))

            ms = _median_ms(step, repeats)
            rows.append({"family": name, "shape": config, "k": k, "alone_ms": round(one * k, 2),
                         "fused_ms": round(ms, 2), "speedup": round(one * k / ms, 2)})  # fmt: skip
            print(rows[-1], flush=True)
    return rows


def _median_ms(step, repeats: int, n: int = 10) -> float:
    """The median over `repeats` timings of `n` calls of `step`, in ms a call (after one warm-up call)."""
    step()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            step()
        times.append((time.perf_counter() - t) / n * 1000)
    return statistics.median(times)


def profile(k: int, threads: int) -> dict:
    import torch
    from torch.profiler import profile as torch_profile

    import models
    from core.io import IOSpec
    from tasks.optimizers import StackedAdamW

    torch.set_num_threads(threads)
    io = IOSpec(d_in=64, d_out=64, output="image")
    family = models.get_family("hourglass")
    out = {}
    for name, config in {"small": {"d_z": 96, "d_h": 8, "L": 3}, "deep": {"d_z": 190, "d_h": 5, "L": 40}}.items():
        fused = family.fuse([family.build(config, io, seed=i) for i in range(k)], [config] * k, io)
        opt = StackedAdamW(fused.stacked(), torch.full((k,), 1e-3), torch.zeros(k), (0.9, 0.999))
        x = torch.randn(k, 64, 64)

        def step():
            opt.zero_grad()
            (fused(x) - x).square().flatten(1).mean(1).sum().backward()
            opt.step(torch.ones(k))

        for _ in range(3):
            step()
        with torch_profile() as prof:
            for _ in range(10):
                step()
        table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
        print(f"{name} shape {config}, pack of {k}:\n{table}", flush=True)
        total = sum(e.self_cpu_time_total for e in prof.key_averages())
        out[name] = {
            e.key: round(e.self_cpu_time_total / total, 3)
            for e in sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:10]
        }
    return out


# -- searches --------------------------------------------------------------------------------
def run_search(args: list[str], threads: int, folder: Path) -> float:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    t = time.perf_counter()
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "search.cli",
            "run",
            *args,
            "--no-report",
            "--seed-checks",
            "0",  # the trials alone, as this benchmark measures them
            "--storage",
            f"sqlite:///{folder / 'search.db'}",
            "--artifacts",
            str(folder / "weights"),
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"search run {' '.join(args)} failed: {p.stderr.strip()[-500:]}")
    return seconds


def arms_in_turn(arms: dict[str, list[str]], seeds: int, threads: int, base: list[str]) -> dict[str, list[dict]]:
    """Each seed runs every arm, in rotating order; wall seconds and the database per run."""
    out: dict[str, list[dict]] = {a: [] for a in arms}
    names = list(arms)
    root = Path(tempfile.mkdtemp(prefix="fused-"))
    for seed in range(seeds):
        order = names[seed % len(names) :] + names[: seed % len(names)]
        for arm in order:
            folder = root / f"{arm}-{seed}"
            folder.mkdir()
            seconds = run_search([*base, "--seed", str(seed), "--study", "s", *arms[arm]], threads, folder)
            out[arm].append({"seed": seed, "seconds": round(seconds, 1), "db": str(folder / "search.db")})
            print(arm, seed, round(seconds, 1), flush=True)
    return out


def repeats_part(setting: str, seeds: int, threads: int) -> dict:
    arms = {
        "repeats 1": ["--repeats", "1"],
        "repeats 3 fused": ["--repeats", "3"],
        "repeats 3 alone": ["--repeats", "3", "--fuse", "off"],
    }
    runs = arms_in_turn(arms, seeds, threads, SETTINGS[setting])
    med = {a: statistics.median(r["seconds"] for r in rs) for a, rs in runs.items()}
    ratios = {
        a: [round(r["seconds"] / base["seconds"], 3) for r, base in zip(rs, runs["repeats 1"])]
        for a, rs in runs.items()
    }
    from storage import load_trials

    same = [
        same_config_speedup(load_trials("s", f"sqlite:///{a['db']}"), load_trials("s", f"sqlite:///{f['db']}"))
        for a, f in zip(runs["repeats 3 alone"], runs["repeats 3 fused"])
    ]
    pooled = [x for per_seed in same for x in per_seed]
    return {
        "setting": setting,
        "command": SETTINGS[setting],
        "runs": runs,
        "median_s": med,
        "ratio_to_repeats_1": {a: statistics.median(v) for a, v in ratios.items()},
        "ratios": ratios,
        "same_config_alone_over_fused": same,
        "same_config_median": statistics.median(pooled) if pooled else None,
    }


def same_config_speedup(alone_trials, fused_trials) -> list[float]:
    """For each configuration both searches trained to completion (their `load_trials`
    frames): its duration alone over its duration fused (> 1: fusing was faster). Two
    searches of one seed go different ways once timing moves their proposals, so
    whole-command times mix the cost of other trials into the comparison; this compares
    the same trials."""

    def durations(df) -> dict[str, float]:
        done = df[df.status == "complete"]
        return {json.dumps(c, sort_keys=True): s for c, s in zip(done.config, done.duration_s) if s > 0}

    alone, fused = durations(alone_trials), durations(fused_trials)
    return [round(alone[k] / fused[k], 4) for k in sorted(alone.keys() & fused.keys())]


def front_hypervolume(db: str, reference, metric: str, direction: str) -> float:
    import numpy as np

    from core.pareto import hypervolume_2d
    from storage import load_trials

    df = load_trials("s", f"sqlite:///{db}")
    df = df[df.status == "complete"]
    points = np.column_stack([np.log10(df.params.to_numpy(float)), df[metric].to_numpy(float)])
    return float(hypervolume_2d(points, ["minimize", direction], reference))


def pack_part(setting: str, seeds: int, threads: int, k: int) -> dict:
    import numpy as np

    from core.pareto import default_reference
    from storage import load_trials

    arms = {"pack 1": ["--pack", "1"], f"pack {k}": ["--pack", str(k)]}
    runs = arms_in_turn(arms, seeds, threads, SETTINGS[setting])
    metric, direction = "psnr", "maximize"
    shares = []
    for seed in range(seeds):
        frames = [load_trials("s", f"sqlite:///{runs[a][seed]['db']}") for a in arms]
        both = np.concatenate(
            [
                np.column_stack(
                    [
                        np.log10(f[f.status == "complete"].params.to_numpy(float)),
                        f[f.status == "complete"][metric].to_numpy(float),
                    ]
                )
                for f in frames
            ]
        )
        reference = default_reference(both, ["minimize", direction])
        hv = {a: front_hypervolume(runs[a][seed]["db"], reference, metric, direction) for a in arms}
        shares.append(hv[f"pack {k}"] / hv["pack 1"])
    wall = [p["seconds"] / b["seconds"] for p, b in zip(runs[f"pack {k}"], runs["pack 1"])]
    return {
        "setting": setting,
        "k": k,
        "command": SETTINGS[setting],
        "runs": runs,
        "wall_ratio": [round(w, 3) for w in wall],
        "median_wall_ratio": statistics.median(wall),
        "hypervolume_ratio": [round(s, 4) for s in shares],
        "median_hypervolume_ratio": statistics.median(shares),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("part", choices=("steps", "vmap", "repeats", "pack", "profile"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--k", default="1,2,3,4,8,16", help="steps: pack sizes; pack: the K of --pack K")
    ap.add_argument("--repeats", type=int, default=5, help="steps: timings per point (median)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--setting", default="denoise", help=f"comma-separated: {', '.join(SETTINGS)}")
    ap.add_argument("--out", help="write the results as JSON here")
    a = ap.parse_args()
    ks = [int(k) for k in a.k.split(",")]
    result: dict = {"machine": machine(), "threads": a.threads, "date": time.strftime("%Y-%m-%d")}
    if a.part == "steps":
        result["steps"] = step_times(ks, a.repeats, a.threads)
    elif a.part == "vmap":
        result["vmap"] = vmap_steps(ks, a.repeats, a.threads)
    elif a.part == "profile":
        result["profile"] = profile(ks[-1], a.threads)
    elif a.part == "repeats":
        result["repeats"] = [repeats_part(s, a.seeds, a.threads) for s in a.setting.split(",")]
    else:
        result["pack"] = [pack_part(s, a.seeds, a.threads, ks[-1]) for s in a.setting.split(",")]
    text = json.dumps(result, indent=1)
    if a.out:
        Path(a.out).write_text(text)
    print(json.dumps({k: v for k, v in result.items() if k not in ("steps",)}, indent=1)[:4000])


if __name__ == "__main__":
    main()
