"""Search efficiency: the share of the best known front each search finds, against trials
and against training compute (issue 11).

For each setting (task, families, budget), every sampler runs `--seeds` studies of
`--trials` trials, and the full paper-style grid runs once. All their complete trials
together make the reference front of the setting; each study's hypervolume in (log10
params, metric), against one reference point, is reported as a fraction of that front's
(reports/efficiency.py on core/pareto.py). Medians over seeds. With the full grid,
each study is also set against `--grid-orders` random orders of the grid cut at the
study's own training work (a random search over the grid, replayed without training:
issue 25's "never worse than random grid points at equal compute").

    python -m benchmarks.search_quality.search_efficiency                 # all settings (hours on 2 CPU cores)
    python -m benchmarks.search_quality.search_efficiency --quick         # the code path in about a minute
    python -m benchmarks.search_quality.search_efficiency --settings hourglass --samplers tpe,random --seeds 5

Peers (issue 30: what a user would pick instead; benchmarks/search_quality/peers.py) are searches too:
optuna-tpe, optuna-nsga2, optuna-gp (plain Optuna) and ax (Ax's Client; the `peers` extra,
pip install -e '.[peers]'). They run through the same study loop and trainer, so only the
search differs:

    python -m benchmarks.search_quality.search_efficiency --settings hourglass-conventional --seeds 3 \
        --samplers tpe,optuna-tpe,optuna-nsga2,optuna-gp,ax --grid-trials 0
    python -m benchmarks.search_quality.search_efficiency --quick --samplers optuna-tpe,optuna-nsga2,optuna-gp,ax

Each trial's training runs in this process (the local executor), one torch thread unless
--threads says otherwise; studies go to a temporary SQLite file (or --storage).

A run longer than a sitting (the peers on classification: hours) takes a tag; the same
command again, after a kill or on another day, reads back the studies it finished and
runs the rest (a study killed midway starts again from its first trial). The finished
studies are listed in OUT.studies.json: give the same --out (a tagged storage without
that file is refused):

    python -m benchmarks.search_quality.search_efficiency --settings classify-han-swmlp --samplers gp+pareto,ax \
        --storage sqlite:///eff.db --out eff.json --tag peers   # again: the same command

`--seeds 5-9` runs seeds 5 to 9 only (studies are named by their seed): held-out seeds
beside a stored run of seeds 0-4, read together by benchmarks/search_quality/against_stored.py
(`--seeds 0-9 --peer-tag TAG`; docs/benchmarks.md §19, "The compute target on ten seeds").
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

import benchmarks.search_quality.peers as peers
from benchmarks.bench_util import Quiet, cpu_name, fail
from core.errors import RejectedInARow, UserError
from core.statuses import CURVE_STATUSES, FINISHED_STATUSES
from core.trials import TrainSettings
from reports.efficiency import (
    fraction_at,
    fraction_curve,
    ks_uniform,
    least_work,
    random_order_fractions,
    random_orders,
    union_hypervolume,
    union_reference,
    work_to_reach,
)
from search.engine.sampling import SAMPLERS
from search.engine.sampling.policies import (
    DEFAULT_CORNERS,
    DEFAULT_REVISIT,
    DEFAULT_SHARE,
    DEFAULT_SIZE_SCALE,
    DEFAULT_SPREAD,
    DEFAULT_START,
)
from search.engine.seed_checks import SEED_CHECK
from search.engine.specs import RunSpec
from search.engine.study import prepare, run_study
from search.spaces import min_params
from storage import Store
from verdicts.points import complete_points

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = str(REPO.parent / "shared" / "data") if (REPO.parent / "shared" / "data").is_dir() else None


@dataclass(frozen=True)
class Setting:
    name: str
    task: str
    families: tuple[str, ...]
    budget: int
    task_options: dict = field(default_factory=dict)


SETTINGS = {
    "hourglass": Setting("hourglass", "digits-denoise", ("hourglass",), 100_000),
    "hourglass-conventional": Setting(
        "hourglass-conventional", "digits-denoise", ("hourglass", "conventional"), 100_000
    ),
    "checkerboard-han": Setting("checkerboard-han", "checkerboard", ("han", "conventional"), 5_000),
    "classify-han-swmlp": Setting("classify-han-swmlp", "digits-classify", ("han", "sw-mlp"), 100_000),
    # one family on another task: issue 25's single-family case (digits super-resolution, 60K)
    "sr-hourglass": Setting("sr-hourglass", "digits-sr", ("hourglass",), 60_000),
    # two families on the task where issue 25 found the hourglass front thin (digits generative classification)
    "genclass-hourglass-conventional": Setting(
        "genclass-hourglass-conventional", "digits-genclass", ("hourglass", "conventional"), 100_000
    ),
}


class Search(NamedTuple):
    """A --samplers entry: a --sampler name with /SPREAD for another --spread, +PRUNER for a
    --pruner (+PRUNER:GRACE with a --prune-grace), @SHARE for another --share, ^CORNERS for
    another --corners, %SCALE for another --size-scale, =START for another --start and ~SCOPE
    for another --sampler-scope, #REVISIT for another --revisit, &DRAW for another --shape-draw,
    e.g. tpe/none, tpe+pareto, tpe+pareto:0.1, tpe@free, gp+pareto^none, gp+pareto%log,
    gp+pareto^last=ramp, tpe+pareto~family, gp+pareto#answer or gp+pareto&modelled ('' where
    not given)."""

    name: str
    spread: str
    pruner: str
    grace: str
    share: str
    corners: str
    scope: str
    size_scale: str
    start: str = ""
    revisit: str = ""
    shape_draw: str = ""

    @classmethod
    def parse(cls, entry: str) -> Search:
        rest, _, shape_draw = entry.partition("&")
        rest, _, revisit = rest.partition("#")
        rest, _, scope = rest.partition("~")
        rest, _, start = rest.partition("=")
        rest, _, size_scale = rest.partition("%")
        rest, _, corners = rest.partition("^")
        rest, _, share = rest.partition("@")
        rest, _, pruner = rest.partition("+")
        pruner, _, grace = pruner.partition(":")
        name, _, spread = rest.partition("/")
        return cls(name, spread, pruner, grace, share, corners, scope, size_scale, start, revisit, shape_draw)


def run(
    store: Store,
    setting: Setting,
    study: str,
    sampler: str,
    seed: int,
    trials: int,
    train: TrainSettings,
    data_dir: str | None,
):
    """One study of the search `sampler` (a --samplers entry, see `Search`)."""
    s = Search.parse(sampler)
    spec = RunSpec(
        spaces=setting.families,
        task=setting.task,
        budget=setting.budget,
        trials=trials,
        sampler=s.name,
        spread=s.spread or DEFAULT_SPREAD,
        share=s.share or DEFAULT_SHARE,
        scope=s.scope or None,
        corners=s.corners or DEFAULT_CORNERS,
        size_scale=s.size_scale or DEFAULT_SIZE_SCALE,
        start=s.start or DEFAULT_START,
        revisit=s.revisit or DEFAULT_REVISIT,
        shape_draw=s.shape_draw or None,
        pruner=s.pruner or "none",
        prune_grace=float(s.grace) if s.grace else None,
        study=study,
        seed=seed,
        train=train,
        task_options=setting.task_options,
        data_dir=data_dir,
        retries=0,
        seed_checks=0,  # the search's own trials: what its efficiency counts
    )
    t0 = time.perf_counter()
    stopped = None
    try:
        run_study(spec, store, Quiet())
    except RejectedInARow as e:  # a search stuck on proposals it may not train (a peer re-proposing an
        # over-budget point): measured on what it trained, and said
        stopped = f"stopped after {store.progress(study)[0]} finished trials: {e}"
        print(f"{study}: {stopped}")
    wall = time.perf_counter() - t0
    return store.get_study(study), study_frame(store, study), wall, stopped


def study_frame(store: Store, study: str):
    """The study's trials, with the epochs each trained (all its runs): with params, a
    load-independent measure of training work beside the summed seconds, which a shared
    machine's load inflates. A study's seed checks (another seed of trials already there,
    after its search: search/engine/seed_checks.py) are not its search's trials: left out."""
    frame = store.trials_frame(study)
    frame = frame[~frame["note"].fillna("").str.contains(SEED_CHECK, regex=False)].reset_index(drop=True)
    frame["epochs_trained"] = [
        len(store.epochs(study, int(n))) if st in CURVE_STATUSES else 0
        for n, st in zip(frame["number"], frame["status"])
    ]
    return frame


