"""What the pages show of a study's kept files and retrainings (issue 34): each kept
weights file's size and sha256 (with a download link on `search serve`), and each
retraining (`search train`) beside the search's result of the same trial.

The data comes from a source (`StoreKept`, over a `Store`): the study page reads the
weights of all its trials and all its retrainings in two queries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from reports import figures
from reports.curves import learning_curves
from reports.formatting import format_bytes, format_mean_std, format_params, format_value
from reports.html import esc, figure_html, html_table
from storage.records import RetrainingRecord, StudyRecord

WEIGHTS_ARTIFACT = "weights"  # the artifact name of a run's kept weights (search/artifacts/weights.py)
# (study, trial number, retraining (0: the search's run), repeat) -> the URL that downloads it
DownloadLink = Callable[[str, int, int, int], str]


class StoreKept:
    """A store's kept weights and retrainings, as the pages read them; `download` (the
    live server's) gives each file's download link."""

    def __init__(self, store: Any, download: DownloadLink | None = None) -> None:
        self.store, self.download = store, download

    def weights(self, study: str, numbers: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
        return self.store.artifacts_of(study, numbers, WEIGHTS_ARTIFACT)

    def retrainings(self, study: str, numbers: Sequence[int] | None = None) -> list[RetrainingRecord]:
        return self.store.retrainings(study, numbers)


def store_kept(store: Any, download: DownloadLink | None = None) -> StoreKept:
    return StoreKept(store, download)


def _link(href: str | None, text: str) -> str:
    return f'<a href="{esc(href)}">{esc(text)}</a>' if href else esc(text)


def weights_rows(
    study: str,
    files: Sequence[tuple[int, int, dict[str, Any]]],
    download: DownloadLink | None = None,
    trial_link: Callable[[str], str] | None = None,
) -> str:
    """A table of kept files: (trial number, retraining, artifact record) each, with run,
    seed, size, sha256 and, when `download` is given and the file is kept, its link."""
    if not files:
        return '<p class="muted">No weights kept.</p>'
    head = ["trial", "run", "seed", "size", "sha256", "file"]
    rows = []
    for number, retraining, a in files:
        removed = a.get("removed_at") is not None
        href = None if removed or download is None else download(study, number, retraining, int(a["repeat"]))
        name = "removed (off the front)" if removed else ("download" if href else str(a.get("store_key") or ""))
        trial = _link(trial_link(str(number)) if trial_link else None, str(number))
        run = f"{a['repeat']}" + (f" (retraining {retraining})" if retraining else "")
        rows.append(
            "<tr>"
            + "".join(
                [
                    f'<td class="num">{trial}</td>',
                    f'<td class="num">{esc(run)}</td>',
                    f'<td class="num">{esc(format_value(a.get("seed")))}</td>',
                    f'<td class="num">{esc(format_bytes(a.get("size")))}</td>',
                    f'<td><code class="sha256">{esc(a.get("sha256") or "")}</code></td>',
                    f"<td>{_link(href, name)}</td>",
                ]
            )
            + "</tr>"
        )
    return (
        '<table class="sortable weights"><thead><tr>'
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody></table>"
    )


def retrained_table(record: StudyRecord, df: pd.DataFrame, retrainings: Sequence[RetrainingRecord]) -> pd.DataFrame:
    """One row per retraining: the trial, its search result (mean ± std over its runs, at
    the study's epochs) and the retraining's (at its epochs, over its runs)."""
    metric = record.metric
    search_epochs = ((record.settings or {}).get("train") or {}).get("epochs")
    by_number = {int(r.number): r for r in df.itertuples(index=False)} if len(df) else {}
    rows = []
    for r in retrainings:
        t = by_number.get(int(r.trial))
        mean, std, n = r.metrics.get(metric, (None, None, 0))
        rows.append(
            {
                "number": r.trial,
                "retraining": r.number,
                "family": getattr(t, "family", ""),
                "params": format_params(getattr(t, "params", None)),
                f"search {metric}": format_mean_std(getattr(t, metric, None), getattr(t, f"{metric}_std", None)),
                "search epochs": format_value(search_epochs) if search_epochs else "task default",
                f"retrained {metric}": format_mean_std(mean, std),
                "runs": n,
                "epochs": r.epochs,
                "recipe": r.settings.get("recipe") or "",
                "status": r.status,
            }
        )
    return pd.DataFrame(rows)


def retrained_html(
    record: StudyRecord,
    df: pd.DataFrame,
    retrainings: Sequence[RetrainingRecord],
    trial_link: Callable[[str], str] | None = None,
) -> str:
    """The "Trained again" section of a study page ('' without retrainings)."""
    if not retrainings:
        return ""
    table = retrained_table(record, df, retrainings)
    return (
        "<h2>Trained again</h2>"
        f'<p class="muted">Configurations trained again with <code>search train</code> (longer, more seeds, '
        f"a recipe's settings), beside the search's result; the fronts above are the search's.</p>"
        f'<div class="scroll">{html_table(table, numeric=["retraining", "runs", "epochs"], number_link=trial_link)}'
        "</div>"
    )


def study_kept_html(
    record: StudyRecord, df: pd.DataFrame, kept: StoreKept, trial_link: Callable[[str], str] | None = None
) -> str:
    """A study page's "Trained again" and "Kept weights" sections."""
    numbers = [int(n) for n in df["number"]] if len(df) else []
    retrainings = kept.retrainings(record.name)
    files = [
        (n, 0, a)
        for n, rows in sorted(kept.weights(record.name, numbers).items())
        for a in rows
        if a.get("removed_at") is None
    ]
    files += [
        (r.trial, r.number, {**a, "repeat": run["repeat"], "seed": run["seed"]})
        for r in retrainings
        for run in r.runs
        for a in run["artifacts"]
        if a["name"] == WEIGHTS_ARTIFACT
    ]
    parts = [retrained_html(record, df, retrainings, trial_link)]
    if files:
        parts.append(f"<h2>Kept weights ({len(files)})</h2>")
        parts.append(
            '<p class="muted">The trained models kept (one safetensors file per run): '
            "<code>search model STUDY TRIAL --out DIR</code> or <code>search.load_model</code> loads one, "
            "its size and sha256 checked against these.</p>"
        )
        parts.append(f'<div class="scroll">{weights_rows(record.name, files, kept.download, trial_link)}</div>')
    return "\n".join(p for p in parts if p)


def trial_kept_html(
    record: StudyRecord,
    number: int,
    weights: Sequence[dict[str, Any]],
    retrainings: Sequence[RetrainingRecord],
    download: DownloadLink | None = None,
    retrained_epochs: dict[int, list[dict[str, Any]]] | None = None,
) -> str:
    """A trial page's "Kept weights" and "Trained again" sections (with each retraining's
    learning curves when `retrained_epochs`, retraining number -> `Store.retraining_epochs`)."""
    metric = record.metric
    parts = [
        "<h2>Kept weights</h2>",
        weights_rows(
            record.name,
            [(number, 0, a) for a in weights]
            + [
                (number, r.number, {**a, "repeat": run["repeat"], "seed": run["seed"]})
                for r in retrainings
                for run in r.runs
                for a in run["artifacts"]
                if a["name"] == WEIGHTS_ARTIFACT
            ],
            download,
        ),
    ]
    if retrainings:
        rows = [
            {
                "retraining": r.number,
                "status": r.status,
                "epochs": r.epochs,
                "seeds": ", ".join(str(run["seed"]) for run in r.runs),
                f"{metric} (mean ± std)": format_mean_std(*r.metrics.get(metric, (None, None, 0))[:2]),
                "runs": r.metrics.get(metric, (None, None, 0))[2],
                "epochs per run": ", ".join(str(run["epochs"]) for run in r.runs),
                "recipe": r.settings.get("recipe") or "",
                "error": r.error or "",
            }
            for r in retrainings
        ]
        parts += [
            "<h2>Trained again</h2>",
            '<p class="muted">This configuration trained again with <code>search train</code>; the metrics '
            "above are the search's.</p>",
            html_table(pd.DataFrame(rows), numeric=["retraining", "epochs", "runs"], reason=["error"]),
        ]
        for k, rows_k in sorted((retrained_epochs or {}).items()):
            if rows_k:
                parts += [
                    f"<h3>Retraining {k}: learning curves</h3>",
                    figure_html(figures.learning_figure(learning_curves(rows_k, metric)), f"retraining-{k}-figure"),
                ]
    return "\n".join(parts)
