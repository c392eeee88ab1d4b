"""Writing the static site: the study pages, the index and plotly's JavaScript into a
folder (`search report`, `search run`'s page), each file written whole (a reader never
sees half a page)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from plotly.offline import get_plotlyjs

from reports.html import PLOTLY_JS
from reports.samples import SamplesFor
from reports.site import index_page, study_filename, study_page
from storage.records import StudyRecord


def write_plotly_js(out_dir: Path) -> Path:
    """Write plotly's JavaScript to ``out_dir/plotly.min.js`` unless it is already identical."""
    path = out_dir / PLOTLY_JS
    data = get_plotlyjs().encode("utf-8")
    if path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
        return path
    tmp = path.with_suffix(".js.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return path


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_site(
    studies: Sequence[tuple[StudyRecord, pd.DataFrame]],
    out_dir: str | Path,
    samples_for: SamplesFor | None = None,
    predict_at: Sequence[float] = (),
    kept: Any | None = None,
) -> Path:
    """Write ``index.html``, one ``study-<slug>.html`` per study and ``plotly.min.js``.

    Args:
        studies: (record, trials frame) per study, in the order they are listed.
        out_dir: folder to write into (created when missing).
        samples_for: (study, trial number) -> that trial's sample-grid artifacts (e.g.
            ``lambda s, n: store.artifacts(s, n, "samples")``); asked only for
            Pareto-optimal trials. None: no sample section.
        predict_at: budgets (above every study's) at which the fronts' figures mark each
            family's predicted value (`study_page`).
        kept: the kept weights and retrainings (`reports.kept.store_kept(store)`), shown
            on each study page; None: not shown.

    Returns:
        The path of ``index.html``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    studies = list(studies)
    links: list[str] = []
    used: set[str] = set()
    for rec, _ in studies:
        name = study_filename(rec.name)
        stem, i = name[: -len(".html")], 2
        while name in used:  # the same study name twice in the list
            name, i = f"{stem}-{i}.html", i + 1
        used.add(name)
        links.append(name)
    write_plotly_js(out)
    for (rec, df), link in zip(studies, links):
        _write_text(out / link, study_page(rec, df, samples_for, predict_at=predict_at, kept=kept))
    index = out / "index.html"
    _write_text(index, index_page(studies, links))
    return index
