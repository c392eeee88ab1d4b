"""Plots of a study, each split into a data function and a figure function.

The data functions (`front_data`, `hypervolume_data`, `pareto_table`, `status_counts`,
`problem_trials`, `trials_table`) are plain pandas/numpy and are what the tests check; the
figure functions only turn that data into plotly figures (Optuna's
``visualization/_pareto_front.py`` pattern).

Input: a DataFrame of trials as produced by storage, one row per trial ordered by
``number``, with columns ``number``, ``status``, ``family``, ``params``, ``config`` (dict),
per metric ``m`` its mean ``m`` and std ``m_std`` (NaN for a single run), and more.
Only ``status == "complete"`` rows with a finite metric and a positive finite parameter
count take part in fronts and hypervolumes.
"""
from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.budget import format_count
from core.directions import arrow, check_direction
from core.statuses import PROBLEM_STATUSES, TRIAL_STATUSES
from reports.pareto import default_reference, hypervolume_history, pareto_mask
from storage.frames import metric_columns

# Colour-blind friendly qualitative palette (Okabe-Ito, then Plotly's defaults).
PALETTE = (
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8C564B",
    "#636EFA", "#EF553B", "#00CC96", "#AB63FA", "#FFA15A", "#19D3F3", "#FF6692",
)



# --------------------------------------------------------------------------- helpers


def family_colors(families: Iterable[str]) -> dict[str, str]:
    """Deterministic colour per family: sorted names take the palette in order."""
    names = sorted({str(f) for f in families})
    return {f: PALETTE[i % len(PALETTE)] for i, f in enumerate(names)}


def parse_config(value: Any) -> dict[str, Any]:
    """A trial's config as a dict (accepts a dict, a JSON string, or nothing)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip():
        try:
            out = json.loads(value)
        except ValueError:
            return {}
        return out if isinstance(out, dict) else {}
    return {}


def config_keys(configs: Iterable[Any]) -> list[str]:
    """Union of config keys, in order of first appearance."""
    keys: dict[str, None] = {}
    for c in configs:
        for k in parse_config(c):
            keys.setdefault(str(k), None)
    return list(keys)


def format_value(v: Any) -> str:
    """Short text for a config value or a number."""
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return ""
        return f"{float(v):.4g}"
    try:
        if pd.isna(v):
            return ""
    except (TypeError, ValueError):
        pass
    return str(v)


def format_params(n: Any) -> str:
    """'1.23M (1,234,567)' for a parameter count; '' when missing."""
    try:
        x = float(n)
    except (TypeError, ValueError):
        return ""
    if not math.isfinite(x):
        return ""
    return f"{format_count(x)} ({int(round(x)):,})"


def format_mean_std(mean: Any, std: Any = None, digits: int = 4) -> str:
    """'25.31 ± 0.1234' (the ± part only when std is finite); '' when mean is missing."""
    try:
        m = float(mean)
    except (TypeError, ValueError):
        return ""
    if not math.isfinite(m):
        return ""
    text = f"{m:.{digits}g}"
    try:
        s = float(std)
    except (TypeError, ValueError):
        s = float("nan")
    if math.isfinite(s):
        text += f" ± {s:.2g}"
    return text


def _column(df: pd.DataFrame, name: str, default: Any = np.nan) -> pd.Series:
    if name in df.columns:
        return df[name]
    return pd.Series([default] * len(df), index=df.index, dtype=object if default is None else None)


def _floats(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def complete_points(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows that take part in fronts: complete, finite metric, finite params > 0.

    Returns a frame with columns number, family, params (float), value, std, config,
    plus the original index, in trial-number order.
    """
    if df is None or len(df) == 0 or "status" not in df.columns or metric not in df.columns:
        return pd.DataFrame(
            {"number": pd.Series(dtype=int), "family": pd.Series(dtype=object),
             "params": pd.Series(dtype=float), "value": pd.Series(dtype=float),
             "std": pd.Series(dtype=float), "config": pd.Series(dtype=object)}
        )
    params = _floats(_column(df, "params"))
    value = _floats(df[metric])
    std = _floats(_column(df, f"{metric}_std"))
    ok = (
        (df["status"].astype(str) == "complete").to_numpy()
        & np.isfinite(value)
        & np.isfinite(params)
        & (params > 0)
    )
    out = pd.DataFrame(
        {
            "number": pd.to_numeric(_column(df, "number"), errors="coerce").to_numpy()[ok],
            "family": _column(df, "family", "").astype(str).to_numpy()[ok],
            "params": params[ok],
            "value": value[ok],
            "std": std[ok],
            "config": [parse_config(c) for c in _column(df, "config", None).to_numpy()[ok]],
        },
        index=df.index[ok],
    )
    return out.sort_values("number", kind="stable")


