"""The live server's own pages (reports/live.py), built from hand-made frames."""

from __future__ import annotations

from reports.live import compare_page
from tests.reports.frames import make_trials, study_record, trial


def replicate(name: str, k: int, hourglass: float, conventional: float, group: str | None = "q"):
    settings = {"seed": k} | ({"replicate_of": group, "replicate": k} if group else {})
    rec = study_record(name, settings=settings)
    rows = []
    for n, (fam, top) in enumerate((("hourglass", hourglass), ("conventional", conventional)) * 2):
        params = 8000 if n < 2 else 9000
        rows.append(trial(n, fam, params, top - (1.0 if n < 2 else 0.0), psnr_std=0.1, n_runs=3))
    return rec, make_trials(rows, study=name)


def test_replicate_searches_are_pooled_on_the_compare_page():
    studies = [replicate(f"q-r{k}", k, h, c) for k, (h, c) in enumerate(((20, 18), (21, 18.5), (20.5, 18.2)), 1)]
    page = compare_page(studies)
    assert "Which shape wins" in page and "replicate searches of one question" in page
    assert "hourglass better by" in page and "q-r1: hourglass" not in page.split("Which shape wins")[1]
    # and how the fronts vary between the searches: each family's median surface and its band
    eaf = page.split("How the fronts vary between the searches")[1]
    assert "attainment-figure" in eaf and "hourglass median" in eaf and "conventional 25-75%" in eaf


def test_different_questions_get_no_attainment_section():
    studies = [replicate("a", 1, 20, 18, group=None), replicate("b", 2, 21, 18.5, group=None)]
    assert "How the fronts vary" not in compare_page(studies)


def test_studies_of_different_questions_are_compared_on_one_frame():
    studies = [replicate("a", 1, 20, 18, group=None), replicate("b", 2, 21, 18.5, group=None)]
    page = compare_page(studies)
    wins = page.split("Which shape wins")[1]
    assert "replicate searches of one question" not in wins and "a: hourglass" in wins and "b: conventional" in wins


def test_the_compare_page_continues_each_front_to_the_predicted_budgets():
    from tests.reports.frames import study_record as record
    from tests.reports.test_extrapolation import lawful_trials

    studies = [(record(n, budget=100_000), lawful_trials(seed=k)) for k, n in enumerate(("a", "b"))]
    page = compare_page(studies, predict_at=[2_000_000])
    assert "Dashed: each family" in page and "markers at 2M" in page
    assert "a: hourglass predicted" in page and "b: conventional at the targets" in page
