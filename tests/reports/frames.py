"""Build trial frames shaped like storage's output, for the reports tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from storage.records import StudyRecord

METRICS = ("psnr", "ssim")
DIMS = ("d_z", "d_h", "L")


def trial(
    number: int,
    family: str,
    params: int | None,
    psnr: float = np.nan,
    *,
    status: str = "complete",
    psnr_std: float = np.nan,
    ssim: float = np.nan,
    ssim_std: float = np.nan,
    n_runs: int = 1,
    config: dict[str, Any] | None = None,
    note: str | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """One row of a trials frame; the config defaults to hourglass-like keys."""
    if config is None:
        config = {"d_z": 1024 + number, "d_h": 16 * (number + 1), "L": 1 + number % 4, "lr": 1e-3}
    return {
        "number": number,
        "status": status,
        "family": family,
        "params": params,
        "config": config,
        "psnr": psnr,
        "psnr_std": psnr_std,
        "ssim": ssim,
        "ssim_std": ssim_std,
        "n_runs": n_runs,
        "note": note,
        "error": error,
        "duration_s": 12.5 if status == "complete" else np.nan,
        "device": "cpu",
    }


def make_trials(rows: list[dict[str, Any]], study: str = "s") -> pd.DataFrame:
    """A frame with storage's columns (study, number, status, family, params, config,
    d_z/d_h/L as Int64, metric mean/std, n_runs, objective, note, error, device, times)."""
    df = pd.DataFrame(rows)
    if len(df) == 0:
        df = pd.DataFrame(columns=list(trial(0, "f", 1).keys()))
    df.insert(0, "study", study)
    for d in DIMS:
        df[d] = pd.array([(c or {}).get(d) for c in df["config"]], dtype="Int64")
    df["params"] = pd.array(df["params"], dtype="Int64")
    for m in METRICS:
        df[m] = df[m].astype(float)
        df[f"{m}_std"] = df[f"{m}_std"].astype(float)
    df["objective"] = df["psnr"]
    df["started_at"] = pd.Timestamp("2024-01-01 12:00:00")
    df["finished_at"] = df["started_at"] + pd.to_timedelta(df["duration_s"].fillna(0), unit="s")
    return df.sort_values("number").reset_index(drop=True)


def two_family_trials() -> pd.DataFrame:
    """Hand-made study (psnr, maximize) with known fronts.

    hourglass front (by params): #0 (1000, 20), #1 (2000, 22), #6 (4000, 25)
    conventional front:          #7 (800, 18), #8 (2500, 21), #9 (5000, 26)
    overall front (by params):   #7, #0, #1, #6, #9   (#8 is beaten by #1)
    #12 duplicates #9 exactly, so only #9 is on a front.
    """
    conv = {"d_z": 784, "d_h": 2048, "L": 2}
    return make_trials(
        [
            trial(0, "hourglass", 1000, 20.0, psnr_std=0.1, ssim=0.80, ssim_std=0.01, n_runs=3),
            trial(1, "hourglass", 2000, 22.0, ssim=0.85),
            trial(2, "hourglass", 1500, 19.0, ssim=0.70),
            trial(3, "hourglass", 500, status="failed", error="CUDA out of memory"),
            trial(4, "hourglass", 10_000_000, status="rejected", note="over budget: 10M > 80M?"),
            trial(5, "hourglass", 3000, np.nan),  # complete but no finite metric
            trial(6, "hourglass", 4000, 25.0, psnr_std=0.3, ssim=0.9, n_runs=3),
            trial(7, "conventional", 800, 18.0, config=conv),
            trial(8, "conventional", 2500, 21.0, config=conv),
            trial(9, "conventional", 5000, 26.0, psnr_std=0.2, config=conv),
            trial(10, "conventional", 900, 17.0, config=conv),
            trial(11, "conventional", 1000, status="diverged", error="loss is NaN at epoch 3", config=conv),
            trial(12, "conventional", 5000, 26.0, config=conv),
            trial(13, "conventional", 700, 99.0, status="running", config=conv),
        ]
    )


def study_record(name: str = "mnist-denoise-demo", **kw: Any) -> StudyRecord:
    base = dict(
        task="mnist-denoise",
        families=["hourglass", "conventional"],
        metric="psnr",
        direction="maximize",
        budget=80_000_000,
        settings={"sampler": "nsga2", "seed": 0, "repeats": 3},
    )
    base.update(kw)
    return StudyRecord(name=name, **base)
