"""benchmarks/search_quality/plugin_table.py: the stored table of real digits runs, replayed by a
training-function task registered as a user's plugin, searched by `search.run`."""

import pytest

import benchmarks.search_quality.plugin_table as t
from tests.bench_scripts import run_benchmark
from tests.search.plugins.conftest import clean_registries  # noqa: F401  (autouse: forget the registrations)

pytestmark = pytest.mark.skipif(not t.TABLE.is_file(), reason=f"no table at {t.TABLE} (plugin_table.py make)")


def test_the_table_is_its_own_whole_front():
    p = t.problem()
    assert len(p.front) >= 3 and (10 ** p.front[:, 0] <= t.BUDGET).all()
    assert p.share([tuple(x) for x in p.front]) == pytest.approx(1.0)


def test_a_search_replays_the_table_through_a_plugin_task(tmp_path, monkeypatch):
    import search

    monkeypatch.chdir(tmp_path)
    p = t.problem()
    name = t.q.register(p)
    study = search.run(
        space=name,
        budget=t.BUDGET,
        trials=6,
        storage=str(tmp_path / "t.db"),
        report=False,
        seed_checks=0,
        pruner="none",
    )
    df = study.trials()
    done = df[df.status == "complete"]
    assert len(done) == 6 and (done.params <= t.BUDGET).all()
    for _, row in done.iterrows():
        assert row["val_score"] == pytest.approx(p.metric(row["config"], row["params"]))
        assert row["params"] == t.count(row["config"])
    lrs = {c["lr"] for c in done["config"]}
    assert len(lrs) >= 2  # a free key, drawn


def test_bad_arguments_are_one_line_and_exit_2(tmp_path):
    done = run_benchmark("search_quality.plugin_table", "--table", tmp_path / "none.json")
    assert done.returncode == 2 and done.stderr.startswith("error:") and done.stderr.count("\n") == 1
