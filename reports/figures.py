"""Plotly figures, each drawn only from a data object of reports/fronts.py."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from core.directions import arrow
from reports.curves import LearningCurves
from reports.extrapolation import Extrapolation
from reports.formatting import PALETTE
from reports.fronts import FrontData, HypervolumeData
from verdicts.compare import Verdict

# Above this many points a figure draws with WebGL (plotly's Scattergl): SVG slows down
# beyond a few thousand markers, WebGL draws 10^5.
WEBGL_POINTS = 2000


def nan_to_none(a: np.ndarray) -> list[float | None]:
    return [float(x) if np.isfinite(x) else None for x in np.asarray(a, dtype=float)]


def scatter_type(points: int) -> type[go.Scatter] | type[go.Scattergl]:
    """The trace type of a figure of `points` points: `go.Scattergl` above WEBGL_POINTS."""
    return go.Scattergl if points > WEBGL_POINTS else go.Scatter


def steps(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The corners of a step line (``line_shape="hv"``): the first point, each point whose
    y differs from the previous one, and the last point; drawn as "hv" they give the same
    line as all the points.

    Args:
        x: (n,) positions, ascending.
        y: (n,) values.

    Returns:
        (x[k], y[k]) for the kept indices k (ascending), (m,) each with m <= n.
    """
    x, y = np.asarray(x), np.asarray(y)
    if len(y) <= 2:
        return x, y
    keep = np.ones(len(y), dtype=bool)
    keep[1:-1] = y[1:-1] != y[:-2]
    return x[keep], y[keep]


def empty_figure(title: str | None, message: str) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(
        text=html.escape(message), showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font=dict(size=16)
    )
    fig.update_layout(
        title=title, template="plotly_white", height=300, xaxis=dict(visible=False), yaxis=dict(visible=False)
    )
    return fig


def rest_hover(f, rest: np.ndarray, metric: str, short: bool) -> dict:
    """Hover of a family's points off its front: each one's full text (number, config,
    params, metric), or in a big figure (`short`) a template plotly fills from the point
    (number, params, metric; the config is in the trials table): 10^5 full texts would be
    most of the page."""
    if not short:
        return dict(text=[f.hover_at(i) for i in np.flatnonzero(rest)], hovertemplate="%{text}<extra></extra>")
    return dict(
        customdata=f.numbers[rest],
        hovertemplate=(
            f"<b>#%{{customdata}}</b> {html.escape(f.family)}<br>params %{{x:,.0f}}<br>"
            f"{html.escape(metric)} %{{y:.4g}}<extra></extra>"
        ),
    )


