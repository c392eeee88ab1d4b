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

import datetime as _dt
import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from core.budget import format_count
from core.directions import arrow
from core.statuses import HEADLINE_STATUSES
from reports import plots
from storage.records import StudyRecord

PLOTLY_JS = "plotly.min.js"

_CSS = """
:root { --fg:#1f2328; --muted:#656d76; --line:#d0d7de; --bg2:#f6f8fa; --accent:#0969da; }
* { box-sizing: border-box; }
body { font: 15px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--fg);
       margin: 0 auto; padding: 24px 32px 64px; max-width: 1280px; }
h1 { font-size: 1.6em; margin: 0 0 4px; word-break: break-word; }
h2 { font-size: 1.2em; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
nav { font-size: .9em; margin-bottom: 12px; }
.muted { color: var(--muted); }
.empty { padding: 18px; background: var(--bg2); border: 1px dashed var(--line); border-radius: 6px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0; }
dl.meta dt { color: var(--muted); } dl.meta dd { margin: 0; word-break: break-word; }
.scroll { overflow-x: auto; max-width: 100%; }
.scroll.tall { max-height: 640px; overflow-y: auto; }
table { border-collapse: collapse; font-size: .88em; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: var(--bg2); position: sticky; top: 0; cursor: pointer; white-space: nowrap; }
tbody tr:nth-child(even) { background: #fbfcfd; }
tbody tr:hover { background: #eef4ff; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.reason { max-width: 560px; white-space: pre-wrap; word-break: break-word; font-family: ui-monospace, monospace; font-size: .92em; }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: .85em; background: var(--bg2); border: 1px solid var(--line); }
.s-complete { background:#dafbe1; border-color:#4ac26b; } .s-failed, .s-diverged { background:#ffebe9; border-color:#ff8182; }
.s-rejected { background:#fff8c5; border-color:#d4a72c; } .s-running { background:#ddf4ff; border-color:#54aeff; }
.s-interrupted { background:#eaeef2; }
.counts span { margin-right: 10px; }
.figure { margin: 8px 0; }
.samples { display: flex; flex-wrap: wrap; gap: 16px; }
.samples figure { margin: 0; padding: 8px; border: 1px solid var(--line); border-radius: 6px; max-width: 300px; }
.samples img { image-rendering: pixelated; width: 280px; height: auto; display: block; }
.samples figcaption { font-size: .8em; color: var(--muted); margin-top: 4px; word-break: break-word; }
footer { margin-top: 48px; font-size: .8em; color: var(--muted); }
"""

