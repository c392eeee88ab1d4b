"""Conformance suite of `Store`, run against every backend (see conftest)."""

from __future__ import annotations

import json
import math
from datetime import UTC

import pandas as pd
import pytest
from sqlalchemy import event

from core.errors import StorageError
from storage import Store, load_trials
from storage.frames import FIXED_COLUMNS
from storage.schema import DIM_COLUMNS
from tests.storage.helpers import make_result, make_run

CONFIG = {"d_z": 1024, "d_h": 64, "L": 3, "fixed_w_in": True, "lr": 1e-3}


def count(store: Store, table: str) -> int:
    return store.query_readonly(f"SELECT COUNT(*) FROM {table}")[1][0][0]


# -- studies ------------------------------------------------------------------------
def test_create_then_load_study(store: Store, study: str) -> None:
    rec = store.get_study(study)
    assert (rec.name, rec.task, rec.families, rec.metric, rec.direction, rec.budget) == (
        "s",
        "mnist-denoise",
        ["hourglass"],
        "psnr",
        "maximize",
        1_000_000,
    )
    assert rec.settings == {"repeats": 2}
    assert rec.created_at is not None and rec.created_at.tzinfo is not None
    assert rec.created_at.utcoffset() == UTC.utcoffset(None)
    again = store.create_or_load_study(
        "s",
        task="mnist-denoise",
        families=["hourglass"],
        metric="psnr",
        direction="maximize",
        budget=1_000_000,
        settings={"repeats": 5},
    )
    assert again == rec  # stored settings are kept
    assert [s.name for s in store.list_studies()] == ["s"]


def test_study_with_another_task_is_refused(store: Store, study: str) -> None:
    with pytest.raises(StorageError, match="study 's' exists with task 'mnist-denoise'"):
        store.create_or_load_study(
            "s", task="mnist-sr", families=["hourglass"], metric="psnr", direction="maximize", budget=10
        )
    with pytest.raises(StorageError, match="exists with direction"):
        store.create_or_load_study(
            "s", task="mnist-denoise", families=["hourglass"], metric="psnr", direction="minimize", budget=10
        )


def test_study_families_union_and_new_budget(store: Store, study: str) -> None:
    rec = store.create_or_load_study(
        "s",
        task="mnist-denoise",
        families=["conventional", "hourglass"],
        metric="psnr",
        direction="maximize",
        budget=2_000_000,
    )
    assert rec.families == ["hourglass", "conventional"]
    assert rec.budget == 2_000_000
    assert rec.settings["budget_history"][0]["budget"] == 1_000_000
    assert store.get_study("s") == rec


def test_missing_study_lists_known_names(store: Store, study: str) -> None:
    with pytest.raises(StorageError, match=r"no study named 'nope'; known: s$"):
        store.get_study("nope")
    with pytest.raises(StorageError, match="no study named 'nope'"):
        store.add_trial("nope", family="f", config={}, params=1, seeds=[0])


def test_delete_study(store: Store, study: str) -> None:
    n = store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0])
    store.finish_trial(study, n, make_result(n, [make_run(0, {"psnr": 20.0})]))
    store.delete_study(study)
    assert store.list_studies() == []
    for table in ("trials", "trial_metrics", "runs", "epochs"):
        assert count(store, table) == 0


# -- trials ---------------------------------------------------------------------------
def test_trial_numbers_are_consecutive_per_study(store: Store, study: str) -> None:
    store.create_or_load_study("t", task="x", families=["f"], metric="m", direction="minimize", budget=5)
    got = [store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0]) for _ in range(5)]
    assert got == [0, 1, 2, 3, 4]
    assert store.add_trial("t", family="f", config={}, params=1, seeds=[0]) == 0
    assert store.add_rejected(study, family="hourglass", config=CONFIG, params=10**9, reason="over budget") == 5


def test_add_trial_fields_and_dimension_columns(store: Store, study: str) -> None:
    n = store.add_trial(
        study, family="hourglass", config=CONFIG, params=123, seeds=(0, 1), optuna={"params": {"d_z": 1024}}, note="hi"
    )
    (t,) = store.trials(study)
    assert (t.number, t.family, t.config, t.params, t.status, t.seeds) == (
        n,
        "hourglass",
        CONFIG,
        123,
        "running",
        [0, 1],
    )
    assert t.optuna == {"params": {"d_z": 1024}} and t.note == "hi" and t.metrics == {}
    assert t.started_at is not None and t.started_at.tzinfo is not None
    store.add_trial(study, family="other", config={"width": 5}, params=1, seeds=[0])
    cols, rows = store.query_readonly('SELECT d_z, d_h, "L", optuna FROM trials ORDER BY number')
    assert cols == ["d_z", "d_h", "L", "optuna"]
    assert rows[0][:3] == (1024, 64, 3)
    assert rows[1] == (None, None, None, None)  # absent keys and optuna are SQL NULL
    assert store.query_readonly("SELECT width FROM trials ORDER BY number")[1] == [(None,), (5,)]