def pareto_figure(
    data: FrontData,
    *,
    title: str | None = None,
    metric_label: str | None = None,
    params_label: str = "trainable parameters",
    extrapolation: Extrapolation | None = None,
) -> go.Figure:
    """Metric vs. parameters (log x), one colour per family.

    Per family: every complete trial as a faint marker (error bars = std over repeats),
    the family front as a bold step line with highlighted markers. The step line is
    ``line_shape="hv"``: with params ascending, the best metric achievable with at most
    x parameters holds horizontally until the next front member. The last step extends
    to the largest parameter count of the study. Members of the all-families front get a
    black ring. With `extrapolation` (reports/extrapolation.py), each trusted family's law
    continues past its largest trial (`add_extrapolation`).
    """
    metric_label = metric_label or data.metric
    if data.empty:
        return empty_figure(title, "no complete trials yet")
    fig = go.Figure()
    x_end = data.max_params
    trace = scatter_type(sum(len(f.params) for f in data.families))
    for f in data.families:
        err = np.isfinite(f.stds).any()
        rest = ~f.on_front
        fig.add_trace(
            trace(
                x=f.params[rest],
                y=f.values[rest],
                mode="markers",
                name=f"{html.escape(f.family)} trials",
                legendgroup=f.family,
                showlegend=bool(rest.any()),
                marker=dict(color=f.color, size=7, opacity=0.45),
                error_y=dict(
                    type="data", array=nan_to_none(f.stds[rest]), visible=True, thickness=1, width=2, color=f.color
                )
                if err
                else None,
                **rest_hover(f, rest, data.metric, trace is go.Scattergl),
            )
        )
        fi = f.front_index
        fx = list(f.params[fi])
        fy = list(f.values[fi])
        line_x, line_y = fx, fy
        if fx and x_end > fx[-1]:
            line_x, line_y = fx + [x_end], fy + [fy[-1]]
        fig.add_trace(
            trace(
                x=line_x,
                y=line_y,
                mode="lines",
                line_shape="hv",
                name=f"{html.escape(f.family)} front",
                legendgroup=f.family,
                showlegend=False,
                hoverinfo="skip",
                line=dict(color=f.color, width=2.5),
            )
        )
        fig.add_trace(
            trace(
                x=fx,
                y=fy,
                mode="markers",
                name=f"{html.escape(f.family)} front",
                legendgroup=f.family,
                marker=dict(color=f.color, size=11, line=dict(color="white", width=1.5)),
                error_y=dict(
                    type="data",
                    array=nan_to_none(f.stds[fi]),
                    visible=bool(np.isfinite(f.stds[fi]).any()),
                    thickness=1.5,
                    width=4,
                    color=f.color,
                ),
                text=[f.hover_at(i) for i in fi],
                hovertemplate="%{text}<extra></extra>",
            )
        )
    if extrapolation is not None:
        add_extrapolation(fig, extrapolation, {f.family: f.color for f in data.families})
    ox, oy = [], []
    for f in data.families:
        ox.extend(f.params[f.on_overall_front])
        oy.extend(f.values[f.on_overall_front])
    fig.add_trace(
        trace(
            x=ox,
            y=oy,
            mode="markers",
            name="overall front",
            hoverinfo="skip",
            marker=dict(symbol="circle-open", size=17, color="black", line=dict(width=1.5)),
        )
    )
    fig.update_layout(
        title=title,
        template="plotly_white",
        height=560,
        legend=dict(orientation="v", groupclick="toggleitem"),
        hovermode="closest",
        margin=dict(l=60, r=20, t=60 if title else 30, b=50),
    )
    fig.update_xaxes(type="log", title_text=f"{params_label} (log)")
    fig.update_yaxes(title_text=f"{metric_label} {arrow(data.direction)} better")
    return fig


def add_extrapolation(fig: go.Figure, ext: Extrapolation, colors: dict[str, str]) -> None:
    """Per curve: its interval band, the law as a dashed line (in the family's colour and
    legend group) and a diamond with the interval's error bar at each target."""
    for i, c in enumerate(ext.curves):
        color = colors.get(c.family, PALETTE[i % len(PALETTE)])
        fam = html.escape(c.family)
        band = np.isfinite(c.low) & np.isfinite(c.high)
        if band.any():
            xs = list(c.x[band])
            fig.add_trace(
                go.Scatter(
                    x=xs + xs[::-1],
                    y=list(c.high[band]) + list(c.low[band])[::-1],
                    mode="lines",
                    fill="toself",
                    fillcolor=color,
                    opacity=0.15,
                    line={"width": 0},
                    name=f"{fam} predicted {ext.confidence:.0%}",
                    legendgroup=c.family,
                    showlegend=False,
                    hoverinfo="skip",
                )
            )
        fig.add_trace(
            go.Scatter(
                x=c.x,
                y=nan_to_none(c.value),
                mode="lines",
                name=f"{fam} predicted",
                legendgroup=c.family,
                line={"color": color, "width": 2, "dash": "dash"},
                hovertemplate=f"{fam} predicted<br>%{{x:.3s}} params<br>%{{y:.4g}}<extra></extra>",
            )
        )
        if len(c.targets):
            fig.add_trace(
                go.Scatter(
                    x=c.targets,
                    y=nan_to_none(c.at),
                    mode="markers",
                    name=f"{fam} at the targets",
                    legendgroup=c.family,
                    showlegend=False,
                    marker={"symbol": "diamond", "size": 12, "color": color, "line": {"color": "black", "width": 1}},
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": nan_to_none(c.at_high - c.at),
                        "arrayminus": nan_to_none(c.at - c.at_low),
                        "color": color,
                        "thickness": 1.5,
                        "width": 6,
                    },
                    hovertemplate=f"{fam} at %{{x:.3s}} params<br>predicted %{{y:.4g}}<extra></extra>",
                )
            )


