"""Do the two shape draws start alike? (issue 30, docs/benchmarks.md §19)

`--shape-draw modelled` draws each width and depth as a position in its range, `random`
as the value itself; during a sampler's random start both should propose from one
distribution, so any difference in a study's first trials is the seed's. This script
checks both halves of that, on one efficiency setting's task, families and budget:

- proposals: `--proposals N` studies per draw (seeds 0..N-1) whose first `--first`
  trials are answered instantly (no training), and a two-sample KS test per family and
  column (params, L, d_z, d_h, lr) between the draws' pooled proposals;
- trained: `--trained N` studies per draw whose first `--first` trials are trained as
  the efficiency benchmark trains them, and each study's hypervolume after them (log10
  params down, the metric up, one reference for all), paired by seed: how often each
  draw is ahead, and Wilcoxon's signed-rank test.

    python -m benchmarks.search_quality.start_draws --setting hourglass-conventional --proposals 40 --trained 25 \
        --search-flags="--start ramp --corners last" --storage sqlite:///draws.db --json draws.json

Studies are built for `--trials` (40, the benchmark's; the random start's length depends
on it) and stopped after `--first`; a trained study already in `--storage` is read back.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import statistics
import tempfile
import warnings

import numpy as np
import pandas as pd

from benchmarks.bench_util import Quiet, fail
from benchmarks.search_quality.search_efficiency import SETTINGS, SHARED_DATA
from core.trials import EpochRecord, RunResult, TrainSettings, TrialResult
from reports.efficiency import union_hypervolume, union_reference
from search.engine.specs import RunSpec
from search.engine.study import run_study
from search.executors import EXECUTORS
from search.executors.local import LocalExecutor
from storage import Store
from tasks.by_name import get_task

DRAWS = ("modelled", "random")
COLUMNS = ("params", "L", "d_z", "d_h", "lr")
FLAGS = {
    "--start": "start",
    "--corners": "corners",
    "--revisit": "revisit",
    "--pruner": "pruner",
    "--size-scale": "size_scale",
    "--sampler": "sampler",
}


class Stop(BaseException):
    """Raised by the executors below at trial `first`: the study stops there."""


def stopping(base: type, first: int, instant: bool) -> type:
    """An executor class that trains (or, `instant`, answers at once) trials 0..first-1
    and stops the study at trial `first`."""

    class Stopping(base):
        def run(self, spec):
            if spec.number >= first:
                raise Stop()
            if not instant:
                return super().run(spec)
            name = get_task(spec.task, spec.task_options).metric
            value = 0.5 + 0.001 * spec.number  # proposals in a random start never read it
            epochs = [EpochRecord(e, 1.0 / e, {name: value}, 0.0) for e in (1, 2)]
            runs = [RunResult(s, "complete", {name: value, f"val_{name}": value}, 2, epochs, 0.0) for s in spec.seeds]
            return TrialResult(spec.number, "complete", runs, 0.0, "cpu")

    return Stopping


def parse_flags(text: str) -> dict:
    """`--start ramp --corners last` -> RunSpec keywords (only the flags in FLAGS)."""
    words, out = shlex.split(text), {}
    if len(words) % 2:
        fail(f"--search-flags takes flag-value pairs, got {text!r}")
    for flag, value in zip(words[::2], words[1::2]):
        if flag not in FLAGS:
            fail(f"--search-flags knows {', '.join(FLAGS)}, not {flag}")
        out[FLAGS[flag]] = value
    return out


def one(
    store: Store,
    setting,
    name: str,
    seed: int,
    draw: str,
    trials: int,
    executor: str,
    flags: dict,
    data_dir: str | None,
):
    spec = RunSpec(
        spaces=setting.families,
        task=setting.task,
        budget=setting.budget,
        trials=trials,
        executor=executor,
        study=name,
        seed_checks=0,  # the trials alone
        seed=seed,
        shape_draw=draw,
        train=TrainSettings(),
        task_options=setting.task_options,
        data_dir=data_dir,
        retries=0,
        **flags,
    )
    try:
        run_study(spec, store, Quiet())
    except Stop:
        pass


def first_trials(store: Store, name: str, first: int):
    frame = store.trials_frame(name)
    frame = frame[frame["number"] < first].copy()
    frame["lr"] = [c.get("lr") if isinstance(c, dict) else None for c in frame["config"]]
    return frame


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--setting", default="hourglass-conventional", help=f"one of {', '.join(SETTINGS)}")
    ap.add_argument("--search-flags", default="", help='flags of both searches, e.g. "--start ramp --corners last"')
    ap.add_argument("--trials", type=int, default=40, help="the trials the studies are built for (default 40)")
    ap.add_argument("--first", type=int, default=10, help="trials run before each study stops (default 10)")
    ap.add_argument("--proposals", type=int, default=40, help="untrained studies per draw (0: none)")
    ap.add_argument("--trained", type=int, default=0, help="trained studies per draw (seeds 0..N-1)")
    ap.add_argument("--storage", help="where the trained studies are kept and read back (default: a temporary file)")
    ap.add_argument("--data-dir", default=SHARED_DATA)
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args(argv)
    if a.setting not in SETTINGS:
        fail(f"unknown --setting {a.setting!r}; known: {', '.join(SETTINGS)}")
    if not 1 <= a.first <= a.trials:
        fail(f"--first must be between 1 and --trials ({a.trials}), got {a.first}")
    if a.proposals < 0 or a.trained < 0 or a.proposals + a.trained == 0:
        fail("--proposals and --trained must be at least 0, and one of them at least 1")
    if a.trained == 1:
        fail("--trained needs at least 2 seeds to pair")
    flags = parse_flags(a.search_flags)
    setting = SETTINGS[a.setting]
    try:  # the flags are checked before anything runs
        RunSpec(spaces=setting.families, task=setting.task, budget=setting.budget, trials=a.trials, **flags)
    except Exception as e:  # noqa: BLE001 - a UserError's message is the user's answer
        fail(str(e))
    EXECUTORS.add("instant-first", stopping(LocalExecutor, a.first, True))
    EXECUTORS.add("trained-first", stopping(LocalExecutor, a.first, False))
    out: dict = {"setting": a.setting, "flags": a.search_flags, "trials": a.trials, "first": a.first}
    if a.proposals:
        from scipy.stats import ks_2samp

        warnings.filterwarnings("ignore", message="ks_2samp: Exact calculation unsuccessful")

        pooled = {}
        for draw in DRAWS:
            frames = []
            for seed in range(a.proposals):
                with tempfile.TemporaryDirectory() as d:
                    store = Store(f"sqlite:///{d}/p.db")
                    one(store, setting, "p", seed, draw, a.trials, "instant-first", flags, a.data_dir)
                    frames.append(first_trials(store, "p", a.first))
                    store.close()
            pooled[draw] = frames
        print(f"proposals of the first {a.first} trials, {a.proposals} seeds per draw (modelled / random):")
        print("| family | column | median | mean | KS p |\n|---|---|---|---|---:|")
        rows = []
        both = {d: pd.concat(f) for d, f in pooled.items()}
        for fam in setting.families:
            for col in COLUMNS:
                xs = [
                    pd.to_numeric(both[d][both[d]["family"] == fam].get(col), errors="coerce").dropna() for d in DRAWS
                ]
                if not all(len(x) for x in xs):
                    continue
                p = float(ks_2samp(*xs).pvalue)
                rows.append(
                    {
                        "family": fam,
                        "column": col,
                        "median": [float(x.median()) for x in xs],
                        "mean": [float(x.mean()) for x in xs],
                        "n": [len(x) for x in xs],
                        "ks_p": p,
                    }
                )
                print(
                    f"| {fam} | {col} | {xs[0].median():.4g} / {xs[1].median():.4g} | "
                    f"{xs[0].mean():.4g} / {xs[1].mean():.4g} | {p:.3f} |"
                )
        out["proposals"] = rows
    if a.trained:
        from scipy.stats import wilcoxon

        store = Store(a.storage or f"sqlite:///{tempfile.mkdtemp()}/trained.db")
        have = {r.name for r in store.list_studies()}
        frames = {}
        for seed in range(a.trained):
            for draw in DRAWS:
                name = f"{draw}-{seed}"
                if name not in have:
                    one(store, setting, name, seed, draw, a.trials, "trained-first", flags, a.data_dir)
                frames[name] = first_trials(store, name, a.first)
        rec = store.get_study(f"{DRAWS[0]}-0")
        ref = union_reference(list(frames.values()), rec.metric, rec.direction)
        best = union_hypervolume(list(frames.values()), rec.metric, rec.direction, ref)
        fr = {
            d: [
                union_hypervolume([frames[f"{d}-{s}"]], rec.metric, rec.direction, ref) / best for s in range(a.trained)
            ]
            for d in DRAWS
        }
        diff = np.array(fr["random"]) - np.array(fr["modelled"])
        nz = diff[diff != 0]
        p = float(wilcoxon(nz).pvalue) if len(nz) else math.nan
        ahead = {"random": int((diff > 0).sum()), "modelled": int((diff < 0).sum()), "tie": int((diff == 0).sum())}
        print(f"hypervolume after the first {a.first} trained trials, share of all {2 * a.trained} studies' union:")
        print("| seed | modelled | random |\n|---:|---:|---:|")
        for s in range(a.trained):
            print(f"| {s} | {fr['modelled'][s]:.3f} | {fr['random'][s]:.3f} |")
        print(
            f"median {statistics.median(fr['modelled']):.3f} / {statistics.median(fr['random']):.3f}; random ahead "
            f"on {ahead['random']} seeds, modelled on {ahead['modelled']}, tied on {ahead['tie']}; "
            f"Wilcoxon signed-rank p {p:.3f}"
        )
        out["trained"] = {"fractions": fr, "ahead": ahead, "wilcoxon_p": p}
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