def test_finish_trial_round_trip(store: Store, study: str) -> None:
    n = store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0, 1])
    runs = [
        make_run(0, {"psnr": 20.0, "ssim": 0.8, "val_psnr": 21.0}),
        make_run(1, {"psnr": 22.0, "ssim": 0.9, "val_psnr": 23.0}),
    ]
    store.finish_trial(study, n, make_result(n, runs))
    (t,) = store.trials(study)
    assert t.status == "complete" and t.device == "cpu" and t.duration_s == 3.0
    assert t.finished_at is not None and t.finished_at.tzinfo is not None
    assert set(t.metrics) == {"psnr", "ssim", "val_psnr"}
    mean, std, k = t.metrics["psnr"]
    assert (mean, k) == (21.0, 2) and std == pytest.approx(math.sqrt(2))
    assert t.metrics["ssim"][0] == pytest.approx(0.85)
    assert store.query_readonly("SELECT objective FROM trials")[1] == [(21.0,)]
    cols, rows = store.query_readonly(
        'SELECT "repeat", seed, status, best_epoch, duration_s FROM runs ORDER BY "repeat"'
    )
    assert rows == [(0, 0, "complete", 3, 1.0), (1, 1, "complete", 3, 2.0)]
    epochs = store.epochs(study, n)
    assert len(epochs) == 6
    assert epochs[0] == {"repeat": 0, "seed": 0, "epoch": 1, "train_loss": 0.5, "val_psnr": 11.0, "elapsed_s": 0.1}
    assert [(e["repeat"], e["epoch"]) for e in epochs] == [(r, e) for r in (0, 1) for e in (1, 2, 3)]


def test_epochs_of_and_objectives_read_many_trials_as_the_per_trial_reads(store: Store, study: str) -> None:
    """`epochs_of` (the resumed pruner's curves) and `objectives` (`--keep pareto`'s front)
    in one read each give what `epochs` and `trials` give trial by trial."""
    plan = [
        ("hourglass", "complete", [20.0, 22.0]),
        ("conventional", "complete", [30.0]),
        ("hourglass", "pruned", [18.0]),
        ("hourglass", "complete", [math.nan]),
        ("hourglass", "failed", None),
        ("hourglass", "running", None),
    ]
    for family, status, values in plan:
        n = store.add_trial(study, family=family, config=CONFIG, params=10 + len(family), seeds=[0, 1])
        if values is not None:
            runs = [make_run(i, {"psnr": v}) for i, v in enumerate(values)]
            store.finish_trial(study, n, make_result(n, runs, status=status))
        elif status == "failed":
            store.finish_trial(study, n, make_result(n, [], status="failed", error="boom"))
    statuses = ["complete", "pruned"]
    by_trial = store.epochs_of(study, statuses)
    assert by_trial == {t.number: store.epochs(study, t.number) for t in store.trials(study, statuses)}
    assert store.epochs_of(study, statuses, repeat=0) == {
        n: [r for r in rows if r["repeat"] == 0] for n, rows in by_trial.items()
    }
    assert store.epochs_of(study, ["failed"]) == {}
    for family in ("hourglass", "conventional"):
        got = store.objectives(study, family, ["complete"])
        want = [
            (t.number, t.params, t.metrics["psnr"][0], len(t.seeds), t.config)
            for t in store.trials(study, ["complete"])
            if t.family == family
        ]
        assert [(r.number, r.params) for r in got] == [(n, p) for n, p, _, _, _ in want]
        assert all(
            r.objective == v or (math.isnan(r.objective) and math.isnan(v)) for r, (_, _, v, _, _) in zip(got, want)
        )
        sizes = {p for _, p, _, _, _ in want}
        details = store.configurations(study, family, ["complete"], sizes)
        assert [(c.number, c.runs, c.config) for c in details] == [(n, k, c) for n, _, _, k, c in want]
        assert store.configurations(study, family, ["complete"], [p + 1 for p in sizes]) == []
    assert [r.number for r in store.objectives(study, "hourglass", ["complete"])] == [0, 3]


