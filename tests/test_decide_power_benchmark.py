"""benchmarks/verdicts/decide_power.py: `search run --decide` searches, each answer with its status,
winner and text, and the compute against a default search."""

import json

import pytest

from tests.bench_scripts import run_benchmark


def test_an_unknown_setting_is_one_line_and_exit_2(tmp_path):
    done = run_benchmark("verdicts.decide_power", "--dir", tmp_path, "--setting", "zz", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.strip().startswith("error: unknown setting zz; known: ")


@pytest.mark.slow
def test_a_short_decide_search_reports_every_named_budget(tmp_path):
    out = tmp_path / "decide.json"
    done = run_benchmark(
        "verdicts.decide_power",
        *("--dir", tmp_path, "--seeds", "11", "--trials", "4", "--decide", "40K,100K", "--json", out),
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = json.loads(out.read_text())
    assert row["seed"] == 11 and row["trials"] == 4  # the cap
    assert len(row["verdicts"]) == len(row["winners"]) == len(row["answers"]) == 2
    for status, winner, text in zip(row["verdicts"], row["winners"], row["answers"]):
        assert (winner is not None) == (status == "better") and text
        if winner is not None:
            assert winner in ("hourglass", "conventional") and text.startswith(winner)
    assert "decided" in done.stdout
