"""HTML building blocks of the report pages: escaping, the page shell (CSS, sortable
tables), tables of formatted values, embedded plotly figures."""

from __future__ import annotations

import datetime as _dt
import html
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from reports.formatting import format_value

PLOTLY_JS = "plotly.min.js"  # written once beside the pages, referenced relatively

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
.next-step { white-space: pre-wrap; padding: 10px 14px; background: var(--bg2); border-left: 3px solid var(--accent); font-size: .9em; }
.empty { padding: 18px; background: var(--bg2); border: 1px dashed var(--line); border-radius: 6px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0; }
dl.meta dt { color: var(--muted); } dl.meta dd { margin: 0; word-break: break-word; }
table.kv { border-collapse: collapse; font-size: 0.92em; margin: 0; }
table.kv td { padding: 0 12px 0 0; border: 0; vertical-align: top; }
table.kv td:first-child { color: var(--muted); }
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
details.lazy summary { cursor: pointer; padding: 6px 0; color: var(--accent); }
.figure { margin: 8px 0; }
.samples { display: flex; flex-wrap: wrap; gap: 16px; }
.samples figure { margin: 0; padding: 8px; border: 1px solid var(--line); border-radius: 6px; max-width: 300px; }
.samples img { image-rendering: pixelated; width: 280px; height: auto; display: block; }
.samples figcaption { font-size: .8em; color: var(--muted); margin-top: 4px; word-break: break-word; }
footer { margin-top: 48px; font-size: .8em; color: var(--muted); }
"""

# Click a header to sort its table (numbers numerically; each row's key read once); a
# lazy table (reports/lazy_table.py) is built from its JSON block when its <details> is
# first opened, with the cells `html_table` would give. A few lines, no network.
_SORT_JS = """
function sortable(table) {
  if (!table.tHead) return;
  table.tHead.querySelectorAll("th").forEach(function (th) {
    th.title = "click to sort";
    th.addEventListener("click", function () {
      var body = table.tBodies[0];
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
      var rows = Array.prototype.map.call(body.rows, function (r) { return [key(r), r]; });
      rows.sort(function (a, b) {
        var x = a[0], y = b[0];
        var c = x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0);
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r[1]); });
    });
  });
}
function drawLazy(d) {
  if (!d.open || d.dataset.drawn) return;
  d.dataset.drawn = "1";
  var data = JSON.parse(document.getElementById(d.dataset.table).textContent);
  var table = document.createElement("table"), head = table.createTHead().insertRow();
  data.columns.forEach(function (c) {
    var th = document.createElement("th"); th.textContent = c; head.appendChild(th);
  });
  var body = table.createTBody();
  data.rows.forEach(function (row, r) {
    var tr = body.insertRow();
    row.forEach(function (v, i) {
      var td = tr.insertCell(), kind = data.kinds[i], inner = td;
      if (kind === "status" && v) {
        inner = document.createElement("span");
        inner.className = "badge s-" + v.toLowerCase().replace(/[^a-z]/g, "");
        td.appendChild(inner);
      } else if (kind === "link" && v) {
        td.className = "num"; inner = document.createElement("a");
        inner.href = data.links[r]; td.appendChild(inner);
      } else if (kind) { td.className = kind; }
      inner.textContent = v;
    });
  });
  table.className = "sortable";
  d.querySelector(".holder").appendChild(table);
  sortable(table);
}
document.querySelectorAll("table.sortable").forEach(sortable);
document.querySelectorAll("details.lazy").forEach(function (d) {
  d.addEventListener("toggle", function () { drawLazy(d); });
  drawLazy(d);
});
"""

NUMERIC_COLUMNS = {"number", "params", "runs", "duration"}


def esc(value: Any) -> str:
    """Escape any value for HTML text or attributes."""
    return html.escape("" if value is None else str(value), quote=True)


def script_json(value: Any) -> str:
    """JSON that is safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` as
    ``\\u`` escapes, so no text in it can close the element or open a comment."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def poll_script(url: str, every_s: int) -> str:
    """A script that asks `url` every `every_s` seconds and reloads the page when the answer
    is "changed" (the live server's cheap "changed since?" question)."""
    return (
        f'<script id="live-poll">setInterval(function () {{ fetch({script_json(url)}, {{cache: "no-store"}})'
        '.then(function (r) { return r.text(); }).then(function (t) { if (t.trim() === "changed") '
        f"location.reload(); }}).catch(function () {{}}); }}, {int(every_s) * 1000});</script>\n"
    )


def page(title: str, body: str, *, plotly: bool, refresh_s: int | None = None, poll_url: str | None = None) -> str:
    """A whole page; `refresh_s` makes the browser reload it that often (live pages), or,
    with `poll_url`, ask that address that often and reload only when it says "changed"."""
    script = f'<script src="{PLOTLY_JS}" charset="utf-8"></script>\n' if plotly else ""
    if refresh_s and poll_url:
        script = poll_script(poll_url, refresh_s) + script
    elif refresh_s:
        script = f'<meta http-equiv="refresh" content="{int(refresh_s)}">\n' + script
    generated = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n{script}<style>{_CSS}</style>\n</head>\n<body>\n"
        f"{body}\n<footer>Generated by <code>search</code> on {esc(generated)}.</footer>\n"
        f"<script>{_SORT_JS}</script>\n</body>\n</html>\n"
    )


def html_table(
    df: pd.DataFrame,
    *,
    numeric: Iterable[str] = (),
    reason: Iterable[str] = (),
    status_col: str | None = "status",
    sortable: bool = True,
    empty: str = "none",
    number_link: Callable[[str], str] | None = None,
) -> str:
    """Render a frame of (already formatted) values as an escaped HTML table; with
    `number_link`, the `number` column links each trial to `number_link(number)`."""
    if df is None or len(df) == 0:
        return f'<p class="muted">{esc(empty)}</p>'
    numeric = set(numeric) | (NUMERIC_COLUMNS & set(map(str, df.columns)))
    reason = set(reason)
    head = "".join(f"<th>{esc(c)}</th>" for c in df.columns)
    rows = []
    for rec in df.itertuples(index=False):
        cells = []
        for col, v in zip(df.columns, rec):
            text = format_value(v)
            if col == status_col and text:
                cells.append(
                    f'<td><span class="badge s-{esc(re.sub(r"[^a-z]", "", text.lower()))}">{esc(text)}</span></td>'
                )
            elif col in reason:
                cells.append(f'<td class="reason">{esc(text)}</td>')
            elif col == "number" and number_link is not None and text:
                cells.append(f'<td class="num"><a href="{esc(number_link(text))}">{esc(text)}</a></td>')
            elif col in numeric:
                cells.append(f'<td class="num">{esc(text)}</td>')
            else:
                cells.append(f"<td>{esc(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    cls = "sortable" if sortable else ""
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead>\n<tbody>\n' + "\n".join(rows) + "\n</tbody></table>"


def figure_html(fig: go.Figure, div_id: str) -> str:
    height = fig.layout.height or 500
    frag = fig.to_html(
        full_html=False,
        include_plotlyjs=False,
        div_id=div_id,
        default_height=f"{int(height)}px",
        config={"displaylogo": False, "responsive": True},
    )
    return f'<div class="figure">{frag}</div>'