class Ledger:
    """The studies a tagged run (--tag) has finished, with what the store does not keep:
    each study's wall seconds and why it stopped early (None when it did not). A JSON file
    written after every study, so a killed benchmark loses at most the study it was in.
    `stored`: the names of the studies the storage held when this run began (read once)."""

    def __init__(self, path: Path, stored: set[str]) -> None:
        self.path, self.stored = path, stored
        self.done: dict[str, list] = json.loads(path.read_text()) if path.exists() else {}

    def add(self, study: str, wall: float, stopped: str | None) -> None:
        self.done[study] = [wall, stopped]
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.done, indent=1))
        tmp.replace(self.path)


def run_or_read(store: Store, ledger: Ledger | None, study: str, *args):
    """run(store, setting, study, *args), or, under --tag, the study read back when an
    earlier run of the same tag finished it. A study the ledger does not hold but the
    store does was killed midway: it is deleted and run again from its start, so every
    study reported is one uninterrupted run (the peers keep no state to resume from)."""
    if ledger is not None and study in ledger.done:
        wall, stopped = ledger.done[study]
        print(f"{study}: read back (finished in an earlier run of this tag)", flush=True)
        return store.get_study(study), study_frame(store, study), wall, stopped
    if ledger is not None and study in ledger.stored:
        print(f"{study}: killed midway in an earlier run; started again", flush=True)
        store.delete_study(study)
    out = run(store, args[0], study, *args[1:])
    if ledger is not None:
        ledger.add(study, out[2], out[3])
    finished = int(out[1]["status"].isin(FINISHED_STATUSES).sum())
    print(f"{study}: {finished} finished trials, {out[2]:.0f} s", flush=True)  # progress on hours of studies
    return out


