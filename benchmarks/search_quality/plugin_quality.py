"""Search quality on a user's own family with known truth (issue 80, item 4a).

A synthetic family registered through the public API (`search.family`, `search.task`):
the funnel MLP of the issue (`num_layers` 1-5 and `max_units` 64-1024 log set the size;
`lr`, `batch_size`, `dropout` and, in the conditional variant, `optimizer` with `momentum`
only for sgd, do not). Its metric is a known function: a concave gain in log10(params)
minus a penalty for each free key away from its optimum, the optimal `lr` moving with the
size (an interaction), every optimum inside its range. So the true front is the gain over
the size dimensions' every configuration within the budget, and a search's hypervolume
share in (log10 params, metric) is exact. Training is instant (one epoch, the metric
computed), so 10 seeds of every peer cost seconds.

Compared at the same number of trained trials (one epoch each): the product's proposer as
`search run` builds it by default (the sampler the study would use: the GP, or tpe-group for
a conditional space), against plain Optuna as a user writes it (define-by-run over the full
ranges, the count computed, a configuration over the budget told PRUNED before training:
benchmarks/search_quality/peer_optuna.py's rule) with TPE, random, GP and NSGA-II.

    python -m benchmarks.search_quality.plugin_quality [--seeds 10] [--trials 40] [--variants plain,conditional] [--peers none] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import optuna
from optuna.trial import TrialState

from core.io import IOSpec
from core.pareto import hypervolume_2d
from search.engine.sampling import Proposal
from search.engine.specs import RunSpec
from search.spaces import parse_condition

optuna.logging.set_verbosity(optuna.logging.WARNING)

IO = IOSpec(64, 10)
BUDGET = 300_000
DIRECTIONS = ["minimize", "maximize"]  # log10 params, metric

SIZE = {"num_layers": {"low": 1, "high": 5}, "max_units": {"low": 64, "high": 1024, "log": True}}
FREE = {
    "lr": {"low": 1e-4, "high": 1e-1, "log": True},
    "batch_size": {"low": 16, "high": 512, "log": True},
    "dropout": {"low": 0.0, "high": 1.0},
}
CONDITIONAL = {"optimizer": ["adam", "sgd"], "momentum": {"low": 0.1, "high": 0.99, "if": "optimizer == 'sgd'"}}
VARIANTS = {"plain": {**SIZE, **FREE}, "conditional": {**SIZE, **FREE, **CONDITIONAL}}


def widths(config: dict[str, Any]) -> list[int]:
    return [max(4, config["max_units"] >> i) for i in range(config["num_layers"])]


def count(config: dict[str, Any], io: IOSpec = IO) -> int:
    sizes = [io.d_in, *widths(config), io.d_out]
    return sum(a * b + b for a, b in zip(sizes, sizes[1:]))


def gain(params: float) -> float:
    """The best metric a model of `params` parameters reaches (every free key at its optimum)."""
    return 10.0 * (1.0 - 10 ** (-(math.log10(params) - 3.0) / 1.5))


def metric(config: dict[str, Any], params: float) -> float:
    """The gain less each free key's penalty: lr's optimum falls with the size (10^-1.5 at
    10^3 parameters, half a decade lower per decade), dropout's rises with it, batch size's
    is 64; with the conditional keys adam costs 0.3 and sgd a penalty around momentum 0.9."""
    s = math.log10(params)
    lr_best = -1.5 - 0.5 * (s - 3.0)
    penalty = 2.0 * (math.log10(config["lr"]) - lr_best) ** 2
    penalty += 4.0 * (config["dropout"] - (0.1 + 0.1 * (s - 3.0))) ** 2
    penalty += 0.1 * (math.log2(config["batch_size"]) - 6.0) ** 2
    if "optimizer" in config:
        penalty += 0.3 if config["optimizer"] == "adam" else 3.0 * (config["momentum"] - 0.9) ** 2
    return gain(params) - penalty


def true_front() -> np.ndarray:
    """(log10 params, best metric) of every size configuration within the budget."""
    points = []
    for layers in range(1, 6):
        for units in range(64, 1025):
            n = count({"num_layers": layers, "max_units": units})
            if n <= BUDGET:
                points.append((math.log10(n), gain(n)))
    return np.array(points)


REFERENCE = np.array([math.log10(BUDGET) + 0.05, 0.0])  # past the budget; a metric below 0 adds nothing


@dataclass(frozen=True)
class Problem:
    """A family with known truth: its space dict, exact count, metric (and per-epoch curve,
    for a table's replay), the budget, the true front's (log10 params, metric) points and
    the hypervolume's reference point."""

    name: str
    table: dict[str, Any]
    count: Callable[[dict[str, Any]], int]
    metric: Callable[[dict[str, Any], int], float]
    front: np.ndarray
    budget: int
    reference: np.ndarray
    curve: Callable[[dict[str, Any], int], list[float]] | None = None  # epoch values; None: one epoch
    epochs: int = 1  # the length of every curve

    @property
    def best(self) -> float:
        return hypervolume_2d(self.front, DIRECTIONS, self.reference)

    def share(self, points: list[tuple[float, float]]) -> float:
        if not points:
            return 0.0
        return hypervolume_2d(np.array(points).reshape(-1, 2), DIRECTIONS, self.reference) / self.best


def synthetic(variant: str) -> Problem:
    return Problem(f"syn-{variant}", VARIANTS[variant], count, metric, true_front(), BUDGET, REFERENCE)


# ---------------------------------------------------------------- the product


def register(problem: Problem) -> str:
    """The problem's family and task through the public API (as a plugin file would): the
    task's training function reports the problem's curve (its metric each epoch)."""
    import search
    from models import FAMILIES

    name = problem.name
    if name in FAMILIES:
        return name

    def train(model, settings, report):
        n = sum(p.numel() for p in model.parameters())
        values = problem.curve(settings.config, n) if problem.curve else [problem.metric(settings.config, n)]
        for epoch, value in enumerate(values, 1):
            report(epoch, {"score": value})
        return {"score": problem.metric(settings.config, n)}

    search.task(
        f"{name}-task", train, metrics={"score": "maximize"}, inputs=IO.d_in, outputs=IO.d_out, epochs=problem.epochs
    )
    register_family(name, problem)
    return name


def register_family(name: str, problem: Problem) -> None:
    """`problem`'s family as `name` through the public API, its default task `name`-task: a
    model of exactly the problem's count of parameters (nothing to train; the task's
    training function reads the problem's metric)."""
    import search

    def build(config, io):
        import torch

        return torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(problem.count(config)))])

    search.family(
        name, space=problem.table, build=build, count=lambda c, io: problem.count(c), default_task=f"{name}-task"
    )


