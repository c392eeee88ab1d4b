"""A static HTML site of studies that opens offline.

Layout of ``out_dir``::

    index.html              one row per study, with a link to its page
    study-<slug>.html       one page per study
    plotly.min.js           plotly's JavaScript, written once, referenced relatively

Figures are embedded as ``fig.to_html(full_html=False, include_plotlyjs=False)``
fragments in our own template, so no page needs the network. Every piece of user text
(study names, configs, notes, errors, settings) is escaped with ``html.escape``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from core.budget import format_count
from core.directions import arrow
from core.statuses import FAILURE_STATUSES, HEADLINE_STATUSES
from reports import figures, fronts, tables, verdict_tables
from reports.extrapolation import extrapolate, extrapolation_note
from reports.formatting import format_mean_std, format_params, format_time, format_value
from reports.html import esc, figure_html, html_table, page
from reports.lazy_table import table_html
from reports.samples import SamplesFor, samples_html
from reports.savings import early_stopping_savings, savings_line
from storage.frames import gc_paused
from storage.records import StudyRecord
from verdicts import candidates, compare, undecided


def slugify(name: str, max_len: int = 60) -> str:
    """A safe file-name part for a study name.

    Lower-case letters, digits, '.', '_' and '-' only. When that changes the name (or
    leaves nothing), a short hash of the original name is appended, so different names
    never share a slug: ``"My study!"`` -> ``"my-study-3f2a1c"``.
    """
    text = str(name)
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")
    slug = re.sub(r"-{2,}", "-", slug)[:max_len].strip("-.")
    if slug != text or not slug:
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:6]
        slug = f"{slug}-{digest}" if slug else f"study-{digest}"
    return slug


def study_filename(name: str) -> str:
    return f"study-{slugify(name)}.html"


def settings_html(value: Any) -> str:
    """A study setting as escaped HTML: a nested key/value table for a dict (None shown as
    "default": the task's or the executor's own), a comma list for a list, text otherwise."""
    if isinstance(value, dict):
        if not value:
            return '<span class="muted">none</span>'
        rows = "".join(f"<tr><td>{esc(k)}</td><td>{settings_html(v)}</td></tr>" for k, v in value.items())
        return f'<table class="kv">{rows}</table>'
    if isinstance(value, (list, tuple)):
        return esc(", ".join(format_value(v) if not isinstance(v, str) else v for v in value)) or "none"
    if value is None:
        return '<span class="muted">default</span>'
    return esc(format_value(value) if not isinstance(value, str) else value)


def _budget_text(budget: Any) -> str:
    try:
        b = int(budget)
    except (TypeError, ValueError):
        return str(budget)
    return f"{format_count(b)} ({b:,} parameters)"


def _counts_html(counts: dict[str, int]) -> str:
    parts = [
        f'<span><span class="badge s-{esc(s)}">{esc(s)}</span> {n}</span>'
        for s, n in counts.items()
        if n or s in HEADLINE_STATUSES
    ]
    total = sum(counts.values())
    return f'<p class="counts">{"".join(parts)} <span class="muted">total {total}</span></p>'


def _ensure_frame(df: pd.DataFrame | None) -> pd.DataFrame:
    if df is None:
        return pd.DataFrame(columns=["number", "status", "family", "params", "config"])
    if len(df) and "number" in df.columns:
        df = df.sort_values("number", kind="stable")
    return df


WINS_NOTE = (
    "For each budget, each family's best {metric} with at most that many parameters and a 95% "
    "interval that carries both kinds of luck a second search would have: which configurations it "
    "finds (the trials resampled; each family's smallest model, which every search with corners "
    "trains, kept) and seed noise (from the seed checks a one-seed search ends with, "
    "or from <code>--repeats</code>). The "
    "verdict says whether the leader is ahead beyond them; a family with no trial within a factor 3 "
    "below a budget is \u201ctoo thin to tell\u201d there. <code>search compare</code> prints the same "
    "for any budgets, across studies, and pooled over replicate searches (<code>search run "
    "--search-repeats K</code>)."
)
POOLED_NOTE = (
    "These studies are replicate searches of one question: for each budget, each family's value is "
    "the mean over the searches of each one's best {metric}, with the 95% Student t interval of "
    "that mean from the spread between the searches."
)


def wins_section(verdicts: list, metric: str, params_label: str, note: str, step: Sequence[str] = ()) -> str:
    """The "Which shape wins" section of `verdicts` (verdicts/compare.py): table and plot,
    then `step` (verdicts/undecided.py `next_step`'s lines), if any."""
    fig = figures.wins_figure(verdicts, metric, params_label=params_label)
    table = html_table(verdict_tables.wins_table(verdicts), status_col=None, reason=["verdict"])
    lines = "\n".join(step)  # kept as lines by the class's white-space
    after = f'<p class="next-step">{esc(lines)}</p>' if step else ""
    return (
        "<h2>Which shape wins</h2>"
        f'<p class="muted">{note.format(metric=esc(metric))}</p>'
        f'<div class="scroll">{table}</div>' + after + figure_html(fig, "wins-figure")
    )


def wins_html(
    df: pd.DataFrame, metric: str, direction: str, params_label: str, levels: int = 5, smallest_fixed: bool = False
) -> str:
    """The "Which shape wins" section: per budget, each family's best value with its
    interval (verdicts/compare.py) and the verdict, as a table and a plot with bands;
    `smallest_fixed` as `candidates.candidates`'."""
    cands = candidates.candidates(df, metric, smallest_fixed=smallest_fixed)
    verdicts = compare.compare_at(cands, candidates.default_levels(cands, levels), direction)
    return wins_section(verdicts, metric, params_label, WINS_NOTE, undecided.next_step(verdicts))


def study_page(
    record: StudyRecord,
    df: pd.DataFrame,
    samples_for: SamplesFor | None = None,
    *,
    trial_link: Callable[[str], str] | None = None,
    refresh_s: int | None = None,
    poll_url: str | None = None,
    predict_at: Sequence[float] = (),
    kept: Any | None = None,
) -> str:
    """`_study_page` with the cyclic garbage collector paused (`storage.frames.gc_paused`):
    a big study's page makes hundreds of thousands of rows and cells, each counting
    towards a pass over every live object (the frame's own); what it leaves in cycles
    (plotly's figures) is collected when the collector is back on."""
    with gc_paused():
        return _study_page(
            record,
            df,
            samples_for,
            trial_link=trial_link,
            refresh_s=refresh_s,
            poll_url=poll_url,
            predict_at=predict_at,
            kept=kept,
        )


def _study_page(
    record: StudyRecord,
    df: pd.DataFrame,
    samples_for: SamplesFor | None = None,
    *,
    trial_link: Callable[[str], str] | None = None,
    refresh_s: int | None = None,
    poll_url: str | None = None,
    predict_at: Sequence[float] = (),
    kept: Any | None = None,
) -> str:
    """The HTML text of one study's page (with the Pareto-optimal trials' sample grids
    when `samples_for` is given and they stored some). The live server passes
    `trial_link` (trial number -> its page), `refresh_s` (while trials run: reload that
    often) and `poll_url` (ask it that often instead, reload only when it says "changed").
    The front's figure continues each family's fitted law past the search up to the
    largest of `predict_at` (budgets above the study's; none: 10 times its budget) with
    a marker at each (reports/extrapolation.py). With `kept` (`reports.kept.StoreKept`) it
    shows the trials trained again beside the search's results and the kept weights files
    (size, sha256; a download link where the source gives one)."""
    df = _ensure_frame(df)
    metric, direction = record.metric, record.direction
    counts = tables.status_counts(df)
    data = fronts.front_data(df, metric, direction)  # computed once; the table reuses it
    best = tables.best_trial(df, metric, direction)

    meta = [
        ("task", esc(record.task)),
        ("families", esc(", ".join(map(str, record.families)))),
        ("metric", f"{esc(metric)} ({esc(direction)})"),
        ("budget", esc(_budget_text(record.budget))),
    ]
    if record.created_at is not None:
        meta.append(("created", esc(format_time(record.created_at))))
    for k, v in (record.settings or {}).items():
        meta.append((esc(k), settings_html(v)))
    if best is not None:
        meta.append(
            (
                "best",
                esc(
                    f"{format_mean_std(best['value'], best['std'])} — trial #{best['number']} "
                    f"({best['family']}, {format_params(best['params'])})"
                ),
            )
        )
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in meta)

    parts = [
        '<nav><a href="index.html">← all studies</a></nav>',
        f"<h1>{esc(record.name)}</h1>",
        f'<dl class="meta">{dl}</dl>',
    ]
    if data.empty:
        parts.append(
            '<h2>Pareto front</h2><p class="empty">This study has no complete trials '
            "yet, so there is no Pareto front or hypervolume to show.</p>"
        )
        uses_plotly = False
    else:
        title_metric = f"{metric} ({'higher' if direction == 'maximize' else 'lower'} is better)"
        parts.append("<h2>Pareto front</h2>")
        parts.append(
            '<p class="muted">Each family\'s front: the best '
            f"{esc(metric)} reached with at most that many parameters. Faint markers are "
            "the other complete trials; error bars are the std over repeated runs; "
            "black rings mark the front over all families.</p>"
        )
        params_label = str(record.settings.get("param_convention") or "trainable parameters")
        ext = extrapolate(df, metric, direction, record.budget, predict_at)
        parts.append(
            figure_html(
                figures.pareto_figure(data, metric_label=title_metric, params_label=params_label, extrapolation=ext),
                "pareto-figure",
            )
        )
        parts.append(f'<p class="muted">{esc(extrapolation_note(ext, metric))}</p>')
        if data.n_excluded:
            parts.append(
                f'<p class="muted">{data.n_excluded} complete trial(s) without a finite {esc(metric)} are left out.</p>'
            )
        parts.append("<h2>Pareto-optimal configurations</h2>")
        table = tables.pareto_table(df, metric, direction, formatted=True, data=data)
        parts.append(f'<div class="scroll">{html_table(table, status_col=None, number_link=trial_link)}</div>')
        fixed = candidates.smallest_by_design(record.settings)
        parts.append(wins_html(df, metric, direction, params_label, smallest_fixed=fixed))
        if samples_for is not None:
            parts.append(samples_html(record, table, samples_for))
        if kept is not None:
            from reports.kept import study_kept_html

            parts.append(study_kept_html(record, df, kept, trial_link))
        parts.append("<h2>Hypervolume</h2>")
        parts.append(
            '<p class="muted">Area dominated by the complete trials so far (objectives: '
            f"log10 parameters, minimised, and {esc(metric)}), against a fixed reference "
            "slightly worse than every complete trial of the study.</p>"
        )
        parts.append(
            figure_html(
                figures.hypervolume_figure(fronts.hypervolume_curves(df, metric, direction), metric_label=metric),
                "hypervolume-figure",
            )
        )
        uses_plotly = True

    parts.append("<h2>Status</h2>")
    parts.append(_counts_html(counts))
    problems = tables.problem_trials(df)
    parts.append(
        table_html(
            problems,
            "problem-trials",
            reason=["reason"],
            what="problem trials",
            tall=True,
            empty="No failed, diverged, interrupted or rejected trials.",
        )
    )
    pruned = tables.pruned_trials(df)
    if len(pruned):
        parts.append(f"<h2>Stopped early ({len(pruned)} pruned)</h2>")
        parts.append(
            '<p class="muted">Trials the pruner stopped because finished trials of their family with no '
            "more parameters were better at the same epoch (<code>--pruner pareto</code>: clearly better "
            "after the grace period; <code>--pruner rungs</code>: ranked ahead at a rung; "
            "<code>--pruner checked-rungs</code>: either, by the rung where it ranks the family's finished "
            "trials well); each reason says "
            "which. They count towards the trials but never join a front; their learning curves are on "
            "their trial pages.</p>"
        )
        savings = early_stopping_savings(df)
        if savings is not None:
            line = savings_line(savings)
            parts.append(f"<p>{esc(line[:1].upper() + line[1:])}.</p>")
        parts.append(
            table_html(
                pruned, "pruned-trials", reason=["reason"], what="pruned trials", tall=True, number_link=trial_link
            )
        )

    parts.append(f"<h2>All trials ({len(df)})</h2>")
    parts.append(
        table_html(
            tables.trials_table(df, metric),
            "all-trials",
            reason=["note / error"],
            what="trials",
            empty="No trials yet.",
            tall=True,
            number_link=trial_link,
        )
    )
    if refresh_s:
        live = (
            f"this page checks for news every {int(refresh_s)} s and reloads when there are some"
            if poll_url
            else f"this page reloads every {int(refresh_s)} s"
        )
        parts.insert(2, f'<p class="muted">Trials are running: {live}.</p>')
    return page(f"{record.name} — study", "\n".join(parts), plotly=uses_plotly, refresh_s=refresh_s, poll_url=poll_url)


