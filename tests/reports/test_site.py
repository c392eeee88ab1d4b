"""The static site: files, offline plotly, escaping, empty studies."""

from __future__ import annotations

import re

import pytest

from reports import write_site
from reports.html import PLOTLY_JS
from reports.site import slugify, study_filename
from tests.reports.frames import make_trials, study_record, trial, two_family_trials

CDN_SCRIPT = re.compile(r"<script[^>]*src=[\"']?(https?:)?//", re.IGNORECASE)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    studies = [
        (study_record("mnist-denoise-demo"), two_family_trials()),
        (study_record("<b>x</b>", settings={"note": "<script>alert(1)</script>"}), two_family_trials()),
        (study_record("empty study"), make_trials([])),
        (study_record("all failed"), make_trials([trial(0, "hourglass", 10, status="failed", error="boom <oops>")])),
    ]
    index = write_site(studies, out)
    return out, index, studies


def test_files_exist(site):
    out, index, studies = site
    assert index == out / "index.html" and index.is_file()
    assert (out / PLOTLY_JS).is_file() and (out / PLOTLY_JS).stat().st_size > 1_000_000
    pages = sorted(p.name for p in out.glob("study-*.html"))
    assert len(pages) == len(studies)
    assert "study-mnist-denoise-demo.html" in pages
    text = index.read_text()
    for rec, _ in studies:
        assert f'href="{study_filename(rec.name)}"' in text


def test_pages_use_local_plotly(site):
    out, _, _ = site
    page = (out / "study-mnist-denoise-demo.html").read_text()
    assert f'<script src="{PLOTLY_JS}"' in page
    assert "Plotly.newPlot" in page
    for p in out.glob("*.html"):
        assert not CDN_SCRIPT.search(p.read_text()), p.name


def test_study_page_contents(site):
    out, _, _ = site
    page = (out / "study-mnist-denoise-demo.html").read_text()
    for text in (
        "mnist-denoise",
        "psnr",
        "maximize",
        "80M",
        "nsga2",
        "Pareto front",
        "Hypervolume",
        "CUDA out of memory",
        "loss is NaN at epoch 3",
        "over budget: 10M &gt; 80M?",
        "20 ± 0.1",
    ):
        assert text in page, text
    index = (out / "index.html").read_text()
    assert "26 ± 0.2" in index  # best metric


def test_html_escaping(site):
    out, index, _ = site
    page = (out / study_filename("<b>x</b>")).read_text()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "<script>alert(1)</script>" not in page
    assert "<b>x</b>" not in index.read_text()
    failed = (out / study_filename("all failed")).read_text()
    assert "boom &lt;oops&gt;" in failed


def test_empty_study_page(site):
    out, _, _ = site
    page = (out / study_filename("empty study")).read_text()
    assert "no complete trials" in page
    assert "Plotly.newPlot" not in page
    failed = (out / study_filename("all failed")).read_text()
    assert "no complete trials" in failed


def test_plotly_js_written_once(tmp_path):
    studies = [(study_record("a"), two_family_trials())]
    write_site(studies, tmp_path)
    js = tmp_path / PLOTLY_JS
    before = js.stat().st_mtime_ns
    write_site(studies, tmp_path)
    assert js.stat().st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html", PLOTLY_JS, "study-a.html"]


def test_slugs_are_safe_and_distinct():
    assert slugify("mnist-denoise_1.2") == "mnist-denoise_1.2"
    names = ["My Study", "my study", "../etc/passwd", "<b>x</b>", "", "ünï", "a" * 300]
    slugs = [slugify(n) for n in names]
    assert len(set(slugs)) == len(slugs)
    for s in slugs:
        assert re.fullmatch(r"[a-z0-9._-]+", s) and not s.startswith(".") and len(s) <= 70


def test_duplicate_study_names_get_distinct_pages(tmp_path):
    studies = [(study_record("a"), make_trials([])), (study_record("a"), make_trials([]))]
    write_site(studies, tmp_path)
    assert sorted(p.name for p in tmp_path.glob("study-*.html")) == ["study-a-2.html", "study-a.html"]


def test_params_axis_names_the_studys_parameter_convention(tmp_path):
    from reports.figures import pareto_figure
    from reports.fronts import front_data
    from tests.reports.frames import two_family_trials

    df = two_family_trials()
    fig = pareto_figure(front_data(df, "psnr", "maximize"), params_label="non-embedding parameters")
    assert fig.layout.xaxis.title.text == "non-embedding parameters (log)"
    assert pareto_figure(front_data(df, "psnr", "maximize")).layout.xaxis.title.text == "trainable parameters (log)"


def test_sample_grids_of_pareto_optimal_trials_only(tmp_path):
    from reports.tables import pareto_table

    rec, df = study_record("diffusion demo"), two_family_trials()
    front = set(pareto_table(df, rec.metric, rec.direction)["number"])
    asked = []

    def samples_for(study, number):
        asked.append((study, number))
        if number == min(front):  # one Pareto-optimal trial without a grid
            return []
        return [{"repeat": 0, "seed": 7, "name": "samples", "media_type": "image/png", "data": f"PNGDATA{number}"}]

    write_site([(rec, df)], tmp_path, samples_for)
    page = (tmp_path / study_filename("diffusion demo")).read_text()
    assert {n for _, n in asked} == front and {s for s, _ in asked} == {"diffusion demo"}
    assert "Samples of the Pareto-optimal models" in page
    for n in front - {min(front)}:
        assert f'src="data:image/png;base64,PNGDATA{n}"' in page
    assert f"PNGDATA{min(front)}" not in page
    assert page.count("<figure>") == len(front) - 1

    write_site([(rec, df)], tmp_path / "none", lambda s, n: [])
    assert "Samples of the Pareto" not in (tmp_path / "none" / study_filename("diffusion demo")).read_text()


