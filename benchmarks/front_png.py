"""A study's Pareto fronts as a PNG for the docs: the report's own figure
(reports.figures.pareto_figure), written to a page and shot with headless Chromium.

    python -m benchmarks.front_png STUDY OUT.png [--storage URL] [--title TEXT]
"""

from __future__ import annotations

import argparse

from benchmarks.bench_util import screenshot
from reports.figures import pareto_figure
from reports.fronts import front_data
from storage import Store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("study")
    ap.add_argument("out")
    ap.add_argument("--storage")
    ap.add_argument("--title")
    a = ap.parse_args()
    store = Store(a.storage)
    rec, df = store.get_study(a.study), store.trials_frame(a.study)
    label = str((rec.settings or {}).get("param_convention") or "trainable parameters")  # as the pages
    fig = pareto_figure(front_data(df, rec.metric, rec.direction), title=a.title or a.study, params_label=label)
    fig.update_layout(width=900, height=500, margin=dict(l=60, r=20, t=50, b=50))
    screenshot(fig, a.out, 920, 520)
    print(a.out)


if __name__ == "__main__":
    main()