def hover_text(number: Any, family: str, config: dict[str, Any], params: float,
               metric: str, mean: float, std: float) -> str:
    """Hover text of one trial (plotly understands <br>; user text is escaped)."""
    cfg = ", ".join(f"{html.escape(str(k))}={html.escape(format_value(v))}" for k, v in config.items())
    lines = [
        f"<b>#{format_value(number)}</b> {html.escape(str(family))}",
        cfg or "(no config)",
        f"params {format_params(params)}",
        f"{html.escape(metric)} {format_mean_std(mean, std)}",
    ]
    return "<br>".join(lines)


# ------------------------------------------------------------------ Pareto front data


@dataclass(frozen=True)
class FamilyFront:
    """One family's complete trials and its own Pareto front.

    All arrays have shape (k,) for the family's k complete points, in trial order;
    ``front_index`` (f,) indexes the family-front members sorted by params ascending.
    """

    family: str
    color: str
    numbers: np.ndarray  # (k,) int trial numbers
    params: np.ndarray  # (k,) float parameter counts
    values: np.ndarray  # (k,) float metric means
    stds: np.ndarray  # (k,) float metric stds, NaN for single runs
    hover: list[str]  # (k,) hover texts
    on_front: np.ndarray  # (k,) bool, on this family's front
    on_overall_front: np.ndarray  # (k,) bool, on the all-families front
    front_index: np.ndarray  # (f,) int, family front sorted by params

    @property
    def front_numbers(self) -> np.ndarray:
        return self.numbers[self.front_index]

    @property
    def front_params(self) -> np.ndarray:
        return self.params[self.front_index]

    @property
    def front_values(self) -> np.ndarray:
        return self.values[self.front_index]

    @property
    def front_stds(self) -> np.ndarray:
        return self.stds[self.front_index]


@dataclass(frozen=True)
class FrontData:
    """Everything the Pareto figure needs; families sorted by name."""

    metric: str
    direction: str
    families: list[FamilyFront] = field(default_factory=list)
    overall_numbers: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    # (o,) trial numbers on the all-families front, sorted by params ascending
    n_excluded: int = 0  # complete trials left out (non-finite metric or params)

    @property
    def empty(self) -> bool:
        return not self.families

    def family(self, name: str) -> FamilyFront:
        for f in self.families:
            if f.family == name:
                return f
        raise KeyError(f"no complete trials of family {name!r}; have {[f.family for f in self.families]}")

    @property
    def max_params(self) -> float:
        return max((float(f.params.max()) for f in self.families), default=float("nan"))


def front_data(df: pd.DataFrame, metric: str, direction: str) -> FrontData:
    """Per-family points and fronts (objectives: params minimised, metric in `direction`)."""
    check_direction(direction)
    pts = complete_points(df, metric)
    n_complete = int((df["status"].astype(str) == "complete").sum()) if (
        df is not None and len(df) and "status" in df.columns) else 0
    n_excluded = n_complete - len(pts)
    if len(pts) == 0:
        return FrontData(metric=metric, direction=direction, n_excluded=n_excluded)

    dirs = ["minimize", direction]
    objectives = pts[["params", "value"]].to_numpy(dtype=float)
    overall = pareto_mask(objectives, dirs)
    pts = pts.assign(overall=overall)
    overall_rows = pts[overall].sort_values(["params", "number"], kind="stable")
    colors = family_colors(pts["family"])

    families = []
    for fam in sorted(pts["family"].unique()):
        sub = pts[pts["family"] == fam]
        obj = sub[["params", "value"]].to_numpy(dtype=float)
        on_front = pareto_mask(obj, dirs)
        idx = np.flatnonzero(on_front)
        idx = idx[np.argsort(obj[idx, 0], kind="stable")]
        hover = [
            hover_text(r.number, fam, r.config, r.params, metric, r.value, r.std)
            for r in sub.itertuples(index=False)
        ]
        families.append(
            FamilyFront(
                family=fam,
                color=colors[fam],
                numbers=sub["number"].to_numpy(dtype=int),
                params=sub["params"].to_numpy(dtype=float),
                values=sub["value"].to_numpy(dtype=float),
                stds=sub["std"].to_numpy(dtype=float),
                hover=hover,
                on_front=on_front,
                on_overall_front=sub["overall"].to_numpy(dtype=bool),
                front_index=idx,
            )
        )
    return FrontData(
        metric=metric,
        direction=direction,
        families=families,
        overall_numbers=overall_rows["number"].to_numpy(dtype=int),
        n_excluded=n_excluded,
    )