def product(problem: Problem, seed: int, trials: int, sampler: str | None = None) -> list[tuple[float, float]]:
    """(log10 params, metric) of the first `trials` trained proposals of the product's
    proposer for this family (what `search run` builds: prepare, then study_sampler), with
    its default sampler or `--sampler sampler`."""
    from search.engine.prepare import prepare
    from search.engine.study import study_sampler

    name = register(problem)
    spec = RunSpec(
        spaces=(name,), task=f"{name}-task", budget=problem.budget, seed=seed, trials=trials, sampler=sampler
    )
    prep = prepare(spec)
    sampler = study_sampler(prep.spec, prep)
    out: list[tuple[float, float]] = []
    for _ in range(50 * trials):
        if len(out) == trials:
            break
        p = sampler.ask()
        if not isinstance(p, Proposal):
            sampler.reject(p)
            continue
        value = problem.metric(p.config, p.params)
        sampler.tell(p, value, p.params)
        out.append((math.log10(p.params), value))
    return out


def product_sampler(problem: Problem, sampler: str | None = None) -> str:
    """The sampler a study of `problem`'s family searches with (its default, or `sampler` as routed)."""
    from search.engine.prepare import prepare

    name = register(problem)
    return prepare(RunSpec(spaces=(name,), task=f"{name}-task", budget=problem.budget, sampler=sampler)).spec.sampler


# ---------------------------------------------------------------- the peers


def _suggest(trial: optuna.Trial, table: dict[str, Any]) -> dict[str, Any]:
    """Define-by-run over the full declared ranges, a conditional key only where it exists."""
    config: dict[str, Any] = {}
    for key, spec in table.items():
        if isinstance(spec, list):
            config[key] = trial.suggest_categorical(key, spec)
            continue
        if "if" in spec and not parse_condition(key, spec["if"]).holds(config):
            continue
        if isinstance(spec["low"], int) and isinstance(spec["high"], int):
            config[key] = trial.suggest_int(key, spec["low"], spec["high"], log=spec.get("log", False))
        else:
            config[key] = trial.suggest_float(key, spec["low"], spec["high"], log=spec.get("log", False))
    return config


