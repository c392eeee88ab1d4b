"""Tables of a study as DataFrames: the Pareto-optimal configurations, status counts, the
best trial, problem trials and all trials (the pages and the CLI print them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from core.directions import check_direction
from core.statuses import PROBLEM_STATUSES, TRIAL_STATUSES
from reports.formatting import config_keys, format_duration, format_mean_std, format_params, format_time, format_value
from reports.fronts import FrontData, front_data
from storage.frames import metric_columns
from verdicts.points import column, complete_points, floats, parse_config


def pareto_table(
    df: pd.DataFrame, metric: str, direction: str, *, formatted: bool = False, data: FrontData | None = None
) -> pd.DataFrame:
    """The Pareto-optimal configurations of each family (like the paper's Tables 1-2).

    One row per member of its family's front; families sorted by name, rows by params.
    Columns: family, number, the config keys present (e.g. d_z, d_h, L, lr), params,
    ``metric`` (mean), ``metric_std``, then mean and std of every other metric present,
    and ``overall_front`` (also on the all-families front).

    With ``formatted=True`` the values are display strings: params as "1.23M (1,234,567)",
    each metric as "mean ± std" (and no separate std columns). `data`: the frame's
    `front_data`, when the caller has it already (it is not computed again).
    """
    data = data if data is not None else front_data(df, metric, direction)
    others = [m for m in metric_columns(df) if m != metric] if df is not None and len(df) else []
    rows = []
    for f in data.families:
        for i in f.front_index:
            rows.append((f.family, int(f.numbers[i]), bool(f.on_overall_front[i])))
    base = ["family", "number"]
    if not rows:
        cols = base + ["params", metric, f"{metric}_std"]
        for m in others:
            cols += [m, f"{m}_std"]
        cols.append("overall_front")
        if formatted:
            cols = [c for c in cols if not c.endswith("_std")]
        return pd.DataFrame(columns=cols)

    at = {int(n): i for i, n in enumerate(column(df, "number").tolist())}  # number -> row position
    configs = column(df, "config", None).tolist() if "config" in df.columns else [{}] * len(df)
    params = column(df, "params").tolist()
    values = {m: (floats(df[m]), floats(column(df, f"{m}_std"))) for m in [metric] + others}
    keys = config_keys(configs[at[n]] for _, n, _ in rows)
    recs = []
    for fam, n, overall in rows:
        i = at[n]
        cfg = parse_config(configs[i])
        rec: dict[str, Any] = {"family": fam, "number": n}
        for k in keys:
            rec[k] = cfg.get(k)
        rec["params"] = int(params[i])
        for m, (mean, std) in values.items():
            rec[m] = float(mean[i])
            rec[f"{m}_std"] = float(std[i])
        rec["overall_front"] = overall
        recs.append(rec)
    table = pd.DataFrame(recs)
    if formatted:
        table["params"] = [format_params(p) for p in table["params"]]
        for k in keys:
            table[k] = [format_value(v) for v in table[k]]
        for m in [metric] + others:
            table[m] = [format_mean_std(a, b) for a, b in zip(table[m], table[f"{m}_std"])]
            table = table.drop(columns=f"{m}_std")
        table["overall_front"] = ["✓" if v else "" for v in table["overall_front"]]
    return table


def status_counts(df: pd.DataFrame) -> dict[str, int]:
    """Number of trials per status; every known status present (0 when none), then others."""
    counts = {s: 0 for s in TRIAL_STATUSES}
    if df is not None and len(df) and "status" in df.columns:
        for s, n in df["status"].astype(str).value_counts(sort=False).items():
            counts[str(s)] = int(n)
    return counts


def best_trial(df: pd.DataFrame, metric: str, direction: str) -> dict[str, Any] | None:
    """The complete trial with the best mean metric: {number, family, params, value, std}."""
    check_direction(direction)
    pts = complete_points(df, metric)
    if len(pts) == 0:
        return None
    values = pts["value"].to_numpy()
    i = int(np.argmax(values) if direction == "maximize" else np.argmin(values))
    r = pts.iloc[i]
    return {
        "number": int(r["number"]),
        "family": r["family"],
        "params": float(r["params"]),
        "value": float(r["value"]),
        "std": float(r["std"]),
    }


def texts(values: list[Any]) -> list[str]:
    """`format_value` of each value, each distinct (type, value) formatted once (a config
    key takes few values over thousands of trials)."""
    done: dict[Any, str] = {}
    out = []
    for v in values:
        try:
            key = (type(v), v)
            text = done.get(key)
            if text is None:
                text = done[key] = format_value(v)
        except TypeError:  # unhashable (a list in a config)
            text = format_value(v)
        out.append(text)
    return out


def reasons(df: pd.DataFrame) -> list[str]:
    """Each trial's note and error joined ("note — error"; "" when neither)."""
    out = []
    for note, error in zip(column(df, "note", None).tolist(), column(df, "error", None).tolist()):
        parts = [t for t in (format_value(note).strip(), format_value(error).strip()) if t]
        out.append(" — ".join(parts))
    return out


def time_texts(values: pd.Series) -> list[str]:
    """`format_time` of each value (vectorised for a datetime column)."""
    if isinstance(values.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(values.dtype):
        return values.dt.strftime("%Y-%m-%d %H:%M:%S").fillna("").tolist()
    return [format_time(v) for v in values.tolist()]


def problem_trials(df: pd.DataFrame) -> pd.DataFrame:
    """Failed, diverged, interrupted and rejected trials with their reason (note/error)."""
    return trials_with_reasons(df, PROBLEM_STATUSES)


def pruned_trials(df: pd.DataFrame) -> pd.DataFrame:
    """Trials the pruner stopped early, with why (the epoch and the trial that beat them)."""
    return trials_with_reasons(df, ("pruned",))


def trials_with_reasons(df: pd.DataFrame, statuses: Sequence[str]) -> pd.DataFrame:
    """Trials of `statuses`: number, status, family, params, config and reason."""
    cols = ["number", "status", "family", "params", "config", "reason"]
    if df is None or len(df) == 0 or "status" not in df.columns:
        return pd.DataFrame(columns=cols)
    sub = df[df["status"].astype(str).isin(list(statuses))]
    out = pd.DataFrame(
        {
            "number": column(sub, "number").to_numpy(),
            "status": sub["status"].astype(str).to_numpy(),
            "family": column(sub, "family", "").astype(str).to_numpy(),
            "params": column(sub, "params").to_numpy(),
            "config": [
                ", ".join(f"{k}={format_value(v)}" for k, v in parse_config(c).items())
                for c in column(sub, "config", None).to_numpy()
            ],
            "reason": reasons(sub),
        }
    )
    return out


def trials_table(df: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """All trials as display strings: number, status, family, config keys, params,
    each metric as "mean ± std", runs, duration, device, start time and note/error."""
    if df is None or len(df) == 0:
        return pd.DataFrame(columns=["number", "status", "family", "params"])
    metrics = metric_columns(df)
    if metric in metrics:
        metrics = [metric] + [m for m in metrics if m != metric]
    configs = [parse_config(c) for c in column(df, "config", None).tolist()]
    keys = config_keys(configs)
    out: dict[str, list[Any]] = {
        "number": [format_value(v) for v in column(df, "number").tolist()],
        "status": texts(column(df, "status", "").tolist()),
        "family": texts(column(df, "family", "").tolist()),
    }
    for k in keys:
        out[k] = texts([c.get(k) for c in configs])
    out["params"] = [format_params(p) for p in column(df, "params").tolist()]
    for m in metrics:
        out[m] = [format_mean_std(a, b) for a, b in zip(df[m].tolist(), df[f"{m}_std"].tolist())]
    if "n_runs" in df.columns:
        out["runs"] = texts(df["n_runs"].tolist())
    if "duration_s" in df.columns:
        out["duration"] = [format_duration(v) for v in df["duration_s"].tolist()]
    if "device" in df.columns:
        out["device"] = texts(df["device"].tolist())
    if "started_at" in df.columns:
        out["started"] = time_texts(df["started_at"])
    out["note / error"] = reasons(df)
    return pd.DataFrame(out, dtype=object)  # plain str objects: no arrow strings built to be read back