def test_sample_grids_are_read_in_one_call_when_the_source_can(tmp_path):
    """A source with `many` (the store's: one query) is asked once for every
    Pareto-optimal trial, never trial by trial (issue 33)."""
    from reports.samples import StoreSamples
    from reports.tables import pareto_table

    rec, df = study_record("diffusion demo"), two_family_trials()
    front = sorted(set(pareto_table(df, rec.metric, rec.direction)["number"]))

    class FakeStore:
        calls: list = []

        def artifacts(self, study, number, name=None):
            raise AssertionError("asked trial by trial")

        def artifacts_of(self, study, numbers, name=None):
            self.calls.append((study, sorted(numbers), name))
            return {
                n: [{"repeat": 0, "seed": 1, "name": name, "media_type": "image/png", "data": f"G{n}"}] for n in numbers
            }

    store = FakeStore()
    write_site([(rec, df)], tmp_path, StoreSamples(store))
    assert store.calls == [("diffusion demo", front, "samples")]
    page = (tmp_path / study_filename("diffusion demo")).read_text()
    assert all(f"base64,G{n}" in page for n in front)


def test_a_study_page_computes_its_front_and_pareto_table_once(monkeypatch):
    """The page, its Pareto table and its sample section share one front computation."""
    from reports import fronts, site, tables

    calls = {"front_data": 0, "pareto_table": 0}

    def counting(module, name):
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    counting(fronts, "front_data")
    counting(tables, "front_data")  # pareto_table would call this copy if not handed the data
    counting(tables, "pareto_table")
    html = site.study_page(study_record("once"), two_family_trials(), lambda s, n: [])
    assert calls == {"front_data": 1, "pareto_table": 1}
    assert "Pareto-optimal configurations" in html


def test_settings_are_a_readable_table_not_raw_json():
    from reports import site

    rec = study_record(
        "settings",
        settings={
            "sampler": "tpe",
            "train": {"epochs": 2, "batch_size": None, "device": "auto"},
            "task_options": {},
            "families": ["a", "<b>"],
        },
    )
    page = site.study_page(rec, two_family_trials())
    assert '{"' not in page.split("<dl")[1].split("</dl>")[0]  # no JSON text in the header
    assert "<tr><td>epochs</td><td>2</td></tr>" in page
    assert '<tr><td>batch_size</td><td><span class="muted">default</span></td></tr>' in page
    assert '<dt>task_options</dt><dd><span class="muted">none</span></dd>' in page
    assert "a, &lt;b&gt;" in page


def test_pruned_trials_are_shown_apart(tmp_path):
    from reports.site import study_page

    df = make_trials(
        [
            trial(0, "hourglass", 100, 20.0),
            trial(
                1,
                "hourglass",
                200,
                status="pruned",
                error="stopped at epoch 4 of 10: validation 12, while a trial with 100 parameters had 19",
            ),
            trial(2, "hourglass", 300, status="failed", error="boom"),
        ]
    )
    html = study_page(study_record("p"), df)
    assert "Stopped early (1 pruned)" in html
    section = html.split("Stopped early")[1].split("<h2>")[0]
    assert "stopped at epoch 4" in section and "boom" not in section
    assert "Early stopping: 1 trial(s) stopped by the pruner" in section and "% saved)" in section
    assert "Stopped early" not in study_page(study_record("q"), make_trials([trial(0, "hourglass", 100, 20.0)]))


def test_the_front_figure_continues_each_trusted_law_to_the_predict_at_budgets(monkeypatch):
    from reports import figures
    from reports.site import study_page
    from tests.reports.test_extrapolation import lawful_trials

    drawn = []
    original = figures.pareto_figure
    monkeypatch.setattr(figures, "pareto_figure", lambda *a, **k: drawn.append(original(*a, **k)) or drawn[-1])
    rec = study_record("lawful", budget=100_000)
    page = study_page(rec, lawful_trials(), predict_at=[1_000_000, 5_000_000])
    names = {t.name: t for t in drawn[0].data}
    assert {"hourglass predicted", "conventional predicted"} <= set(names)
    assert max(names["hourglass predicted"].x) == 5_000_000 and list(names["hourglass at the targets"].x) == [1e6, 5e6]
    assert "read up to 5M; markers at 1M, 5M; band: 90% interval from 40 bootstrap refits" in page
    few = study_page(rec, lawful_trials().head(20))  # conventional: 4 trials over a factor 1.4
    assert "conventional: not extrapolated, the front spans a factor" in few


def test_the_page_says_what_deciding_its_undecided_budgets_would_take():
    from reports import site
    from verdicts import candidates, compare
    from verdicts.undecided import next_step

    df = two_family_trials()
    page = site.study_page(study_record("undecided"), df)
    cands = candidates.candidates(df, "psnr")
    verdicts = compare.compare_at(cands, candidates.default_levels(cands, 5), "maximize")
    lines = next_step(verdicts)
    assert lines, [v.status for v in verdicts]  # this small study leaves budgets undecided
    wins = page.split("Which shape wins")[1]
    assert '<p class="next-step">' in wins and lines[0] in wins and "--decide" in wins