def test_single_run_has_no_std(store: Store, study: str) -> None:
    n = store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0])
    store.finish_trial(study, n, make_result(n, [make_run(0, {"psnr": 20.0})]))
    assert store.trials(study)[0].metrics == {"psnr": (20.0, None, 1)}


def test_non_finite_values_are_stored(store: Store, study: str) -> None:
    n = store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0, 1])
    runs = [
        make_run(0, {"psnr": math.nan, "ssim": math.inf}, loss=math.inf),
        make_run(1, {"psnr": 3.0, "ssim": 1.0}, loss=math.nan),
    ]
    store.finish_trial(study, n, make_result(n, runs, status="diverged", error="loss is nan"))
    (t,) = store.trials(study)
    assert t.status == "diverged" and t.error == "loss is nan"
    assert math.isnan(t.metrics["psnr"][0]) and t.metrics["psnr"][2] == 2
    assert store.query_readonly("SELECT objective FROM trials")[1] == [(None,)]
    for (text,) in store.query_readonly("SELECT metrics FROM runs")[1]:
        value = text if isinstance(text, dict) else json.loads(text)  # valid JSON
        assert all(v is None or math.isfinite(v) for v in value.values())
    assert all(math.isnan(e["train_loss"]) for e in store.epochs(study, n))


def test_finish_twice_replaces(store: Store, study: str) -> None:
    n = store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0, 1])
    runs = [make_run(0, {"psnr": 20.0}), make_run(1, {"psnr": 22.0})]
    store.finish_trial(study, n, make_result(n, runs))
    before = {t: count(store, t) for t in ("trials", "trial_metrics", "runs", "epochs")}
    runs[0].metrics["psnr"] = 30.0
    store.finish_trial(study, n, make_result(n, runs))
    assert {t: count(store, t) for t in before} == before
    assert store.trials(study)[0].metrics["psnr"][0] == 26.0


def test_run_artifacts_round_trip_and_replace(store: Store, study: str) -> None:
    n = store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0, 1])
    runs = [make_run(0, {"psnr": 20.0}), make_run(1, {"psnr": 22.0})]
    runs[0].artifacts = {
        "samples": {"media_type": "image/png", "data": "iVBOR" * 1000},
        "notes": {"media_type": "text/plain", "data": "aGk="},
    }
    runs[1].artifacts = {"samples": {"media_type": "image/png", "data": "AAAA"}}
    store.finish_trial(study, n, make_result(n, runs))
    got = store.artifacts(study, n)
    assert [(a["repeat"], a["seed"], a["name"]) for a in got] == [(0, 0, "notes"), (0, 0, "samples"), (1, 1, "samples")]
    assert got[1]["data"] == "iVBOR" * 1000 and got[1]["media_type"] == "image/png"
    assert [a["data"] for a in store.artifacts(study, n, "samples")] == ["iVBOR" * 1000, "AAAA"]
    runs[0].artifacts = {}
    store.finish_trial(study, n, make_result(n, runs))  # a second finish replaces them
    assert [a["repeat"] for a in store.artifacts(study, n)] == [1]
    assert count(store, "run_artifacts") == 1
    store.delete_study(study)
    assert count(store, "run_artifacts") == 0


def test_artifacts_of_many_trials_in_one_query(store: Store, study: str, monkeypatch) -> None:
    """The batched read gives each trial what `artifacts` gives it, in one query per
    chunk of trial numbers (issue 33: a page of 770 front members asked 770 times)."""
    numbers = []
    for k in range(5):
        n = store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0, 1])
        runs = [make_run(0, {"psnr": 20.0}), make_run(1, {"psnr": 22.0})]
        if k != 2:  # trial 2 keeps none
            runs[k % 2].artifacts = {
                "samples": {"media_type": "image/png", "data": f"P{k}"},
                "notes": {"media_type": "text/plain", "data": "aGk="},
            }
        store.finish_trial(study, n, make_result(n, runs))
        numbers.append(n)
    asked = numbers + [99]  # a number the study does not have
    statements: list[str] = []
    listen = lambda *a: statements.append(a[2])  # noqa: E731 (conn, cursor, statement, ...)
    event.listen(store._engine, "before_cursor_execute", listen)
    got = store.artifacts_of(study, asked, "samples")
    event.remove(store._engine, "before_cursor_execute", listen)
    assert len([q for q in statements if "run_artifacts" in q]) == 1
    assert got == {n: store.artifacts(study, n, "samples") for n in numbers if n != numbers[2]}
    assert store.artifacts_of(study, asked) == {n: store.artifacts(study, n) for n in numbers if n != numbers[2]}
    monkeypatch.setattr(type(store), "_IN_CHUNK", 2)  # several chunks, same answer
    assert store.artifacts_of(study, asked, "samples") == got
    assert store.artifacts_of(study, []) == {}