def check_searches(names: list[str]) -> None:
    """UserError for an unknown search (the name of a `Search` entry) or a peer whose package
    is missing, before anything trains."""
    for name in names:
        base = Search.parse(name).name
        SAMPLERS.get(base)
        peers.check_available(base)


def parameter_epochs(frame) -> float:
    """Sum over a study's trials of params x epochs trained: training work, for MLP-like
    models proportional to the FLOPs on a fixed dataset, free of the machine's load."""
    return float(sum(trial_work(frame).values()))


def trial_seconds(frame) -> dict[int, float]:
    """Trial number -> the seconds its training took (`duration_s`; 0 for a trial never
    trained): compute as it costs on this machine, beside `trial_work`."""
    return {int(n): float(s) for n, s in zip(frame["number"], frame["duration_s"].fillna(0.0))}


def trial_work(frame) -> dict[int, float]:
    """Trial number -> params x epochs trained (0 for a trial never trained)."""
    return {int(n): float(w) for n, w in zip(frame["number"], (frame["params"] * frame["epochs_trained"]).fillna(0.0))}


def seed_list(text: str) -> list[int]:
    """--seeds: N (seeds 0 .. N-1) or A-B (seeds A .. B, both included: held-out seeds of a
    run whose first seeds are stored, e.g. 5-9 beside a stored 5-seed run). UserError for
    anything else, before anything trains."""
    try:
        if "-" in text:
            lo, hi = (int(x) for x in text.split("-", 1))
            if 0 <= lo <= hi:
                return list(range(lo, hi + 1))
        elif int(text) >= 1:
            return list(range(int(text)))
    except ValueError:
        pass
    raise UserError(f"--seeds {text!r}: a count N (seeds 0 .. N-1) or a range A-B with 0 <= A <= B (e.g. 5-9)")


