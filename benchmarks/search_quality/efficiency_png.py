"""The search-efficiency curves of a benchmarks/search_quality/search_efficiency.py --out JSON as a PNG:
per search, the median (over seeds) fraction of the reference front's hypervolume against
trials and against summed training seconds; the full grid as one curve.

    python -m benchmarks.search_quality.efficiency_png RESULTS.json SETTING OUT.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from benchmarks.bench_util import screenshot


def median_curve(curves: list[dict], x: str, grid: np.ndarray) -> np.ndarray:
    """Median over seeds of each curve's best fraction reached by every value of `grid`."""
    ys = []
    for c in curves:
        xs, fr = np.asarray(c[x], dtype=float), np.asarray(c["fraction"], dtype=float)
        idx = np.searchsorted(xs, grid, side="right") - 1
        ys.append(np.where(idx >= 0, fr[np.clip(idx, 0, None)], 0.0))
    return np.median(np.vstack(ys), axis=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("setting")
    ap.add_argument("out")
    a = ap.parse_args()
    data = json.loads(Path(a.results).read_text())["settings"][a.setting]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("against trials", "against training seconds"))
    for i, (name, curves) in enumerate(data["curves"].items()):
        curves = curves if isinstance(curves, list) else [curves]
        color = ["#d55e00", "#0072b2", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000"][i % 7]
        dash = "dot" if name == "full grid" else None
        for col, x in ((1, "trials"), (2, "compute_s")):
            top = max(max(c[x]) for c in curves if c[x])
            grid = np.linspace(0, top, 300) if x == "compute_s" else np.arange(1, int(top) + 1)
            fig.add_trace(
                go.Scatter(
                    x=grid,
                    y=median_curve(curves, x, grid),
                    mode="lines",
                    name=name,
                    legendgroup=name,
                    showlegend=col == 1,
                    line=dict(color=color, dash=dash),
                ),
                row=1,
                col=col,
            )
    fig.update_yaxes(title_text="hypervolume fraction (median over seeds)", range=[0.5, 1.0], row=1, col=1)
    fig.update_yaxes(range=[0.5, 1.0], row=1, col=2)
    fig.update_xaxes(title_text="trials", type="log", row=1, col=1)
    fig.update_xaxes(title_text="summed training seconds", type="log", row=1, col=2)
    fig.update_layout(
        width=1000,
        height=450,
        title=f"search efficiency: {a.setting}",
        template="plotly_white",
        margin=dict(l=60, r=20, t=60, b=50),
    )
    screenshot(fig, a.out, 1020, 470)
    print(a.out)


if __name__ == "__main__":
    main()