def _nan_to_none(a: np.ndarray) -> list[float | None]:
    return [float(x) if np.isfinite(x) else None for x in np.asarray(a, dtype=float)]


def _empty_figure(title: str | None, message: str) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=html.escape(message), showarrow=False, x=0.5, y=0.5,
                       xref="paper", yref="paper", font=dict(size=16))
    fig.update_layout(title=title, template="plotly_white", height=300,
                      xaxis=dict(visible=False), yaxis=dict(visible=False))
    return fig


def pareto_figure(data: FrontData, *, title: str | None = None,
                  metric_label: str | None = None, params_label: str = "trainable parameters") -> go.Figure:
    """Metric vs. parameters (log x), one colour per family.

    Per family: every complete trial as a faint marker (error bars = std over repeats),
    the family front as a bold step line with highlighted markers. The step line is
    ``line_shape="hv"``: with params ascending, the best metric achievable with at most
    x parameters holds horizontally until the next front member. The last step extends
    to the largest parameter count of the study. Members of the all-families front get a
    black ring.
    """
    metric_label = metric_label or data.metric
    if data.empty:
        return _empty_figure(title, "no complete trials yet")
    fig = go.Figure()
    x_end = data.max_params
    for f in data.families:
        err = np.isfinite(f.stds).any()
        rest = ~f.on_front
        fig.add_trace(go.Scatter(
            x=f.params[rest], y=f.values[rest], mode="markers", name=f"{html.escape(f.family)} trials",
            legendgroup=f.family, showlegend=bool(rest.any()),
            marker=dict(color=f.color, size=7, opacity=0.45),
            error_y=dict(type="data", array=_nan_to_none(f.stds[rest]), visible=bool(err),
                         thickness=1, width=2, color=f.color),
            text=[h for h, r in zip(f.hover, rest) if r],
            hovertemplate="%{text}<extra></extra>",
        ))
        fi = f.front_index
        fx = list(f.params[fi])
        fy = list(f.values[fi])
        line_x, line_y = fx, fy
        if fx and x_end > fx[-1]:
            line_x, line_y = fx + [x_end], fy + [fy[-1]]
        fig.add_trace(go.Scatter(
            x=line_x, y=line_y, mode="lines", line_shape="hv", name=f"{html.escape(f.family)} front",
            legendgroup=f.family, showlegend=False, hoverinfo="skip",
            line=dict(color=f.color, width=2.5),
        ))
        fig.add_trace(go.Scatter(
            x=fx, y=fy, mode="markers", name=f"{html.escape(f.family)} front",
            legendgroup=f.family,
            marker=dict(color=f.color, size=11, line=dict(color="white", width=1.5)),
            error_y=dict(type="data", array=_nan_to_none(f.stds[fi]),
                         visible=bool(np.isfinite(f.stds[fi]).any()),
                         thickness=1.5, width=4, color=f.color),
            text=[f.hover[i] for i in fi],
            hovertemplate="%{text}<extra></extra>",
        ))
    ox, oy = [], []
    for f in data.families:
        ox.extend(f.params[f.on_overall_front])
        oy.extend(f.values[f.on_overall_front])
    fig.add_trace(go.Scatter(
        x=ox, y=oy, mode="markers", name="overall front", hoverinfo="skip",
        marker=dict(symbol="circle-open", size=17, color="black", line=dict(width=1.5)),
    ))
    fig.update_layout(
        title=title, template="plotly_white", height=560,
        legend=dict(orientation="v", groupclick="toggleitem"),
        hovermode="closest", margin=dict(l=60, r=20, t=60 if title else 30, b=50),
    )
    fig.update_xaxes(type="log", title_text=f"{params_label} (log)")
    fig.update_yaxes(title_text=f"{metric_label} {arrow(data.direction)} better")
    return fig