def hypervolume_figure(
    data: HypervolumeData, *, title: str | None = None, metric_label: str | None = None
) -> go.Figure:
    """Hypervolume vs. trial number: one step line per family and one for all families,
    each drawn through its corners only (`steps`: a marker where the hypervolume grew)."""
    metric_label = metric_label or data.metric
    if data.empty or data.overall is None:
        return empty_figure(title, "no complete trials yet")
    fig = go.Figure()
    series = [(s.name, s.color, *steps(s.numbers, s.values)) for s in data.families]
    overall = steps(data.overall.numbers, data.overall.values)
    trace = scatter_type(sum(len(x) for _, _, x, _ in series) + len(overall[0]))
    for name, color, x, y in series:
        fam = html.escape(name)
        fig.add_trace(
            trace(
                x=x,
                y=y,
                mode="lines+markers",
                line_shape="hv",
                name=fam,
                line=dict(color=color, width=2),
                marker=dict(size=5),
                hovertemplate=f"{fam}<br>trial #%{{x}}<br>hypervolume %{{y:.4g}}<extra></extra>",
            )
        )
    fig.add_trace(
        trace(
            x=overall[0],
            y=overall[1],
            mode="lines",
            line_shape="hv",
            name="all families",
            line=dict(color="black", width=3, dash="dot"),
            hovertemplate="all families<br>trial #%{x}<br>hypervolume %{y:.4g}<extra></extra>",
        )
    )
    xname = "log10 params" if data.log_params else "params"
    fig.update_layout(
        title=title,
        template="plotly_white",
        height=420,
        hovermode="closest",
        margin=dict(l=60, r=20, t=60 if title else 30, b=50),
    )
    fig.update_xaxes(title_text="trial number")
    fig.update_yaxes(title_text=f"hypervolume ({xname} × {metric_label})")
    return fig


def learning_figure(data: LearningCurves, *, title: str | None = None) -> go.Figure:
    """Training loss (left) and the validation metric (right) per epoch, one line per run."""
    from plotly.subplots import make_subplots

    if data.empty:
        return empty_figure(title, "no epochs recorded")
    fig = make_subplots(rows=1, cols=2, subplot_titles=("training loss", f"validation {html.escape(data.metric)}"))
    for i, run in enumerate(data.runs):
        name, color = f"seed {run.seed}", PALETTE[i % len(PALETTE)]
        for col, values in ((1, run.train_loss), (2, run.metric)):
            fig.add_trace(
                go.Scatter(
                    x=run.epochs,
                    y=nan_to_none(np.asarray(values)),
                    mode="lines+markers",
                    name=name,
                    legendgroup=name,
                    showlegend=col == 1,
                    line=dict(color=color),
                    hovertemplate=f"{name}<br>epoch %{{x}}<br>%{{y:.4g}}<extra></extra>",
                ),
                row=1,
                col=col,
            )
    fig.update_layout(title=title, template="plotly_white", height=380, margin=dict(l=60, r=20, t=60, b=50))
    fig.update_xaxes(title_text="epoch")
    return fig


