"""The Pareto pruner's saving in training seconds beside its saving in parameter-epochs.

The efficiency benchmark counts training work as parameters x epochs (load-free, and on
a CPU proportional to the FLOPs of these MLPs). On a GPU a small model's step is bound by
launching kernels, so an epoch costs about the same at 1M and 80M parameters and grows
with depth instead; this script measures what the pruner saves there, from pairs of
studies of one seed, one pruned and one not (`benchmarks/gpu/gpu_checklist.sh`'s
`prunework` step writes them on a lent GPU):

    python -m benchmarks.gpu.pruned_seconds --pair sqlite:///s1/pareto.db sqlite:///s1/none.db \
        --pair sqlite:///s2/pareto.db sqlite:///s2/none.db --study pw --json out.json

For each pair: training seconds (the trials' durations) and parameter-epochs of each
study, the pruned study's share of the unpruned one's in both units, and each study's
hypervolume (log10 params down, the metric as its direction says) as a fraction of the
pair's union front. Then, over every trained trial of every study but each study's first
(which carries the device's start: CUDA context, kernels loaded), seconds per epoch fitted
by least squares on the depth L, on the parameter count, and on both: R^2 and
coefficients, i.e. which of the two is the cost on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics

import numpy as np
import pandas as pd

from benchmarks.bench_util import fail
from benchmarks.search_quality.search_efficiency import study_frame, trial_work
from reports.efficiency import union_hypervolume, union_reference
from storage import Store


def least_squares(y: np.ndarray, columns: list[np.ndarray]) -> tuple[float, list[float]]:
    """R^2 and coefficients (intercept first) of y ~ 1 + columns, by least squares.

    y: (n,); each column (n,). R^2 is 1 - residual / total sum of squares (0 when y is
    constant and the fit exact)."""
    x = np.column_stack([np.ones(len(y)), *columns])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ coef
    total = float((y - y.mean()) @ (y - y.mean()))
    return (1.0 - float(resid @ resid) / total if total > 0 else 0.0), [float(c) for c in coef]


def study_rows(store: Store, study: str):
    """The study's trials as the efficiency benchmark reads them (`study_frame`: epochs
    trained), with work (`trial_work`: params x epochs) and seconds."""
    frame = study_frame(store, study)
    frame["work"] = frame["number"].astype(int).map(trial_work(frame))
    frame["seconds"] = frame["duration_s"].astype(float).fillna(0.0)
    return frame


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--pair",
        nargs=2,
        action="append",
        required=True,
        metavar=("PRUNED", "UNPRUNED"),
        help="storage URLs (or SQLite paths) of a pruned and an unpruned study of one seed",
    )
    ap.add_argument("--study", default="pw", help="the study's name in both storages (default pw)")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args(argv)
    frames = []
    for pair in a.pair:
        got = []
        for where in pair:
            url = where if "://" in where else f"sqlite:///{os.path.abspath(where)}"
            if "://" not in where and not os.path.exists(where):
                fail(f"no such database: {where}")
            store = Store(url)
            if a.study not in {x.name for x in store.list_studies()}:
                fail(f"{where} holds no study named {a.study}")
            got.append((store.get_study(a.study), study_rows(store, a.study)))
        frames.append(got)
    out = {"pairs": []}
    print("| pair | pruned s | unpruned s | seconds share | parameter-epochs share | front (pruned / unpruned) |")
    print("|---|---:|---:|---:|---:|---|")
    for i, ((info, pruned), (_, plain)) in enumerate(frames, 1):
        metric, direction = info.metric, info.direction
        ref = union_reference([pruned, plain], metric, direction)
        best = union_hypervolume([pruned, plain], metric, direction, ref)
        fr = [union_hypervolume([f], metric, direction, ref) / best for f in (pruned, plain)]
        row = {
            "pruned_s": float(pruned["seconds"].sum()),
            "unpruned_s": float(plain["seconds"].sum()),
            "pruned_work": float(pruned["work"].sum()),
            "unpruned_work": float(plain["work"].sum()),
            "front": fr,
            "stopped": int((pruned["status"].astype(str) == "pruned").sum()),
            "trials": len(pruned),
        }
        row["seconds_share"] = row["pruned_s"] / row["unpruned_s"]
        row["work_share"] = row["pruned_work"] / row["unpruned_work"]
        row["rows"] = {
            name: f[["number", "status", "params", "L", "epochs_trained", "seconds"]]
            .astype({"status": str})
            .to_dict("list")
            for name, f in (("pruned", pruned), ("unpruned", plain))
            if "L" in f
        }
        out["pairs"].append(row)
        print(
            f"| {i} | {row['pruned_s']:.1f} | {row['unpruned_s']:.1f} | {row['seconds_share']:.3f} | "
            f"{row['work_share']:.3f} | {fr[0]:.4f} / {fr[1]:.4f} |"
        )
    shares = [(r["seconds_share"], r["work_share"]) for r in out["pairs"]]
    print(
        f"median share: seconds {statistics.median(s for s, _ in shares):.3f}, "
        f"parameter-epochs {statistics.median(w for _, w in shares):.3f}"
    )
    trained = []
    for pair in frames:
        for _, f in pair:
            f = f[f["epochs_trained"] > 0].sort_values("number")
            trained.append(f.iloc[1:])  # the first trial carries the device's start
    every = [f for f in trained if len(f)]
    if every and "L" in every[0]:
        pool = pd.concat(every)
        pool = pool[pool["L"].notna()]
        y = (pool["seconds"] / pool["epochs_trained"]).to_numpy(dtype=float)
        depth, params = pool["L"].to_numpy(dtype=float), pool["params"].to_numpy(dtype=float)
        fits = {
            "L": least_squares(y, [depth]),
            "params": least_squares(y, [params]),
            "L+params": least_squares(y, [depth, params]),
        }
        out["fit"] = {k: {"r2": r2, "coef": c, "n": len(y)} for k, (r2, c) in fits.items()}
        print(f"seconds per epoch over {len(y)} trained trials (each study's first left out):")
        print(f"  on L: R^2 {fits['L'][0]:.3f}, {fits['L'][1][0]:.3f} s + {fits['L'][1][1]:.4f} s per layer")
        print(
            f"  on params: R^2 {fits['params'][0]:.3f}, {fits['params'][1][0]:.3f} s + "
            f"{fits['params'][1][1] * 1e6:.4f} s per M parameters"
        )
        print(f"  on both: R^2 {fits['L+params'][0]:.3f}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
