"""The product's cost per trial on instant trials, against bare Optuna (issue 80, item 3).

A user's family and training-function task (benchmarks/search_quality/plugin_quality.py's synthetic
funnel: the model is built, the metric computed, no training) searched for `--trials`
trials: the product's `search.run` with its defaults (its sampler, seed checks, storage in a
new SQLite file, pages), with `sampler="auto"` (the GP where it costs little beside the
trials) and with `sampler="tpe"`, against bare Optuna as a user writes it:
an objective that builds the same model and computes the same metric, a multi-objective
study on the same SQLite storage (RDBStorage), TPE or GP. Wall time per search, 5 seeds,
medians; the product's share of time outside its trials as its summary line says it.

    python -m benchmarks.speed.plugin_overhead [--seeds 5] [--trials 40] [--arms A,B] [--out FILE.json]

The arm "product with Optuna's GP" is the default search with its GP's proposals made by
Optuna's own GPSampler, as before search/engine/sampling/gp_sampler.py; "product fit each
trial" the default with a GP fit and acquisition search for every trial (never two trials
from one fit), as before 2026-12-07.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import platform
import re
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import optuna
from optuna.trial import TrialState

import benchmarks.search_quality.plugin_quality as q
from benchmarks.bench_util import cpu_name
from benchmarks.speed.with_optunas_gp import fit_every_trial, optunas_gp
from core.cpus import usable_cpus

optuna.logging.set_verbosity(optuna.logging.WARNING)


def product(seed: int, trials: int, folder: Path, arm: str = "default", **options) -> tuple[float, float]:
    """(wall seconds, share outside the trials as the summary line says) of one search, in
    a new SQLite file of its `arm` and seed."""
    import search

    name = q.register(q.synthetic("plain"))
    folder.mkdir(parents=True, exist_ok=True)
    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        search.run(
            space=name,
            budget=q.BUDGET,
            trials=trials,
            seed=seed,
            storage=str(folder / f"p{seed}-{re.sub('[^a-z]+', '-', arm.lower())}.db"),
            study=f"s{seed}",
            **options,
        )
    wall = time.perf_counter() - t0
    m = re.search(r"([0-9]+)% of it outside the trials", out.getvalue())
    return wall, (int(m.group(1)) / 100 if m else math.nan)


def bare(kind: str, seed: int, trials: int, folder: Path) -> float:
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    storage = f"sqlite:///{folder / f'b{kind}{seed}.db'}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sampler = (
            optuna.samplers.TPESampler(seed=seed, n_startup_trials=10)
            if kind == "tpe"
            else optuna.samplers.GPSampler(seed=seed, n_startup_trials=10)
        )
    t0 = time.perf_counter()
    study = optuna.create_study(directions=q.DIRECTIONS, sampler=sampler, storage=storage, study_name="bare")
    done = 0
    while done < trials:
        t = study.ask()
        config = q._suggest(t, q.VARIANTS["plain"])
        n = q.count(config)
        if n > q.BUDGET:
            study.tell(t, state=TrialState.PRUNED)
            continue
        model = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(n))])
        value = q.metric(config, sum(p.numel() for p in model.parameters()))
        study.tell(t, [math.log10(n), value])
        done += 1
    return time.perf_counter() - t0


OPTUNAS_GP = "product with Optuna's GP"  # the default before gp_sampler.py, side by side
EACH = "product fit each trial"  # the default's GP never proposing two trials from one fit
PRODUCTS = {
    "product": {},
    EACH: {},
    OPTUNAS_GP: {},
    "product auto": {"sampler": "auto"},
    "product tpe": {"sampler": "tpe"},
}
ARMS = [*PRODUCTS, "optuna tpe", "optuna gp"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {', '.join(ARMS)}")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    arms = [x.strip() for x in a.arms.split(",") if x.strip()]
    if a.seeds < 1 or a.trials < 12 or not arms or set(arms) - set(ARMS):
        print(f"error: --seeds >= 1, --trials >= 12, --arms of {', '.join(ARMS)}", file=sys.stderr)
        return 2
    products = {k: v for k, v in PRODUCTS.items() if k in arms}
    rows: dict[str, list[float]] = {k: [] for k in ARMS if k in arms}
    outside: dict[str, list[float]] = {k: [] for k in products}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        product(0, 12, folder / "warm", sampler="tpe")  # imports and first registrations, not timed
        bare("tpe", 0, 12, folder / "warm")
        for seed in range(a.seeds):  # side by side, seed by seed
            for label, options in products.items():
                path = {OPTUNAS_GP: optunas_gp, EACH: fit_every_trial}.get(label, contextlib.nullcontext)()
                with path:
                    wall, share = product(seed, a.trials, folder, label, **options)
                rows[label].append(wall)
                outside[label].append(share)
            for kind in ("tpe", "gp"):
                if f"optuna {kind}" in rows:
                    rows[f"optuna {kind}"].append(bare(kind, seed, a.trials, folder))
            print(f"seed {seed}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in rows.items()), file=sys.stderr)
    medians = {k: statistics.median(v) for k, v in rows.items()}
    result = {
        "trials": a.trials,
        "seeds": a.seeds,
        "machine": f"{cpu_name()}, {usable_cpus()} usable cores, Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
        "wall_s": rows,
        "median_wall_s": medians,
        "outside_share_median": {k: statistics.median(v) for k, v in outside.items()},
        "ratio_to_optuna_tpe": (
            {k: v / medians["optuna tpe"] for k, v in medians.items()} if "optuna tpe" in medians else {}
        ),
        "ratio_to_first_arm": {k: v / medians[arms[0]] for k, v in medians.items()},
    }
    return q.report(result, a.out)


if __name__ == "__main__":
    sys.exit(main())