def test_study_versions_change_with_what_pages_show(store: Store, study: str) -> None:
    """Issue 33: `search serve` answers 304 while the version holds, so every change a
    page shows must change it, and a heartbeat (which changes nothing shown) must not."""

    def version() -> str:
        return store.study_versions(study)[study].version

    seen = [version()]

    def changed() -> bool:
        now = version()
        new = now not in seen
        seen.append(now)
        return new

    assert not changed()  # reading twice
    n = store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0], owner="me")
    assert changed()
    store.heartbeat(study, [n], "me")
    assert not changed()
    store.finish_trial(study, n, make_result(n, [make_run(0, {"psnr": 20.0})]))
    assert changed()
    store.finish_trial(study, n, make_result(n, [make_run(0, {"psnr": 21.0})]))  # a re-finish
    assert changed()
    m = store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0])
    assert changed()
    store.interrupt_trials(study, [m])  # no time changes, the status does
    assert changed()
    store.add_rejected(study, family="hourglass", config=CONFIG, params=10**9, reason="over budget")
    assert changed()
    store.create_or_load_study(
        study, task="mnist-denoise", families=["hourglass"], metric="psnr", direction="maximize", budget=2_000_000
    )
    assert changed()
    got = store.study_versions(study)[study]
    assert got.changed_at is not None and got.changed_at.tzinfo is not None
    assert got.changed_at >= store.trials(study)[-1].finished_at
    store.create_or_load_study(
        "other", task="mnist-denoise", families=["hourglass"], metric="psnr", direction="maximize", budget=10
    )
    every = store.study_versions()
    assert set(every) == {study, "other"} and every[study] == got
    assert every["other"].changed_at == store.get_study("other").created_at
    with pytest.raises(StorageError, match="no study named 'nope'"):
        store.study_versions("nope")


def test_finish_unknown_trial(store: Store, study: str) -> None:
    with pytest.raises(StorageError, match="has no trial 7"):
        store.finish_trial(study, 7, make_result(7, [make_run(0, {"psnr": 1.0})]))
    with pytest.raises(StorageError, match="has no trial 7"):
        store.epochs(study, 7)


def test_interrupt_running(store: Store, study: str) -> None:
    a = store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0, 1])
    b = store.add_trial(study, family="hourglass", config={"d_z": 900}, params=11, seeds=[2])
    store.finish_trial(study, a, make_result(a, [make_run(0, {"psnr": 1.0})]))
    c = store.add_trial(study, family="conventional", config={"d_z": 5}, params=12, seeds=[3])
    got = store.interrupt_running(study)
    assert [(t.number, t.family, t.config, t.seeds, t.status) for t in got] == [
        (b, "hourglass", {"d_z": 900}, [2], "interrupted"),
        (c, "conventional", {"d_z": 5}, [3], "interrupted"),
    ]
    assert all(t.note == "interrupted: the process running it stopped" for t in got)
    assert [t.status for t in store.trials(study)] == ["complete", "interrupted", "interrupted"]
    assert store.interrupt_running(study) == []


def test_rejected_trials(store: Store, study: str) -> None:
    n = store.add_rejected(study, family="hourglass", config=CONFIG, params=10**9, reason="2.1M parameters > budget 1M")
    (t,) = store.trials(study, statuses=["rejected"])
    assert (t.number, t.status, t.note, t.params, t.seeds) == (n, "rejected", "2.1M parameters > budget 1M", 10**9, [])
    assert store.trials(study, statuses=["running"]) == []


