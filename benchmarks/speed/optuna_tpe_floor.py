"""Optuna's own cost per trial, with nothing of ours around it (issue 11 item 5).

A bare Optuna study (in-memory storage) with the shape of section 1's: two objectives
(minimise log10 params, maximise the metric), the family as a categorical enqueued by turns (as
`--share equal`) and per family a size target, three integer widths/depths and a categorical learning rate, the
same TPE settings as `--sampler tpe` (search/engine/sampling/samplers.py). The objective is instant. The
mean ms per trial is the floor that our orchestration overhead sits on.

    OMP_NUM_THREADS=1 python -m benchmarks.speed.optuna_tpe_floor [--trials 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import time

FAMILIES = ["hourglass", "conventional"]


def one(sampler_name: str, trials: int, seed: int) -> float:
    import optuna

    from search.engine.sampling.samplers import _nsga2, _random, _tpe

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    build = {"tpe": _tpe, "random": _random, "nsga2": _nsga2}[sampler_name]
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=build(seed, trials))
    t0 = time.perf_counter()
    for i in range(trials):
        study.enqueue_trial({"family": FAMILIES[i % 2]})  # the families take turns, as `--share equal`
        t = study.ask()
        fam = t.suggest_categorical("family", FAMILIES)
        target = t.suggest_float(f"{fam}.log10_params", 4.0, 7.9)
        L = t.suggest_int(f"{fam}.L", 1, 5)
        d_z = t.suggest_int(f"{fam}.d_z", 64, 4500, log=True)
        d_h = t.suggest_int(f"{fam}.d_h", 4, 2500, log=True)
        lr = t.suggest_categorical(f"{fam}.lr", [1e-4, 5e-4, 1e-3, 5e-3])
        params = 784 * d_z + 2 * L * d_z * d_h + d_z * 784
        metric = 10 + 3 * math.log(d_z * d_h * L) - abs(math.log10(lr) + 3) + 0 * target
        study.tell(t, [math.log10(params), metric])
    return (time.perf_counter() - t0) / trials


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--samplers", default="random,tpe,nsga2")
    a = ap.parse_args()
    import optuna

    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, python "
        f"{platform.python_version()}, optuna {optuna.__version__}, load {os.getloadavg()[0]:.2f}"
    )
    ms = {s: [1000 * one(s, a.trials, r) for r in range(a.rounds)] for s in a.samplers.split(",")}
    print("| sampler | trials | bare Optuna ms per trial (rounds) | median |\n|---|---|---|---|")
    for s, v in ms.items():
        print(f"| {s} | {a.trials} | {' / '.join(f'{x:.1f}' for x in v)} | {statistics.median(v):.1f} |")


if __name__ == "__main__":
    main()