def index_page(
    studies: Sequence[tuple[StudyRecord, pd.DataFrame]], links: Sequence[str], compare: str | None = None
) -> str:
    """The HTML text of the index page listing every study. With `compare` (the live
    server's compare page), each row gets a checkbox and a button opens the chosen
    studies' fronts on one plot."""
    head = (
        "<tr>"
        + ("<th>compare</th>" if compare else "")
        + "<th>study</th><th>task</th><th>families</th><th>metric</th><th>budget</th>"
        "<th>complete</th><th>failed</th><th>rejected</th><th>running</th><th>total</th>"
        "<th>best</th></tr>"
    )
    rows = []
    for (rec, df), link in zip(studies, links):
        df = _ensure_frame(df)
        c = tables.status_counts(df)
        best = tables.best_trial(df, rec.metric, rec.direction)
        best_text = (
            ""
            if best is None
            else (
                f"{format_mean_std(best['value'], best['std'])} "
                f"(#{best['number']} {best['family']}, {format_count(best['params'])})"
            )
        )
        pick = f'<td><input type="checkbox" name="study" value="{esc(rec.name)}"></td>' if compare else ""
        budget = format_count(rec.budget) if isinstance(rec.budget, (int, float)) else rec.budget
        rows.append(
            f"<tr>{pick}"
            f'<td><a href="{esc(link)}">{esc(rec.name)}</a></td>'
            f"<td>{esc(rec.task)}</td>"
            f"<td>{esc(', '.join(map(str, rec.families)))}</td>"
            f"<td>{esc(rec.metric)} {arrow(rec.direction)}</td>"
            f'<td class="num">{esc(budget)}</td>'
            f'<td class="num">{c["complete"]}</td>'
            f'<td class="num">{sum(c[s] for s in FAILURE_STATUSES)}</td>'
            f'<td class="num">{c["rejected"]}</td>'
            f'<td class="num">{c["running"]}</td>'
            f'<td class="num">{len(df)}</td>'
            f"<td>{esc(best_text)}</td>"
            "</tr>"
        )
    if rows:
        table = (
            f'<div class="scroll"><table class="sortable"><thead>{head}</thead>\n<tbody>\n'
            + "\n".join(rows)
            + "\n</tbody></table></div>"
        )
        if compare:
            table = (
                f'<form method="get" action="{esc(compare)}">{table}'
                '<p><button type="submit">Compare the chosen studies\' fronts</button> '
                '<span class="muted">(studies of one task and metric)</span> '
                '<label>predicted at <input name="predict_at" placeholder="e.g. 1M,10M" size="12"></label> '
                '<span class="muted">(budgets above the studies\')</span></p></form>'
            )
    else:
        table = '<p class="empty">No studies yet.</p>'
    body = (
        f'<h1>Architecture search studies</h1>\n<p class="muted">{len(rows)} '
        f"stud{'y' if len(rows) == 1 else 'ies'}; failed counts include diverged trials.</p>\n{table}"
    )
    return page("Architecture search studies", body, plotly=False)
