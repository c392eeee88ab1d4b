"""Big tables as a JSON block drawn on demand (issue 33); the drawing itself is checked in a
real browser in test_browser.py."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from reports import lazy_table, site
from reports.html import script_json
from reports.lazy_table import LAZY_ROWS, constant_columns, table_html
from tests.reports.frames import make_trials, study_record, trial


def data_block(html: str, table_id: str) -> dict:
    m = re.search(rf'<script type="application/json" id="{table_id}">(.*?)</script>', html, re.S)
    assert m, f"no data block {table_id}"
    return json.loads(m.group(1))


def test_script_json_cannot_close_its_element():
    value = {"a": ["</script><script>alert(1)</script>", "<!-- x", "a & b", "ü"]}
    text = script_json(value)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == value


def test_script_json_refuses_nan():
    with pytest.raises(ValueError):
        script_json([float("nan")])


def test_constant_columns():
    t = {"number": ["1", "1"], "device": ["cpu", "cpu"], "L": ["1", "2"], "e": ["", ""]}
    assert constant_columns(t, keep=["number"]) == {"device": "cpu", "e": ""}
    assert constant_columns({k: v[:1] for k, v in t.items()}) == {}


def _table(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "number": np.arange(n),
            "status": rng.choice(["complete", "failed"], n),
            "params": rng.integers(1, 10**6, n),
            "device": ["cpu"] * n,
            "reason": [f"<b>{i}</b>" if i % 7 == 0 else "" for i in range(n)],
        }
    )


def test_small_tables_stay_html():
    html = table_html(_table(LAZY_ROWS), "t")
    assert html.count("<tr>") == LAZY_ROWS + 1 and "application/json" not in html


def test_big_tables_become_data_drawn_on_demand():
    df = _table(LAZY_ROWS + 1)
    html = table_html(df, "t", reason=["reason"], what="trials")
    assert "<tr>" not in html and 'data-table="t"' in html and f"Show all {LAZY_ROWS + 1:,} trials" in html
    data = data_block(html, "t")
    assert data["columns"] == ["number", "status", "params", "reason"]  # device: the same everywhere
    assert "The same in every row: device cpu." in html
    assert data["kinds"] == ["num", "status", "num", "reason"]
    assert data["rows"] == [[str(r.number), r.status, str(r.params), r.reason] for r in df.itertuples()]
    assert "links" not in data and "&lt;b&gt;" not in html  # escaped in JSON, not as HTML


def test_big_tables_link_their_trials():
    html = table_html(_table(LAZY_ROWS + 3), "t", number_link=lambda n: f"trial-x-{int(n)}.html")
    data = data_block(html, "t")
    assert data["kinds"][0] == "link" and data["links"][5] == "trial-x-5.html"


def test_table_ids_are_checked():
    with pytest.raises(ValueError):
        lazy_table.lazy_table(_table(3), 'x"><script>')


def test_a_big_study_page_sends_its_trials_as_data(monkeypatch):
    monkeypatch.setattr(lazy_table, "LAZY_ROWS", 5)
    rows = [trial(i, "hourglass", 1000 + i, 20.0 + (i % 5)) for i in range(12)]
    rows += [trial(12 + i, "conventional", 500, status="failed", error=f"boom {i}") for i in range(7)]
    page = site.study_page(study_record("big"), make_trials(rows))
    trials = data_block(page, "all-trials")
    assert [r[0] for r in trials["rows"]] == [str(i) for i in range(19)]
    problems = data_block(page, "problem-trials")
    assert [r[-1] for r in problems["rows"]] == [f"boom {i}" for i in range(7)]
    assert "All trials (19)" in page and "Show all 19 trials" in page
