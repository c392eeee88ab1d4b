"""The static pages in a real headless browser (Debian's chromium): the plots render, with
the expected traces and tables, and no script error. `.ci/run` installs chromium and sets
SEARCH_TEST_BROWSER=required, so there a missing browser fails instead of skipping."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from reports import figures, fronts, write_site
from tests.reports.frames import make_trials, study_record, two_family_trials
from verdicts import candidates, compare

pytestmark = pytest.mark.slow
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
# Recorded into the DOM, so --dump-dom shows any uncaught error or failed resource.
PROBE = (
    "<script>window.__errors=[];window.addEventListener('error',function(e){"
    "document.documentElement.setAttribute('data-errors',(document.documentElement.getAttribute('data-errors')||'')"
    "+'|'+(e.message||(e.target&&e.target.src)||'error'))},true);</script>"
)


def rendered_dom(page: Path) -> str:
    """The page's DOM after its scripts ran, with an error probe injected first."""
    if BROWSER is None:
        if os.environ.get("SEARCH_TEST_BROWSER") == "required":
            pytest.fail("chromium is not installed (apt-get install chromium)")
        pytest.skip("no chromium on this machine")
    probe = page.with_name("probe-" + page.name)
    probe.write_text(page.read_text().replace("<head>", "<head>" + PROBE, 1))
    done = subprocess.run(
        [
            BROWSER,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def script_errors(dom: str) -> str:
    """What the probe recorded on <html data-errors=...> ('' when nothing went wrong)."""
    m = re.search(r'<html[^>]*\sdata-errors="([^"]*)"', dom)
    return m.group(1) if m else ""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser-site")
    studies = [(study_record("demo"), two_family_trials()), (study_record("empty"), make_trials([]))]
    write_site(studies, out)
    return out


def test_a_study_page_renders_its_plots_and_tables(site):
    dom = rendered_dom(site / "study-demo.html")
    assert script_errors(dom) == ""
    assert dom.count('class="plot-container plotly"') == 3  # Pareto front, which shape wins, hypervolume
    df = two_family_trials()
    front = figures.pareto_figure(fronts.front_data(df, "psnr", "maximize"))
    hv = figures.hypervolume_figure(fronts.hypervolume_curves(df, "psnr", "maximize"))
    cands = candidates.candidates(df, "psnr")
    wins = figures.wins_figure(compare.compare_at(cands, candidates.default_levels(cands, 5), "maximize"), "psnr")
    # plotly draws one <g class="trace scatter ..."> per trace
    assert len(re.findall(r'class="trace scatter', dom)) == len(front.data) + len(hv.data) + len(wins.data)
    assert "Pareto-optimal configurations" in dom and dom.count("<table") >= 4
    assert "Which shape wins" in dom and "verdict" in dom


def test_the_index_and_an_empty_study_render_without_errors(site):
    index = rendered_dom(site / "index.html")
    assert script_errors(index) == "" and 'href="study-demo.html"' in index
    empty = rendered_dom(site / "study-empty.html")
    assert script_errors(empty) == "" and "no complete trials" in empty


def test_the_probe_sees_a_script_error(tmp_path):
    """The check above can fail: a page with a broken script is caught."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><head></head><body><script>nosuchfunction()</script></body></html>")
    assert "nosuchfunction" in script_errors(rendered_dom(page))


def test_a_lazy_table_is_drawn_when_opened_and_sorts(tmp_path, monkeypatch):
    """A big study's all-trials table (sent as data, reports/lazy_table.py) is drawn when
    its <details> opens, with the cells a plain table has, and sorts on a header click."""
    from reports import lazy_table
    from tests.reports.frames import trial

    monkeypatch.setattr(lazy_table, "LAZY_ROWS", 5)
    rows = [trial(i, "hourglass", 1000 + i, 20.0 + i % 5) for i in range(9)]
    rows += [trial(9, "hourglass", 10, status="failed", error="</script><b>boom</b>")]
    write_site([(study_record("lazy"), make_trials(rows))], tmp_path)
    page = tmp_path / "study-lazy.html"
    opener = (
        "<script>document.querySelectorAll('details.lazy').forEach(function (d) { d.open = true; });"
        "setTimeout(function () { var th = document.querySelector('#all-trials-drawn th');"
        "th.click(); th.click(); }, 200);</script></body>"
    )
    text = page.read_text().replace('data-table="all-trials"', 'id="all-trials-drawn" data-table="all-trials"')
    page.write_text(text.replace("</body>", opener, 1))
    dom = rendered_dom(page)
    assert script_errors(dom) == ""
    drawn = dom[dom.index('id="all-trials-drawn"') :]
    drawn = drawn[: drawn.index("</table>")]
    numbers = re.findall(r'<tr><td class="num">(\d+)</td>', drawn)
    assert numbers == [str(i) for i in range(9, -1, -1)]  # clicked twice: descending
    assert '<span class="badge s-failed">failed</span>' in drawn
    assert "&lt;/script&gt;&lt;b&gt;boom&lt;/b&gt;" in drawn and "<b>boom</b>" not in drawn