# ---------------------------------------------------------------------- hypervolume


def hypervolume_points(df: pd.DataFrame, metric: str, *, log_params: bool = True) -> pd.DataFrame:
    """Complete points with objective columns ``x`` (params, log10 when log_params) and ``y``."""
    pts = complete_points(df, metric)
    x = np.log10(pts["params"].to_numpy(dtype=float)) if log_params else pts["params"].to_numpy(dtype=float)
    return pts.assign(x=x, y=pts["value"].to_numpy(dtype=float))


def hypervolume_reference(df: pd.DataFrame, metric: str, direction: str, *,
                          log_params: bool = True) -> np.ndarray | None:
    """The study's fixed reference: `default_reference` of all its complete points."""
    check_direction(direction)
    pts = hypervolume_points(df, metric, log_params=log_params)
    if len(pts) == 0:
        return None
    return default_reference(pts[["x", "y"]].to_numpy(dtype=float), ["minimize", direction])


def hypervolume_data(df: pd.DataFrame, metric: str, direction: str, family: str | None = None,
                     *, log_params: bool = True,
                     reference: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Hypervolume after each complete trial, in trial-number order.

    Objectives: params (minimised; log10 of params when ``log_params``, since counts span
    decades) and the metric in ``direction``. The reference is fixed for the whole study
    (`hypervolume_reference`: computed from all complete points of every family), so the
    per-family and overall curves are comparable.

    Returns:
        numbers (k,) int trial numbers and hv (k,) float non-decreasing hypervolume of the
        complete trials up to and including that one (of ``family`` only when given).
    """
    check_direction(direction)
    pts = hypervolume_points(df, metric, log_params=log_params)
    if reference is None:
        if len(pts) == 0:
            return np.zeros(0, dtype=int), np.zeros(0, dtype=float)
        reference = default_reference(pts[["x", "y"]].to_numpy(dtype=float), ["minimize", direction])
    if family is not None:
        pts = pts[pts["family"] == family]
    hv = hypervolume_history(pts[["x", "y"]].to_numpy(dtype=float).reshape(-1, 2),
                             ["minimize", direction], reference)
    return pts["number"].to_numpy(dtype=int), hv


def hypervolume_figure(df: pd.DataFrame, metric: str, direction: str, *,
                       title: str | None = None, metric_label: str | None = None,
                       log_params: bool = True) -> go.Figure:
    """Hypervolume vs. trial number: one step line per family and one for all families."""
    metric_label = metric_label or metric
    ref = hypervolume_reference(df, metric, direction, log_params=log_params)
    if ref is None:
        return _empty_figure(title, "no complete trials yet")
    pts = complete_points(df, metric)
    colors = family_colors(pts["family"])
    fig = go.Figure()
    for fam in sorted(pts["family"].unique()):
        numbers, hv = hypervolume_data(df, metric, direction, fam, log_params=log_params, reference=ref)
        fig.add_trace(go.Scatter(
            x=numbers, y=hv, mode="lines+markers", line_shape="hv", name=html.escape(fam),
            line=dict(color=colors[fam], width=2), marker=dict(size=5),
            hovertemplate=f"{html.escape(fam)}<br>trial #%{{x}}<br>hypervolume %{{y:.4g}}<extra></extra>",
        ))
    numbers, hv = hypervolume_data(df, metric, direction, log_params=log_params, reference=ref)
    fig.add_trace(go.Scatter(
        x=numbers, y=hv, mode="lines", line_shape="hv", name="all families",
        line=dict(color="black", width=3, dash="dot"),
        hovertemplate="all families<br>trial #%{x}<br>hypervolume %{y:.4g}<extra></extra>",
    ))
    xname = "log10 params" if log_params else "params"
    fig.update_layout(title=title, template="plotly_white", height=420, hovermode="closest",
                      margin=dict(l=60, r=20, t=60 if title else 30, b=50))
    fig.update_xaxes(title_text="trial number")
    fig.update_yaxes(title_text=f"hypervolume ({xname} × {metric_label})")
    return fig


# ------------------------------------------------------------------------ tables


def pareto_table(df: pd.DataFrame, metric: str, direction: str, *,
                 formatted: bool = False) -> pd.DataFrame:
    """The Pareto-optimal configurations of each family (like the paper's Tables 1-2).

    One row per member of its family's front; families sorted by name, rows by params.
    Columns: family, number, the config keys present (e.g. d_z, d_h, L, lr), params,
    ``metric`` (mean), ``metric_std``, then mean and std of every other metric present,
    and ``overall_front`` (also on the all-families front).

    With ``formatted=True`` the values are display strings: params as "1.23M (1,234,567)",
    each metric as "mean ± std" (and no separate std columns).
    """
    data = front_data(df, metric, direction)
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

    by_number = df.set_index("number", drop=False)
    recs = []
    keys = config_keys(by_number.loc[n, "config"] if "config" in df.columns else {} for _, n, _ in rows)
    for fam, n, overall in rows:
        r = by_number.loc[n]
        cfg = parse_config(r["config"]) if "config" in df.columns else {}
        rec: dict[str, Any] = {"family": fam, "number": n}
        for k in keys:
            rec[k] = cfg.get(k)
        rec["params"] = int(r["params"])
        for m in [metric] + others:
            rec[m] = float(r[m]) if pd.notna(r[m]) else float("nan")
            s = r.get(f"{m}_std", np.nan)
            rec[f"{m}_std"] = float(s) if pd.notna(s) else float("nan")
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
    return {"number": int(r["number"]), "family": r["family"], "params": float(r["params"]),
            "value": float(r["value"]), "std": float(r["std"])}


def _reason(row: pd.Series) -> str:
    parts = []
    for col in ("note", "error"):
        text = format_value(row.get(col)).strip()
        if text:
            parts.append(text)
    return " — ".join(parts)


def problem_trials(df: pd.DataFrame) -> pd.DataFrame:
    """Failed, diverged, interrupted and rejected trials with their reason (note/error)."""
    cols = ["number", "status", "family", "params", "config", "reason"]
    if df is None or len(df) == 0 or "status" not in df.columns:
        return pd.DataFrame(columns=cols)
    sub = df[df["status"].astype(str).isin(PROBLEM_STATUSES)]
    out = pd.DataFrame({
        "number": _column(sub, "number").to_numpy(),
        "status": sub["status"].astype(str).to_numpy(),
        "family": _column(sub, "family", "").astype(str).to_numpy(),
        "params": _column(sub, "params").to_numpy(),
        "config": [", ".join(f"{k}={format_value(v)}" for k, v in parse_config(c).items())
                   for c in _column(sub, "config", None).to_numpy()],
        "reason": [_reason(r) for _, r in sub.iterrows()],
    })
    return out


def trials_table(df: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """All trials as display strings: number, status, family, config keys, params,
    each metric as "mean ± std", runs, duration, device, start time and note/error."""
    if df is None or len(df) == 0:
        return pd.DataFrame(columns=["number", "status", "family", "params"])
    metrics = metric_columns(df)
    if metric in metrics:
        metrics = [metric] + [m for m in metrics if m != metric]
    configs = [parse_config(c) for c in _column(df, "config", None).to_numpy()]
    keys = config_keys(configs)
    out: dict[str, list[Any]] = {
        "number": [format_value(v) for v in _column(df, "number")],
        "status": [format_value(v) for v in _column(df, "status", "")],
        "family": [format_value(v) for v in _column(df, "family", "")],
    }
    for k in keys:
        out[k] = [format_value(c.get(k)) for c in configs]
    out["params"] = [format_params(p) for p in _column(df, "params")]
    for m in metrics:
        out[m] = [format_mean_std(a, b) for a, b in zip(df[m], df[f"{m}_std"])]
    if "n_runs" in df.columns:
        out["runs"] = [format_value(v) for v in df["n_runs"]]
    if "duration_s" in df.columns:
        out["duration"] = [_format_duration(v) for v in df["duration_s"]]
    if "device" in df.columns:
        out["device"] = [format_value(v) for v in df["device"]]
    if "started_at" in df.columns:
        out["started"] = [_format_time(v) for v in df["started_at"]]
    out["note / error"] = [_reason(r) for _, r in df.iterrows()]
    return pd.DataFrame(out)


def _format_duration(v: Any) -> str:
    try:
        s = float(v)
    except (TypeError, ValueError):
        return ""
    if not math.isfinite(s):
        return ""
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.2f} h"


def _format_time(v: Any) -> str:
    if v is None:
        return ""
    try:
        if pd.isna(v):
            return ""
    except (TypeError, ValueError):
        pass
    try:
        return pd.Timestamp(v).strftime("%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError):
        return str(v)
