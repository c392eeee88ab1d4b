"""benchmarks/search_quality/seconds_vs_work.py: a stored search's training seconds beside its
parameter-epochs, against its base search, seed by seed."""

import json

import pytest

import benchmarks.search_quality.seconds_vs_work as svw
from tests.bench_scripts import REPO, run_benchmark


@pytest.mark.parametrize(
    "name,twin",
    [
        ("gp+pareto", "gp"),
        ("tpe+pareto:0.1", "tpe"),
        ("gp+pareto&modelled", "gp&modelled"),
        ("gp+checked-rungs^last=ramp", "gp^last=ramp"),
        ("gp/none+pareto", "gp/none"),
        ("gp", None),
        ("gp&modelled", None),
    ],
)
def test_a_pruned_search_is_set_against_its_unpruned_twin(name, twin):
    assert svw.unpruned_twin(name) == twin


def test_the_ratios_are_seed_by_seed_medians_in_both_units():
    summary = {
        "gp": {"compute_s": [100, 200, 400], "parameter_epochs": [10, 10, 10], "fractions": [0.9, 0.8, 1.0]},
        "gp+pareto": {"compute_s": [50, 150, 100], "parameter_epochs": [8, 6, 7], "fractions": [0.9, 0.8, 0.95]},
    }
    row = svw.compare(summary, "gp+pareto", "gp")
    assert row["seconds_ratio_by_seed"] == [0.5, 0.75, 0.25] and row["seconds_ratio"] == 0.5
    assert row["work_ratio"] == pytest.approx(0.7) and row["hypervolume_ratio"] == pytest.approx(1.0)
    assert row["seeds"] == 3


def test_reads_a_stored_report_and_refuses_a_file_without_a_base(tmp_path):
    out = tmp_path / "rows.json"
    done = run_benchmark(
        "search_quality.seconds_vs_work", REPO / "docs" / "data" / "pruner-gp-hourglass.json", "--json", out
    )
    assert done.returncode == 0, done.stderr
    rows = {r["search"]: r for r in json.loads(out.read_text())}
    assert set(rows) == {"gp+pareto", "gp+checked-rungs"} and all(r["base"] == "gp" for r in rows.values())
    stored = json.loads((REPO / "docs" / "data" / "pruner-gp-hourglass.json").read_text())
    assert rows["gp+pareto"]["seconds_ratio_by_seed"] == [
        round(r, 3) for r in stored["settings"]["hourglass"]["summary"]["gp+pareto"]["compute_ratio"]
    ]
    bad = run_benchmark(
        "search_quality.seconds_vs_work", REPO / "docs" / "data" / "pruner-gp-hourglass.json", "--base", "nope"
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and len(bad.stderr.strip().splitlines()) == 1