def seed_ratios(values: list[float], base: list[float]) -> list[float]:
    """values[i] / base[i], seed by seed: a search's figures against its base search's
    (a seed whose base figure is not positive has no ratio)."""
    return [v / b for v, b in zip(values, base) if b > 0]


def best_peer(summary: dict, searches) -> str | None:
    """The peer (benchmarks/search_quality/peers.py) among `searches` with the best median fraction in
    `summary` (issue 30's compute target is that peer's 40-trial front); None if none ran."""
    in_run = [x for x in searches if x in peers.PEERS]
    return max(in_run, key=lambda x: statistics.median(summary[x]["fractions"])) if in_run else None


def work_table(
    searches: list[str], runs: list, summary: dict, curves: dict, frames: list, record, ref, best: float
) -> None:
    """Training work in parameter-epochs (load-free), printed and added to `summary`: each
    search's work; with hindsight, the least work of a set of the setting's known complete
    trials (every search's and the grid's) that reaches each study's fraction, as a share
    of the study's work (`least_work`); and, when peers ran, the work each study had spent
    when it first reached the best peer's 40-trial fraction on that seed, as a share of
    that peer study's work (issue 30's compute target: at most a quarter)."""
    dirs = ["minimize", record.direction]
    pts, costs, seconds = [], [], []
    for df in frames:
        cp, w, sec = complete_points(df, record.metric), trial_work(df), trial_seconds(df)
        pts += list(zip(np.log10(cp["params"].to_numpy(dtype=float)), cp["value"].to_numpy(dtype=float)))
        costs += [w[int(n)] for n in cp["number"]]
        seconds += [sec[int(n)] for n in cp["number"]]
    pts = np.asarray(pts, dtype=float).reshape(-1, 2)
    peer = best_peer(summary, searches)
    head = (
        "| search | median work (M parameter-epochs) | least work for its fraction with hindsight, share of its "
        "work: median (min .. max) | the same in training seconds: median (min .. max) |"
    )
    if peer:
        head += f" work to reach {peer}'s fraction (the best peer), share of {peer}'s work: by seed (median) |"
    print("\n" + head + "\n|---|---|---|---|" + ("---|" if peer else ""))
    for x in searches:
        mine = [r for r in runs if r[0] == x]
        own = summary[x]["parameter_epochs"]
        least = [least_work(pts, costs, dirs, ref, f * best) for f in summary[x]["fractions"]]
        share = [lw / w if w > 0 else math.nan for lw, w in zip(least, own)]
        # the same in seconds: a deep, narrow trial costs more per parameter than a shallow one (issue 62)
        own_s = [sum(trial_seconds(r[3]).values()) for r in mine]
        least_s = [least_work(pts, seconds, dirs, ref, f * best) for f in summary[x]["fractions"]]
        share_s = [ls / s if s > 0 else math.nan for ls, s in zip(least_s, own_s)]
        summary[x] |= {
            "least_work": least,
            "least_work_share": share,  # finite: each fraction is one the trials reached
            "least_seconds": least_s,
            "least_seconds_share": share_s,
        }
        row = (
            f"| {x} | {statistics.median(own) / 1e6:.1f} | {statistics.median(share):.3f} "
            f"({min(share):.3f} .. {max(share):.3f}) | {statistics.median(share_s):.3f} "
            f"({min(share_s):.3f} .. {max(share_s):.3f}) |"
        )
        if peer:
            reach = []
            for r, curve, goal, pw in zip(
                mine, curves[x], summary[peer]["fractions"], summary[peer]["parameter_epochs"]
            ):
                reach.append(work_to_reach(curve, trial_work(r[3]), goal) / pw if pw > 0 else math.nan)
            summary[x]["peer_reach_share"] = [None if v == math.inf else v for v in reach]  # None: never
            row += (
                " "
                + " / ".join("never" if v == math.inf else f"{v:.2f}" for v in reach)
                + f" (median {'never' if statistics.median(reach) == math.inf else f'{statistics.median(reach):.2f}'}) |"
            )
        print(row)


