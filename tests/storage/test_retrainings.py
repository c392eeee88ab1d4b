"""Retrainings (`search train`) are stored beside the search's runs, never in place of them."""

from __future__ import annotations

import pytest

from core.errors import StorageError
from storage import Store
from tests.storage.helpers import make_result, make_run


def _finished(store: Store, study: str) -> int:
    n = store.add_trial(study, family="hourglass", config={"d_z": 8, "d_h": 4, "L": 1}, params=100, seeds=[1])
    store.finish_trial(study, n, make_result(n, [make_run(1, {"psnr": 12.0, "val_psnr": 11.0})]))
    return n


def test_a_retraining_keeps_the_searchs_runs_metrics_and_frame(store: Store, study: str) -> None:
    n = _finished(store, study)
    before = (store.trials(study), store.epochs(study, n), store.artifacts(study, n), store.trials_frame(study))
    version = store.study_versions(study)[study].version
    runs = [make_run(s, {"psnr": 15.0 + s, "val_psnr": 14.0}, n_epochs=7) for s in (1, 2)]
    runs[0].artifacts = {
        "weights": {
            "media_type": "application/vnd.safetensors",
            "store": "/w",
            "store_key": "k1",
            "size": 10,
            "sha256": "ab" * 32,
        }
    }
    k = store.add_retraining(study, n, {"epochs": 7, "seeds": [1, 2], "recipe": None}, make_result(n, runs))
    assert k == 1
    after = (store.trials(study), store.epochs(study, n), store.artifacts(study, n), store.trials_frame(study))
    assert after[:3] == before[:3] and after[3].equals(before[3])
    assert store.study_versions(study)[study].version != version  # the pages see it
    (r,) = store.retrainings(study)
    assert (r.trial, r.number, r.status, r.epochs) == (n, 1, "complete", 7)
    assert r.metrics["psnr"][0] == pytest.approx(16.5) and r.metrics["psnr"][2] == 2
    assert [run["epochs"] for run in r.runs] == [7, 7] and [run["seed"] for run in r.runs] == [1, 2]
    assert r.runs[0]["artifacts"][0]["store_key"] == "k1" and r.runs[1]["artifacts"] == []
    assert {row["epoch"] for row in store.retraining_epochs(study, n, 1)} == set(range(1, 8))
    # a second one is number 2; re-finishing the search's trial keeps both
    assert store.add_retraining(study, n, {"epochs": 3}, make_result(n, [make_run(3, {"psnr": 1.0})])) == 2
    store.finish_trial(study, n, make_result(n, [make_run(1, {"psnr": 12.0, "val_psnr": 11.0})]))
    assert [r.number for r in store.retrainings(study, [n])] == [1, 2]
    assert store.retrainings(study, [n + 1]) == []
    # the search's weights policy never removes a retraining's file
    assert store.remove_artifacts(study, [n], "weights") == []


def test_unknown_trial_is_refused_and_nothing_is_written(store: Store, study: str) -> None:
    with pytest.raises(StorageError, match="has no trial 5"):
        store.add_retraining(study, 5, {}, make_result(5, [make_run(1, {"psnr": 1.0})]))
    assert store.retrainings(study) == []


def test_deleting_the_study_deletes_its_retrainings(store: Store, study: str) -> None:
    n = _finished(store, study)
    store.add_retraining(study, n, {"epochs": 2}, make_result(n, [make_run(1, {"psnr": 1.0})]))
    store.delete_study(study)
    assert store.query_readonly("SELECT COUNT(*) FROM retrainings")[1][0][0] == 0
    assert store.query_readonly("SELECT COUNT(*) FROM runs")[1][0][0] == 0