def wins_figure(verdicts: list[Verdict], metric: str, *, params_label: str = "trainable parameters") -> go.Figure:
    """Each family's best value within each budget (a line over the budgets, log x) with
    its confidence band where the repeats give one."""
    families = [r.family for r in verdicts[0].families] if verdicts else []
    if not any(r.value is not None for v in verdicts for r in v.families):
        return empty_figure(None, "no complete trials yet")
    fig = go.Figure()
    for i, fam in enumerate(sorted(families)):
        color = PALETTE[i % len(PALETTE)]
        pts = [(v.budget, r) for v in verdicts for r in v.families if r.family == fam and r.value is not None]
        band = [(b, r) for b, r in pts if r.low is not None]
        if band:
            xs = [b for b, _ in band]
            fig.add_trace(
                go.Scatter(
                    x=xs + xs[::-1],
                    y=[r.high for _, r in band] + [r.low for _, r in band][::-1],
                    mode="lines",
                    fill="toself",
                    fillcolor=color,
                    opacity=0.2,
                    line=dict(width=0),
                    name=f"{html.escape(fam)} interval",
                    legendgroup=fam,
                    hoverinfo="skip",
                )
            )
        fig.add_trace(
            go.Scatter(
                x=[b for b, _ in pts],
                y=[r.value for _, r in pts],
                mode="lines+markers",
                name=html.escape(fam),
                legendgroup=fam,
                line=dict(color=color, width=2.5),
                text=[f"#{r.number}, {r.params:.4g} params" for _, r in pts],
                hovertemplate=f"{html.escape(fam)}<br>budget %{{x:.4g}}<br>{html.escape(metric)} "
                "%{y:.4g}<br>%{text}<extra></extra>",
            )
        )
    fig.update_layout(template="plotly_white", height=420, margin=dict(l=60, r=20, t=30, b=50))
    fig.update_xaxes(type="log", title_text=f"budget: {params_label} (log)")
    fig.update_yaxes(title_text=f"best {metric} within the budget")
    return fig


def translucent(color: str, alpha: float) -> str:
    """ "#1f77b4" as "rgba(31, 119, 180, alpha)" (a band's fill: a trace's opacity does not reach it)."""
    c = color.lstrip("#")
    r, g, b = (int(c[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r}, {g}, {b}, {alpha})"


def attainment_figure(
    surfaces: dict[str, dict[float, np.ndarray]],
    metric: str,
    direction: str,
    *,
    params_label: str = "trainable parameters",
) -> go.Figure:
    """Each family's median attainment surface over replicate searches (a step line) with
    the band between its 25% and 75% surfaces (reports/attainment.py)."""
    from reports.attainment import step_values

    fig = go.Figure()
    for i, (fam, surf) in enumerate(sorted(surfaces.items())):
        color = PALETTE[i % len(PALETTE)]
        upper, lower, median = surf.get(25.0), surf.get(75.0), surf.get(50.0)
        if upper is not None and lower is not None and len(upper) and len(lower):
            xs = np.unique(np.concatenate([upper[:, 0], lower[:, 0]]))
            hi, lo = step_values(upper, xs, direction), step_values(lower, xs, direction)
            for ys, fill in ((hi, None), (lo, "tonexty")):
                fig.add_trace(
                    go.Scatter(
                        x=10**xs,
                        y=ys,
                        mode="lines",
                        line=dict(width=0, shape="hv"),
                        fill=fill,
                        fillcolor=translucent(color, 0.25),
                        name=f"{html.escape(fam)} 25-75%",
                        legendgroup=fam,
                        showlegend=fill is not None,
                        hoverinfo="skip",
                    )
                )
        if median is not None and len(median):
            fig.add_trace(
                go.Scatter(
                    x=10 ** median[:, 0],
                    y=median[:, 1],
                    mode="lines+markers",
                    line=dict(color=color, width=2.5, shape="hv"),
                    name=f"{html.escape(fam)} median",
                    legendgroup=fam,
                    hovertemplate=f"{html.escape(fam)} (median of the searches)<br>%{{x:.4g}} params<br>"
                    f"{html.escape(metric)} %{{y:.4g}}<extra></extra>",
                )
            )
    if not fig.data:
        return empty_figure(None, "no complete trials yet")
    fig.update_layout(template="plotly_white", height=420, margin=dict(l=60, r=20, t=30, b=50))
    fig.update_xaxes(type="log", title=params_label)
    fig.update_yaxes(title=metric)
    return fig