def grid_orders_table(
    searches: list[str], summary: dict, grid_frame, record, ref, best: float, orders: int, trials: int
) -> None:
    """Issue 25's third target, printed and added to `summary`: each study against random
    points of the full grid at equal training work. Every grid point is trained, so a
    random order of the grid is a random search at no cost: `orders` seeded orders, each
    cut at the study's own work (`random_order_fractions`); per seed, the median of
    the orders' fractions and the share of orders ahead of the study."""
    done = grid_frame[grid_frame["status"].astype(str).isin(FINISHED_STATUSES)]
    perms = random_orders(len(done), orders, seed=0)
    work = trial_work(grid_frame)
    at_trials = random_order_fractions(
        done, record.metric, record.direction, ref, best, {int(n): 1.0 for n in done["number"]}, [trials], perms
    )[0]
    summary["full grid"]["random_orders"] = {"orders": orders, f"at_{trials}_trials": at_trials.tolist()}
    print(
        f"\n{orders} random orders of the full grid, {trials} points each: median {np.median(at_trials):.3f} "
        f"(5-95%: {np.percentile(at_trials, 5):.3f} .. {np.percentile(at_trials, 95):.3f})"
    )
    print(
        "| search | fraction by seed | random grid points at the study's work: median by seed | "
        "share of the orders ahead of the study, by seed |\n|---|---|---|---|"
    )
    for x in searches:
        got = random_order_fractions(
            done, record.metric, record.direction, ref, best, work, summary[x]["parameter_epochs"], perms
        )
        mine = summary[x]["fractions"]
        medians = [float(np.median(row)) for row in got]
        ahead = [float(np.mean(row > f + 1e-12)) for row, f in zip(got, mine)]
        summary[x] |= {"grid_orders_at_work": medians, "grid_orders_ahead": ahead}
        print(
            f"| {x} | {' / '.join(f'{f:.3f}' for f in mine)} | {' / '.join(f'{m:.3f}' for m in medians)} | "
            f"{' / '.join(f'{v:.2f}' for v in ahead)} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="one setting, one seed, tiny trials; the product's searches unless --samplers",
    )
    ap.add_argument("--settings", default=",".join(SETTINGS), help=f"comma list of {', '.join(SETTINGS)}")
    ap.add_argument(
        "--samplers",
        help="comma list of --sampler names or peers (default gp+pareto (the product's default search),tpe,tpe/none,random,nsga2,grid; "
        f"peers: {', '.join(peers.PEERS)}); NAME/none runs NAME with --spread none, "
        "NAME+pareto with --pruner pareto (NAME+pareto:0.1 with --prune-grace 0.1), "
        "NAME@free with --share free, NAME^none with --corners none, NAME%%log with --size-scale log, NAME=ramp with --start ramp, NAME~family with --sampler-scope family, NAME#answer with --revisit answer, NAME&modelled with --shape-draw modelled",
    )
    ap.add_argument(
        "--seeds",
        help="N: seeds 0 .. N-1 (default 5; --quick: 1); A-B: seeds A .. B (e.g. 5-9: "
        "held-out seeds beside a stored run of seeds 0-4)",
    )
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--grid-trials", type=int, default=10_000, help="cap on the full grid's trials")
    ap.add_argument(
        "--grid-orders",
        type=int,
        default=1000,
        help="random orders of the full grid to set each study against at its own work (issue 25's "
        "third target; no training; 0: none)",
    )
    ap.add_argument("--epochs", type=int, help="epochs per trial (default: the task's)")
    ap.add_argument("--max-train-samples", type=int)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--data-dir",
        default=SHARED_DATA,
        help="default: ../shared/data when it is there, else the search order (cache, download)",
    )
    ap.add_argument("--storage", help="SQLAlchemy URL (default: a temporary SQLite file)")
    ap.add_argument("--out", help="write the curves and the summary as JSON here")
    ap.add_argument(
        "--tag",
        help="name the studies by TAG, not by the clock; with --storage and --out, running "
        "the same command again reads back every study an earlier run of TAG finished "
        "(its trials from --storage, its wall seconds from OUT.studies.json) and runs "
        "the rest (hours of peers, over several runs)",
    )
    a = ap.parse_args()
    if a.quick:  # an explicit --samplers (e.g. the peers) is kept
        a.settings, a.trials, a.grid_trials = "hourglass-conventional", 4, 8
        a.seeds = a.seeds or "1"  # an explicit --seeds is kept (held-out seeds, tested in seconds)
        a.samplers = a.samplers or "gp+pareto,tpe,tpe/none,tpe@free,tpe+pareto,tpe+rungs,grid"
        a.epochs, a.max_train_samples = a.epochs or 1, a.max_train_samples or 256
    a.samplers = a.samplers or "gp+pareto,tpe,tpe/none,random,nsga2,grid"
    a.seeds = a.seeds or "5"
    peers.register()
    try:
        check_searches(a.samplers.split(","))
        seeds = seed_list(a.seeds)
        unknown = [k for k in a.settings.split(",") if k not in SETTINGS]
        if unknown:
            raise UserError(f"unknown setting {unknown[0]!r}; known: {', '.join(SETTINGS)}")
        if a.grid_orders < 0:
            raise UserError(f"--grid-orders must be at least 0, got {a.grid_orders}")
        if a.tag is not None and not (a.storage and a.out):
            raise UserError(
                "--tag needs --storage (where the studies are kept) and --out (beside it, "
                "OUT.studies.json: which studies finished)"
            )
        if a.tag is not None and not a.tag.replace("-", "").replace("_", "").isalnum():
            raise UserError(f"--tag {a.tag!r}: letters, digits, '-' and '_' only")
    except UserError as e:
        fail(str(e))
    import torch

    torch.set_num_threads(a.threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    train = TrainSettings(epochs=a.epochs, max_train_samples=a.max_train_samples)
    tmp = tempfile.TemporaryDirectory()
    store = Store(a.storage or f"sqlite:///{tmp.name}/efficiency.db")
    tag = a.tag or time.strftime("%Y%m%d-%H%M%S")
    ledger = Ledger(Path(a.out + ".studies.json"), {s.name for s in store.list_studies()}) if a.tag else None
    if ledger is not None:  # before anything trains: the ledger and the storage must be of one run
        lost = sorted(name for name in ledger.done if name not in ledger.stored)
        if lost:
            fail(
                f"--tag {a.tag}: {ledger.path} lists {len(lost)} finished studies that {a.storage} does not hold "
                f"(e.g. {lost[0]}); give the --storage of that run, or another --tag"
            )
        tagged = sorted(name for name in ledger.stored if name.startswith(f"eff-{a.tag}-"))
        if tagged and not ledger.path.exists():  # another --out: every study would look killed midway and rerun
            fail(
                f"--tag {a.tag}: {a.storage} holds {len(tagged)} studies of this tag (e.g. {tagged[0]}) but there "
                f"is no {ledger.path}; give the --out of the run that made them, or another --tag"
            )
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs, torch {torch.__version__}, {a.threads} thread(s)")
    report = {"settings": {}, "trials": a.trials, "seeds": len(seeds), "seed_ids": seeds, "epochs": a.epochs}
    for key in a.settings.split(","):
        setting = SETTINGS[key]
        prep = prepare(
            RunSpec(
                spaces=setting.families, task=setting.task, budget=setting.budget, task_options=setting.task_options
            )
        )
        spaces, io, count = prep.spaces, prep.io, prep.count
        runs = []  # (sampler, seed, record, frame, wall_s, why it stopped early or None)
        for seed in seeds:  # seed-major: every search sees the same drift of a shared machine
            for sampler in a.samplers.split(","):
                study = f"eff-{tag}-{key}-{sampler}-{seed}"
                runs.append(
                    (
                        sampler,
                        seed,
                        *run_or_read(store, ledger, study, setting, sampler, seed, a.trials, train, a.data_dir),
                    )
                )
        grid = (
            run_or_read(
                store, ledger, f"eff-{tag}-{key}-fullgrid", setting, "grid", 0, a.grid_trials, train, a.data_dir
            )
            if a.grid_trials
            else None
        )  # --grid-trials 0: no full grid (e.g. a pruner-only comparison)
        record = grid[0] if grid else runs[0][2]
        frames = [r[3] for r in runs] + ([grid[1]] if grid else [])
        ref = union_reference(frames, record.metric, record.direction)
        best = union_hypervolume(frames, record.metric, record.direction, ref)
        summary, curves = {}, {}
        print(f"\n## {key}: {setting.task}, {', '.join(setting.families)}, budget {setting.budget:,}")
        if grid:
            grid_curve = fraction_curve(grid[1], record.metric, record.direction, ref, best)
            summary["full grid"] = {
                "trials": int(grid_curve["trials"].iloc[-1]),
                "fraction": float(grid_curve["fraction"].iloc[-1]),
                "compute_s": float(grid_curve["compute_s"].iloc[-1]),
            }
            curves["full grid"] = grid_curve.to_dict("list")
            print(
                f"full grid: {summary['full grid']['trials']} trials, fraction {summary['full grid']['fraction']:.3f}, "
                f"{summary['full grid']['compute_s']:.0f} s of training\n"
            )
        grid_fraction = summary["full grid"]["fraction"] if grid else math.nan
        fams = list(setting.families) if len(setting.families) > 1 else []
        fam_ref = {}  # family -> (reference point, best hypervolume) of that family's trials of every search
        for f in fams:
            mine_f = [df[df["family"] == f] for df in frames]
            fam_ref[f] = (
                r := union_reference(mine_f, record.metric, record.direction),
                union_hypervolume(mine_f, record.metric, record.direction, r),
            )

        def family_fraction(df, f):  # the study's front of family f, as a fraction of f's best known front
            part = df[df["family"] == f]
            c = fraction_curve(part, record.metric, record.direction, *fam_ref[f]) if len(part) else None
            return float(c["fraction"].iloc[-1]) if c is not None and len(c) else 0.0

        if grid and fams:
            summary["full grid"]["family_fractions"] = {f: family_fraction(grid[1], f) for f in fams}
            print(
                "full grid, each family's fraction: "
                + ", ".join(f"{f} {v:.3f}" for f, v in summary["full grid"]["family_fractions"].items())
                + "\n"
            )
        lo = {f: math.log10(min_params(sp, io, lambda c, f=f: count(f, c))) for f, sp in spaces.items()}
        hi = math.log10(setting.budget)
        vs_grid = bool(grid and fams)  # each family's front against the full grid's front of that family
        print(
            "| search | trials | median fraction | min .. max | median vs full grid | median training s "
            "| median KS of log params |"
            + (" worst family's fraction: median (min) |" if fams else "")
            + (" worst family vs its grid front: median (min) |" if vs_grid else "")
            + "\n|---|---|---|---|---|---|---|"
            + ("---|" if fams else "")
            + ("---|" if vs_grid else "")
        )
        for sampler in a.samplers.split(","):
            mine = [r for r in runs if r[0] == sampler]
            cs = [fraction_curve(r[3], record.metric, record.direction, ref, best) for r in mine]
            fr = [fraction_at(c, trials=a.trials) for c in cs]
            secs = [float(c["compute_s"].iloc[-1]) if len(c) else 0.0 for c in cs]
            ks = [
                statistics.mean(
                    ks_uniform([math.log10(n) for n in df.loc[df["family"] == f, "params"]], lo[f], hi)
                    for f in lo
                    if (df["family"] == f).any()
                )
                for df in (r[3][r[3]["status"] == "complete"] for r in mine)
            ]
            summary[sampler] = {
                "fractions": fr,
                "median": statistics.median(fr),
                "compute_s": secs,
                "ks": ks,
                "parameter_epochs": [parameter_epochs(r[3]) for r in mine],
                # the whole study's seconds (proposals too) and its proposals never trained
                "wall_s": [r[4] for r in mine],
                "rejected": [int((r[3]["status"] == "rejected").sum()) for r in mine],
                "stopped_early": [r[5] for r in mine],
            }  # None, or why the study ended early
            worst = ""
            if fams:  # each family's own front (the reports draw one per family)
                per = {f: [family_fraction(r[3], f) for r in mine] for f in fams}
                low = [min(v) for v in zip(*per.values())]
                summary[sampler] |= {
                    "family_fractions": per,
                    "worst_family": low,
                    "family_trials": {f: [int((r[3]["family"] == f).sum()) for r in mine] for f in fams},
                }
                worst = f" {statistics.median(low):.3f} ({min(low):.3f}) |"
                if vs_grid:  # issue 25 item 2: a family's front found in a shared study, against its own grid's
                    own = summary["full grid"]["family_fractions"]
                    per_grid = {f: [v / own[f] if own[f] > 0 else math.nan for v in per[f]] for f in fams}
                    low_grid = [min(v) for v in zip(*per_grid.values())]
                    summary[sampler] |= {"family_vs_grid": per_grid, "worst_family_vs_grid": low_grid}
                    worst += f" {statistics.median(low_grid):.3f} ({min(low_grid):.3f}) |"
            curves[sampler] = [c.to_dict("list") for c in cs]
            print(
                f"| {sampler} | {a.trials} | {statistics.median(fr):.3f} | {min(fr):.3f} .. {max(fr):.3f} | "
                f"{statistics.median(fr) / grid_fraction:.3f} | {statistics.median(secs):.0f} | "
                f"{statistics.median(ks):.2f} |{worst}"
            )
        print(
            "\n| search | median wall s (proposing + training) | median proposals rejected before training |"
            "\n|---|---|---|"
        )
        for sampler in a.samplers.split(","):
            print(
                f"| {sampler} | {statistics.median(summary[sampler]['wall_s']):.0f} | "
                f"{statistics.median(summary[sampler]['rejected']):g} |"
            )
        work_table(a.samplers.split(","), runs, summary, curves, frames, record, ref, best)
        if grid and a.grid_orders > 0:
            grid_orders_table(a.samplers.split(","), summary, grid[1], record, ref, best, a.grid_orders, a.trials)
        pruned = [x for x in a.samplers.split(",") if "+" in x and x.split("+")[0] in summary]
        if pruned:
            print(
                "\n| pruned search | vs | median hypervolume ratio | median compute ratio (seconds) "
                "| median work ratio (parameter-epochs) | pruned trials |\n|---|---|---|---|---|---|"
            )
        for x in pruned:  # each pruned search against its unpruned twin, seed by seed
            base = summary[x.split("+")[0]]
            hv = seed_ratios(summary[x]["fractions"], base["fractions"])
            cost = seed_ratios(summary[x]["compute_s"], base["compute_s"])
            n_pruned = [int((r[3]["status"] == "pruned").sum()) for r in runs if r[0] == x]
            work = seed_ratios(summary[x]["parameter_epochs"], base["parameter_epochs"])
            summary[x] |= {"hypervolume_ratio": hv, "compute_ratio": cost, "work_ratio": work, "pruned": n_pruned}
            print(
                f"| {x} | {x.split('+')[0]} | {statistics.median(hv):.3f} | {statistics.median(cost):.3f} | "
                f"{statistics.median(work):.3f} | median {statistics.median(n_pruned):g} of {a.trials} |"
            )
        report["settings"][key] = {
            "summary": summary,
            "curves": curves,
            "reference": [float(x) for x in ref],
            "best_hypervolume": best,
        }
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=1))
        print(f"\ncurves and summary: {a.out}")
    store.close()
    tmp.cleanup()


if __name__ == "__main__":
    main()