def test_list_studies_counts_and_best(store: Store) -> None:
    for name, direction in (("max", "maximize"), ("min", "minimize")):
        store.create_or_load_study(name, task="t", families=["f"], metric="psnr", direction=direction, budget=100)
        for value in (3.0, 7.0, 5.0):
            n = store.add_trial(name, family="f", config={}, params=1, seeds=[0])
            store.finish_trial(name, n, make_result(n, [make_run(0, {"psnr": value})]))
        n = store.add_trial(name, family="f", config={}, params=1, seeds=[0])
        store.finish_trial(
            name,
            n,
            make_result(  # failed: never the best
                n, [make_run(0, {"psnr": 100.0 if direction == "maximize" else -1.0})], status="failed", error="boom"
            ),
        )
        n = store.add_trial(name, family="f", config={}, params=1, seeds=[0])
        store.finish_trial(name, n, make_result(n, [make_run(0, {}, status="diverged")], status="diverged"))
        store.add_trial(name, family="f", config={}, params=1, seeds=[0])
        store.add_rejected(name, family="f", config={}, params=1000, reason="too big")
    store.create_or_load_study("empty", task="t", families=["f"], metric="psnr", direction="maximize", budget=100)
    summary = {s.name: s for s in store.list_studies()}
    assert list(summary) == ["empty", "max", "min"]
    for name, best in (("max", 7.0), ("min", 3.0)):
        s = summary[name]
        assert (s.n_complete, s.n_failed, s.n_running, s.n_rejected, s.best) == (3, 2, 1, 1, best)
    assert summary["empty"].best is None and summary["empty"].n_complete == 0


# -- frames ---------------------------------------------------------------------------
def test_trials_frame(store: Store, study: str) -> None:
    a = store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0, 1])
    store.finish_trial(
        study,
        a,
        make_result(a, [make_run(0, {"psnr": 20.0, "val_psnr": 1.0}), make_run(1, {"psnr": 22.0, "val_psnr": 2.0})]),
    )
    b = store.add_trial(study, family="conventional", config={"width": 7}, params=20, seeds=[0])
    store.finish_trial(study, b, make_result(b, [make_run(0, {"psnr": 18.0, "val_psnr": 3.0})]))
    store.add_rejected(study, family="hourglass", config=CONFIG, params=10**9, reason="big")
    df = store.trials_frame(study)
    assert list(df.columns) == [
        "study",
        "number",
        "status",
        "family",
        "params",
        "config",
        *DIM_COLUMNS,
        "seeds",
        "psnr",
        "psnr_std",
        "val_psnr",
        "val_psnr_std",
        "n_runs",
        "objective",
        "note",
        "error",
        "device",
        "started_at",
        "finished_at",
        "duration_s",
    ]
    assert df["number"].tolist() == [0, 1, 2]
    assert df["status"].tolist() == ["complete", "complete", "rejected"]
    assert df["params"].dtype == "int64" and df["params"].tolist() == [10, 20, 10**9]
    for col in ("d_z", "d_h", "L", "n_runs"):
        assert df[col].dtype == "Int64"
    assert df["d_z"].tolist()[:2] == [1024, pd.NA] and df["n_runs"].tolist() == [2, 1, 0]
    assert df["config"][1] == {"width": 7} and df["seeds"][0] == [0, 1]
    assert df["psnr"].dtype == "float64" and df["psnr"].tolist()[:2] == [21.0, 18.0]
    assert math.isnan(df["psnr"][2])
    assert df["psnr_std"][0] == pytest.approx(math.sqrt(2)) and math.isnan(df["psnr_std"][1])
    assert df["objective"].tolist()[:2] == [21.0, 18.0] and df["note"][2] == "big"
    assert str(df["finished_at"].dtype) == "datetime64[us, UTC]" and df["study"].eq("s").all()
    assert df["status"].dtype == object and df["note"].tolist() == [None, None, "big"]
    assert pd.isna(df["started_at"][2]) and df["started_at"][0] <= df["finished_at"][0]


def test_trials_frame_of_empty_study(store: Store, study: str) -> None:
    df = store.trials_frame(study)
    assert df.empty and list(df.columns) == list(FIXED_COLUMNS)
    assert df["number"].dtype == "int64" and df["d_z"].dtype == "Int64"
    assert str(df["started_at"].dtype) == "datetime64[us, UTC]"


def test_metric_named_like_a_column(store: Store, study: str) -> None:
    n = store.add_trial(study, family="f", config={}, params=1, seeds=[0])
    store.finish_trial(study, n, make_result(n, [make_run(0, {"psnr": 1.0, "params": 5.0})]))
    df = store.trials_frame(study)
    assert df["params"].tolist() == [1] and df["metric_params"].tolist() == [5.0]


def test_load_trials(url: str, store: Store, study: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store.add_trial(study, family="hourglass", config=CONFIG, params=10, seeds=[0])
    assert load_trials(study, url)["number"].tolist() == [0]
    monkeypatch.setenv("SEARCH_STORAGE", url)
    assert load_trials(study)["family"].tolist() == ["hourglass"]