def _startup(trials: int) -> int:
    return min(10, max(2, trials // 4))  # benchmarks/search_quality/peer_optuna.py's


PEERS = {
    "optuna-tpe": lambda seed, trials: optuna.samplers.TPESampler(seed=seed, n_startup_trials=_startup(trials)),
    "optuna-random": lambda seed, trials: optuna.samplers.RandomSampler(seed=seed),
    "optuna-gp": lambda seed, trials: optuna.samplers.GPSampler(
        seed=seed, n_startup_trials=_startup(trials), warn_independent_sampling=False
    ),
    "optuna-nsga2": lambda seed, trials: optuna.samplers.NSGAIISampler(
        seed=seed, population_size=min(50, max(4, trials // 3))
    ),
}


def peer(kind: str, problem: Problem, seed: int, trials: int) -> list[tuple[float, float]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GP's and NSGA-II's experimental warnings: not the measure
        study = optuna.create_study(directions=DIRECTIONS, sampler=PEERS[kind](seed, trials))
    out: list[tuple[float, float]] = []
    for _ in range(50 * trials):
        if len(out) == trials:
            break
        t = study.ask()
        config = _suggest(t, problem.table)
        n = problem.count(config)
        if n > problem.budget:
            study.tell(t, state=TrialState.PRUNED)  # never trained
            continue
        value = problem.metric(config, n)
        study.tell(t, [math.log10(n), value])
        out.append((math.log10(n), value))
    return out


# ---------------------------------------------------------------- the comparison


def compare(
    problems: list[Problem],
    seeds: int,
    trials: int,
    peers: tuple[str, ...] = tuple(PEERS),
    samplers: tuple[str | None, ...] = (None,),
) -> dict[str, Any]:
    """Each problem searched by the product (its default sampler where `samplers` holds None,
    each named sampler besides) and by each peer, `seeds` seeds of `trials` trials."""
    out: dict[str, Any] = {
        "trials": trials,
        "seeds": seeds,
        "machine": f"{platform.processor() or platform.machine()}, {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
        "variants": {},
    }
    for problem in problems:
        rows: dict[str, dict[str, Any]] = {}
        methods = {
            product_label(problem, x): (lambda s, p=problem, x=x: product_each(p, s, trials, x)) for x in samplers
        }
        methods |= {k: lambda s, k=k, p=problem: peer(k, p, s, trials) for k in peers}
        for label, run in methods.items():
            shares, seconds = [], []
            for s in range(seeds):
                t0 = time.perf_counter()
                points = run(s)
                seconds.append(time.perf_counter() - t0)
                shares.append(problem.share(points))
            rows[label] = {
                "median": statistics.median(shares),
                "worst": min(shares),
                "shares": shares,
                "seconds_median": statistics.median(seconds),
            }
            print(
                f"{problem.name:16s} {label:26s} median {rows[label]['median']:.4f} worst {rows[label]['worst']:.4f} "
                f"({rows[label]['seconds_median']:.2f} s a search)",
                file=sys.stderr,
                flush=True,
            )
        out["variants"][problem.name] = rows
    return out


EACH = "default-each"  # --samplers: the default with a GP fit and search for every trial


def product_label(problem: Problem, x: str | None) -> str:
    if x == EACH:
        return f"product ({product_sampler(problem, None)}, a fit a trial)"
    return f"product ({product_sampler(problem, x)}{', default' if x is None else ''})"


def product_each(problem: Problem, seed: int, trials: int, x: str | None) -> list[tuple[float, float]]:
    """The product's search with sampler x (EACH: the default, a GP fit for every trial)."""
    from benchmarks.speed.with_optunas_gp import fit_every_trial

    if x != EACH:
        return product(problem, seed, trials, x)
    with fit_every_trial():
        return product(problem, seed, trials, None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--variants", default="plain,conditional")
    ap.add_argument("--peers", default=",".join(PEERS), help="comma list of peers, or none (the product alone)")
    ap.add_argument("--samplers", default="default", help=SAMPLERS_HELP)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    variants = a.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    peers = tuple(p for p in a.peers.split(",") if p and p != "none")
    if unknown or a.seeds < 1 or a.trials < 2 or any(p not in PEERS for p in peers):
        print(f"error: variants from {', '.join(VARIANTS)}, --seeds >= 1, --trials >= 2", file=sys.stderr)
        return 2
    samplers = product_samplers(a.samplers)
    if samplers is None:
        return 2
    result = compare([synthetic(v) for v in variants], a.seeds, a.trials, peers, samplers)
    return report(result, a.out)


SAMPLERS_HELP = (
    "comma list of the product's --sampler names to run, 'default' for its default, "
    f"'{EACH}' for the default with a GP fit every trial (default: default)"
)


def product_samplers(text: str) -> tuple[str | None, ...] | None:
    """`--samplers`: None for "default", each other name a known --sampler; None (said) if not."""
    from search.engine.sampling import SAMPLERS

    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in ("default", EACH) and n not in SAMPLERS.names()]
    if not names or unknown:
        print(f"error: --samplers from default, {EACH}, {', '.join(SAMPLERS.names())}", file=sys.stderr)
        return None
    return tuple(None if n == "default" else n for n in names)


def report(result: dict[str, Any], out: str | None) -> int:
    """Print a benchmark's result as JSON, and write it to `out` if given; exit status 0."""
    text = json.dumps(result, indent=1)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