# Click a header to sort its table (numbers numerically); a few lines, no network.
_SORT_JS = """
document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.title = "click to sort";
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0];
    var i = Array.prototype.indexOf.call(th.parentNode.children, th);
    var asc = th.dataset.sort !== "asc"; th.dataset.sort = asc ? "asc" : "desc";
    var key = function (tr) {
      var t = tr.children[i] ? tr.children[i].textContent.trim() : "";
      var u = t.replace(/,/g, "");
      var m = u.match(/^-?\\d+(\\.\\d+)?(e[-+]?\\d+)?/i);
      if (m) { var mult = {K:1e3, M:1e6, B:1e9}[u.charAt(m[0].length)] || 1;
        return [0, parseFloat(m[0]) * mult]; }
      return [1, t.toLowerCase()];
    };
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      var c = x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0);
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""

_NUMERIC_COLUMNS = {"number", "params", "runs", "duration"}


def esc(value: Any) -> str:
    """Escape any value for HTML text or attributes."""
    return html.escape("" if value is None else str(value), quote=True)


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


def _page(title: str, body: str, *, plotly: bool) -> str:
    script = f'<script src="{PLOTLY_JS}" charset="utf-8"></script>\n' if plotly else ""
    generated = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{esc(title)}</title>\n{script}<style>{_CSS}</style>\n</head>\n<body>\n"
        f"{body}\n<footer>Generated by <code>search</code> on {esc(generated)}.</footer>\n"
        f"<script>{_SORT_JS}</script>\n</body>\n</html>\n"
    )


def html_table(df: pd.DataFrame, *, numeric: Iterable[str] = (), reason: Iterable[str] = (),
               status_col: str | None = "status", sortable: bool = True,
               empty: str = "none") -> str:
    """Render a frame of (already formatted) values as an escaped HTML table."""
    if df is None or len(df) == 0:
        return f'<p class="muted">{esc(empty)}</p>'
    numeric = set(numeric) | (_NUMERIC_COLUMNS & set(map(str, df.columns)))
    reason = set(reason)
    head = "".join(f"<th>{esc(c)}</th>" for c in df.columns)
    rows = []
    for rec in df.itertuples(index=False):
        cells = []
        for col, v in zip(df.columns, rec):
            text = plots.format_value(v)
            if col == status_col and text:
                cells.append(f'<td><span class="badge s-{esc(re.sub(r"[^a-z]", "", text.lower()))}">{esc(text)}</span></td>')
            elif col in reason:
                cells.append(f'<td class="reason">{esc(text)}</td>')
            elif col in numeric:
                cells.append(f'<td class="num">{esc(text)}</td>')
            else:
                cells.append(f"<td>{esc(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    cls = "sortable" if sortable else ""
    return (f'<table class="{cls}"><thead><tr>{head}</tr></thead>\n<tbody>\n'
            + "\n".join(rows) + "\n</tbody></table>")


def _figure_html(fig: go.Figure, div_id: str) -> str:
    height = fig.layout.height or 500
    frag = fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                       default_height=f"{int(height)}px",
                       config={"displaylogo": False, "responsive": True})
    return f'<div class="figure">{frag}</div>'


def _settings_text(value: Any) -> str:
    if isinstance(value, (dict, list, tuple)):
        try:
            return json.dumps(value, default=str, sort_keys=True)
        except (TypeError, ValueError):
            return str(value)
    return plots.format_value(value) if not isinstance(value, str) else value


def _budget_text(budget: Any) -> str:
    try:
        b = int(budget)
    except (TypeError, ValueError):
        return str(budget)
    return f"{format_count(b)} ({b:,} parameters)"


def _counts_html(counts: dict[str, int]) -> str:
    parts = [f'<span><span class="badge s-{esc(s)}">{esc(s)}</span> {n}</span>'
             for s, n in counts.items() if n or s in HEADLINE_STATUSES]
    total = sum(counts.values())
    return f'<p class="counts">{"".join(parts)} <span class="muted">total {total}</span></p>'


def _ensure_frame(df: pd.DataFrame | None) -> pd.DataFrame:
    if df is None:
        return pd.DataFrame(columns=["number", "status", "family", "params", "config"])
    if len(df) and "number" in df.columns:
        df = df.sort_values("number", kind="stable")
    return df


# Artifacts of one trial by (study name, trial number): dicts with repeat, seed, name,
# media_type and data (base64), as `Store.artifacts(study, number, "samples")` returns.
SamplesFor = Callable[[str, int], list[dict[str, Any]]]


def samples_html(record: StudyRecord, df: pd.DataFrame, samples_for: SamplesFor) -> str:
    """The sample grids of the Pareto-optimal trials (first run of each), per family, or
    "" when none of them stored one."""
    table = plots.pareto_table(df, record.metric, record.direction, formatted=True)
    cards = []
    for row in table.to_dict("records"):
        images = [a for a in samples_for(record.name, int(row["number"])) if a["media_type"].startswith("image/")]
        if not images:
            continue
        a = images[0]
        skip = {"family", "number", "overall_front"}
        caption = ", ".join(f"{k} {plots.format_value(v)}" for k, v in row.items()
                            if k not in skip and v is not None and plots.format_value(v) != "")
        src = f"data:{a['media_type']};base64,{a['data']}"
        cards.append(
            f'<figure><img src="{esc(src)}" alt="samples of trial {esc(row["number"])}">'
            f'<figcaption><b>#{esc(row["number"])} {esc(row["family"])}</b> (seed {esc(a["seed"])}): '
            f"{esc(caption)}</figcaption></figure>")
    if not cards:
        return ""
    return ("<h2>Samples of the Pareto-optimal models</h2>"
            '<p class="muted">Generated by each Pareto-optimal trial\'s kept model (first run), '
            "one column per requested class, from the same seeded start noise in every trial.</p>"
            f'<div class="samples">{"".join(cards)}</div>')


def study_page(record: StudyRecord, df: pd.DataFrame, samples_for: SamplesFor | None = None) -> str:
    """The HTML text of one study's page (with the Pareto-optimal trials' sample grids
    when `samples_for` is given and they stored some)."""
    df = _ensure_frame(df)
    metric, direction = record.metric, record.direction
    counts = plots.status_counts(df)
    data = plots.front_data(df, metric, direction)
    best = plots.best_trial(df, metric, direction)

    meta = [
        ("task", esc(record.task)),
        ("families", esc(", ".join(map(str, record.families)))),
        ("metric", f"{esc(metric)} ({esc(direction)})"),
        ("budget", esc(_budget_text(record.budget))),
    ]
    if record.created_at is not None:
        meta.append(("created", esc(plots._format_time(record.created_at))))
    for k, v in (record.settings or {}).items():
        meta.append((esc(k), esc(_settings_text(v))))
    if best is not None:
        meta.append(("best", esc(
            f"{plots.format_mean_std(best['value'], best['std'])} — trial #{best['number']} "
            f"({best['family']}, {plots.format_params(best['params'])})")))
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in meta)

    parts = [
        '<nav><a href="index.html">← all studies</a></nav>',
        f"<h1>{esc(record.name)}</h1>",
        f'<dl class="meta">{dl}</dl>',
    ]
    if data.empty:
        parts.append('<h2>Pareto front</h2><p class="empty">This study has no complete trials '
                     'yet, so there is no Pareto front or hypervolume to show.</p>')
        uses_plotly = False
    else:
        title_metric = f"{metric} ({'higher' if direction == 'maximize' else 'lower'} is better)"
        parts.append("<h2>Pareto front</h2>")
        parts.append('<p class="muted">Each family\'s front: the best '
                     f'{esc(metric)} reached with at most that many parameters. Faint markers are '
                     'the other complete trials; error bars are the std over repeated runs; '
                     'black rings mark the front over all families.</p>')
        params_label = str(record.settings.get("param_convention") or "trainable parameters")
        parts.append(_figure_html(plots.pareto_figure(data, metric_label=title_metric, params_label=params_label),
                                  "pareto-figure"))
        if data.n_excluded:
            parts.append(f'<p class="muted">{data.n_excluded} complete trial(s) without a finite '
                         f'{esc(metric)} are left out.</p>')
        parts.append("<h2>Pareto-optimal configurations</h2>")
        table = plots.pareto_table(df, metric, direction, formatted=True)
        parts.append(f'<div class="scroll">{html_table(table, status_col=None)}</div>')
        if samples_for is not None:
            parts.append(samples_html(record, df, samples_for))
        parts.append("<h2>Hypervolume</h2>")
        parts.append('<p class="muted">Area dominated by the complete trials so far (objectives: '
                     f'log10 parameters, minimised, and {esc(metric)}), against a fixed reference '
                     'slightly worse than every complete trial of the study.</p>')
        parts.append(_figure_html(plots.hypervolume_figure(df, metric, direction, metric_label=metric),
                                  "hypervolume-figure"))
        uses_plotly = True

    parts.append("<h2>Status</h2>")
    parts.append(_counts_html(counts))
    problems = plots.problem_trials(df)
    parts.append(f'<div class="scroll">'
                 f'{html_table(problems, reason=["reason"], empty="No failed, diverged, interrupted or rejected trials.")}'
                 f"</div>")

    parts.append(f"<h2>All trials ({len(df)})</h2>")
    parts.append(f'<div class="scroll tall">'
                 f'{html_table(plots.trials_table(df, metric), reason=["note / error"], empty="No trials yet.")}'
                 f"</div>")
    return _page(f"{record.name} — study", "\n".join(parts), plotly=uses_plotly)


def index_page(studies: Sequence[tuple[StudyRecord, pd.DataFrame]], links: Sequence[str]) -> str:
    """The HTML text of the index page listing every study."""
    head = ("<tr><th>study</th><th>task</th><th>families</th><th>metric</th><th>budget</th>"
            "<th>complete</th><th>failed</th><th>rejected</th><th>running</th><th>total</th>"
            "<th>best</th></tr>")
    rows = []
    for (rec, df), link in zip(studies, links):
        df = _ensure_frame(df)
        c = plots.status_counts(df)
        best = plots.best_trial(df, rec.metric, rec.direction)
        best_text = "" if best is None else (
            f"{plots.format_mean_std(best['value'], best['std'])} "
            f"(#{best['number']} {best['family']}, {format_count(best['params'])})")
        rows.append(
            "<tr>"
            f'<td><a href="{esc(link)}">{esc(rec.name)}</a></td>'
            f"<td>{esc(rec.task)}</td>"
            f"<td>{esc(', '.join(map(str, rec.families)))}</td>"
            f"<td>{esc(rec.metric)} {arrow(rec.direction)}</td>"
            f'<td class="num">{esc(format_count(rec.budget) if isinstance(rec.budget, (int, float)) else rec.budget)}</td>'
            f'<td class="num">{c["complete"]}</td>'
            f'<td class="num">{c["failed"] + c["diverged"]}</td>'
            f'<td class="num">{c["rejected"]}</td>'
            f'<td class="num">{c["running"]}</td>'
            f'<td class="num">{len(df)}</td>'
            f"<td>{esc(best_text)}</td>"
            "</tr>"
        )
    if rows:
        table = (f'<div class="scroll"><table class="sortable"><thead>{head}</thead>\n<tbody>\n'
                 + "\n".join(rows) + "\n</tbody></table></div>")
    else:
        table = '<p class="empty">No studies yet.</p>'
    body = (f"<h1>Architecture search studies</h1>\n<p class=\"muted\">{len(rows)} "
            f"stud{'y' if len(rows) == 1 else 'ies'}; failed counts include diverged trials.</p>\n{table}")
    return _page("Architecture search studies", body, plotly=False)


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
    studies: Sequence[tuple[StudyRecord, pd.DataFrame]], out_dir: str | Path,
    samples_for: SamplesFor | None = None,
) -> Path:
    """Write ``index.html``, one ``study-<slug>.html`` per study and ``plotly.min.js``.

    Args:
        studies: (record, trials frame) per study, in the order they are listed.
        out_dir: folder to write into (created when missing).
        samples_for: (study, trial number) -> that trial's sample-grid artifacts (e.g.
            ``lambda s, n: store.artifacts(s, n, "samples")``); asked only for
            Pareto-optimal trials. None: no sample section.

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
        _write_text(out / link, study_page(rec, df, samples_for))
    index = out / "index.html"
    _write_text(index, index_page(studies, links))
    return index
