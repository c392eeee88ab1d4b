"""Pages only the live server shows: one trial (configuration, runs, learning curves)
and several studies' fronts on one plot."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from core.errors import UserError
from reports import combined, figures, fronts, tables
from reports.curves import learning_curves
from reports.extrapolation import extrapolate, extrapolation_note
from reports.formatting import format_mean_std, format_params, format_value
from reports.html import esc, figure_html, html_table, page
from reports.kept import trial_kept_html
from reports.site import settings_html
from storage.records import StudyRecord, TrialRecord
from verdicts import candidates, compare


def trial_page(
    record: StudyRecord,
    trial: TrialRecord,
    epochs: list[dict[str, Any]],
    study_link: str,
    refresh_s: int | None = None,
    weights: Sequence[dict[str, Any]] = (),
    retrainings: Sequence[Any] = (),
    download: Any | None = None,
    retrained_epochs: dict[int, list[dict[str, Any]]] | None = None,
) -> str:
    """One trial: its configuration, status, metrics (mean ± std over runs), each run's
    per-epoch training loss and validation metric, its kept weights files (size, sha256,
    `download(study, number, retraining, repeat)`'s link) and its retrainings (with their
    learning curves: `retrained_epochs`)."""
    meta = [
        ("study", f'<a href="{esc(study_link)}">{esc(record.name)}</a>'),
        ("family", esc(trial.family)),
        ("status", esc(trial.status)),
        ("params", esc(format_params(trial.params))),
        ("config", settings_html(trial.config)),
        ("seeds", settings_html(list(trial.seeds))),
    ]
    for label, value in (
        ("attempt", trial.attempt or None),
        ("retry of", trial.retry_of),
        ("device", trial.device),
        ("duration", None if trial.duration_s is None else f"{trial.duration_s:.1f} s"),
        ("note", trial.note),
        ("error", trial.error),
    ):
        if value is not None:
            meta.append((label, esc(format_value(value))))
    dl = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in meta)
    metrics = pd.DataFrame(
        [
            {"metric": name, "mean ± std": format_mean_std(mean, std), "runs": n}
            for name, (mean, std, n) in trial.metrics.items()
        ]
    )
    curves = learning_curves(epochs, record.metric)
    best = max if record.direction == "maximize" else min
    runs = pd.DataFrame(
        [
            {
                "run": r.repeat,
                "seed": r.seed,
                "epochs": len(r.epochs),
                "last train loss": format_value(r.train_loss[-1]) if r.train_loss else "",
                f"best validation {record.metric}": format_value(best(r.metric)) if r.metric else "",
            }
            for r in curves.runs
        ]
    )
    body = [
        f'<nav><a href="{esc(study_link)}">← {esc(record.name)}</a></nav>',
        f"<h1>Trial #{trial.number} of {esc(record.name)}</h1>",
        f'<dl class="meta">{dl}</dl>',
        "<h2>Metrics</h2>",
        html_table(metrics, empty="No metrics (the trial has no complete run)."),
        "<h2>Runs</h2>",
        html_table(runs, numeric=["run", "seed", "epochs"], empty="No epochs recorded yet."),
        "<h2>Learning curves</h2>",
        figure_html(figures.learning_figure(curves), "learning-figure"),
        trial_kept_html(record, trial.number, weights, retrainings, download, retrained_epochs),
    ]
    return page(f"trial #{trial.number} — {record.name}", "\n".join(body), plotly=True, refresh_s=refresh_s)


def compare_page(studies: Sequence[tuple[StudyRecord, pd.DataFrame]], predict_at: Sequence[float] = ()) -> str:
    """Several studies' fronts on one plot, with their Pareto-optimal configurations
    (`reports.combined.combined_frame`), each front's fitted law continued past the search
    to the largest of `predict_at` (none: 10 times the largest budget) with a marker at
    each (reports/extrapolation.py)."""
    if len(studies) < 2:
        raise UserError("choose at least two studies to compare")
    df = combined.combined_frame(studies)
    rec = studies[0][0]
    data = fronts.front_data(df, rec.metric, rec.direction)
    names = ", ".join(r.name for r, _ in studies)
    body = [
        '<nav><a href="index.html">← all studies</a></nav>',
        f"<h1>Compare: {esc(names)}</h1>",
        f'<p class="muted">Task {esc(rec.task)}, metric {esc(rec.metric)} ({esc(rec.direction)}); '
        "each line is one study's family front.</p>",
    ]
    if data.empty:
        body.append('<p class="empty">None of these studies has a complete trial yet.</p>')
    else:
        ext = extrapolate(df, rec.metric, rec.direction, max(r.budget for r, _ in studies), predict_at)
        body.append(
            figure_html(figures.pareto_figure(data, metric_label=rec.metric, extrapolation=ext), "compare-figure")
        )
        body.append(f'<p class="muted">{esc(extrapolation_note(ext, rec.metric))}</p>')
        table = tables.pareto_table(df, rec.metric, rec.direction, formatted=True, data=data)
        table.insert(1, "trial", [int(df["trial"].iloc[n]) for n in table["number"]])
        table = table.drop(columns="number")
        body.append(f'<div class="scroll">{html_table(table, status_col=None)}</div>')
        body.append(compare_wins(studies, df))
    return page(f"compare {names}", "\n".join(body), plotly=not data.empty)


def compare_wins(studies: Sequence[tuple[StudyRecord, pd.DataFrame]], df: pd.DataFrame, levels: int = 5) -> str:
    """The "Which shape wins" section of several studies: pooled when they are replicate
    searches of one question (`search run --search-repeats`), else on the combined frame."""
    from reports.site import POOLED_NOTE, WINS_NOTE, wins_section

    rec = studies[0][0]
    groups = {(r.settings or {}).get("replicate_of") for r, _ in studies}
    label = "parameters" if (rec.settings or {}).get("budget_of", "params") == "params" else rec.settings["budget_of"]
    if len(groups) == 1 and None not in groups:
        pooled = combined.combined_frame(studies, label_shared=False)
        reps = [candidates.candidates(pooled[pooled["study"] == r.name], rec.metric) for r, _ in studies]
        levels_at = candidates.default_levels(candidates.candidates(pooled, rec.metric), levels)
        verdicts = compare.compare_replicates(reps, levels_at, rec.direction)
        return wins_section(verdicts, rec.metric, label, POOLED_NOTE) + attainment_section(reps, rec, label)
    fixed = all(candidates.smallest_by_design(r.settings) for r, _ in studies)  # as `search compare` reads them
    cands = candidates.candidates(df, rec.metric, smallest_fixed=fixed)
    verdicts = compare.compare_at(cands, candidates.default_levels(cands, levels), rec.direction)
    return wins_section(verdicts, rec.metric, label, WINS_NOTE)


ATTAINMENT_NOTE = (
    "How each family's front varies between the replicate searches (the empirical attainment "
    "function, computed by moocore): the line is the front at least half of the searches reach "
    "(a point is reached by a search with a configuration of no more parameters and a value at "
    "least as good), the band lies between the fronts a quarter and three quarters of them reach."
)


def attainment_section(reps: list, rec: StudyRecord, params_label: str) -> str:
    """The replicate searches' attainment surfaces per family (reports/attainment.py); no
    section where moocore is not installed."""
    try:
        from reports.attainment import attainment_surfaces, family_points
    except ImportError:  # pragma: no cover - moocore is a dependency
        return ""
    families = sorted({f for r in reps for f in r})
    surfaces = {f: attainment_surfaces(family_points(reps, f), rec.direction) for f in families}
    fig = figures.attainment_figure(surfaces, rec.metric, rec.direction, params_label=params_label)
    return f'<h2>How the fronts vary between the searches</h2><p class="muted">{ATTAINMENT_NOTE}</p>' + figure_html(
        fig, "attainment-figure"
    )
