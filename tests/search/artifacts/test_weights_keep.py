"""Writing weights (safetensors with metadata, a record with size and sha256) and
`--keep pareto` deleting the weights of trials that fall off their family's front."""

import hashlib
import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load

from core.trials import EpochRecord, RunResult, TrialResult, TrialSpec
from search.artifacts.keep import Keeper
from search.artifacts.load import metadata_of
from search.artifacts.weights import WEIGHTS, write_weights
from storage import Store

CONFIG = {"d_z": 65, "d_h": 4, "L": 1, "fixed_w_in": False, "lr": 0.001}


def spec(number=0, study="s/1"):
    return TrialSpec(study, number, "hourglass", CONFIG, "digits-denoise", (7,))


def test_a_written_file_holds_the_state_and_what_rebuilds_it(tmp_path):
    state = {"a.weight": torch.arange(6.0).reshape(2, 3).t(), "b": torch.ones(2)}  # a transposed view, too
    record = write_weights(str(tmp_path / "w"), spec(3), 7, state)
    path = tmp_path / "w" / record["store_key"]
    data = path.read_bytes()
    assert record["store"] == str(tmp_path / "w") and record["size"] == len(data)
    assert record["sha256"] == hashlib.sha256(data).hexdigest()
    assert record["store_key"].startswith("s_1.trial3.seed7.") and record["store_key"].endswith(".safetensors")
    back = load(data)
    assert torch.equal(back["a.weight"], state["a.weight"]) and torch.equal(back["b"], state["b"])
    meta = metadata_of(data)
    assert meta["family"] == "hourglass" and json.loads(meta["config"]) == CONFIG
    assert int(meta["params"]) == 64 * 65 + 2 * 1 * 65 * 4 + 65 * 64  # the family's exact count (8x8 digits)
    assert (meta["task"], meta["study"], meta["trial"], meta["seed"]) == ("digits-denoise", "s/1", "3", "7")


def result(number, value, store_dir, status="complete"):
    state = {"w": torch.full((4,), float(number))}
    run = RunResult(7, status, {"psnr": value}, 1, [EpochRecord(1, 0.1, {"psnr": value}, 0.1)], 0.1)
    run.artifacts = {WEIGHTS: write_weights(str(store_dir), spec(number, "k"), 7, state)}
    return TrialResult(number, status, [run], 0.1, "cpu")


def kept_files(store_dir: Path) -> set[str]:
    return {p.name for p in store_dir.iterdir()}


@pytest.mark.parametrize("keep", ["pareto", "all"])
def test_keep_pareto_holds_each_familys_front_and_all_holds_every_complete_trial(tmp_path, keep):
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.create_or_load_study(
        "k",
        task="digits-denoise",
        families=["hourglass", "conventional"],
        metric="psnr",
        direction="maximize",
        budget=100,
    )
    keeper = Keeper(keep, store, "k", "maximize")
    w = tmp_path / "w"
    # (family, params, psnr): hourglass 0 is dominated by 1 (fewer params, better); 2 by nothing;
    # conventional 3 is worse than hourglass 1 but alone on its family's front.
    plan = [("hourglass", 50, 10.0), ("hourglass", 40, 12.0), ("hourglass", 90, 15.0), ("conventional", 30, 5.0)]
    for family, params, value in plan:
        n = store.add_trial("k", family=family, config=CONFIG, params=params, seeds=[7])
        r = result(n, value, w)
        dropped = keeper.before_store(r)
        store.finish_trial("k", n, r)
        keeper.after_store(family, r, dropped)
    n = store.add_trial("k", family="hourglass", config=CONFIG, params=10, seeds=[7])
    r = result(n, 1.0, w, status="failed")  # an incomplete trial's weights: never recorded, deleted
    dropped = keeper.before_store(r)
    store.finish_trial("k", n, r)
    keeper.after_store("hourglass", r, dropped)

    records = {t: store.artifacts("k", t, WEIGHTS) for t in range(5)}
    assert records[4] == []
    live = {t for t, rs in records.items() if rs and rs[0]["removed_at"] is None}
    assert live == ({1, 2, 3} if keep == "pareto" else {0, 1, 2, 3})
    assert kept_files(w) == {records[t][0]["store_key"] for t in live}  # the folder holds exactly those
    if keep == "pareto":
        assert records[0][0]["removed_at"] is not None and records[0][0]["sha256"]  # marked, not forgotten
        assert store.remove_artifacts("k", [0, 1], WEIGHTS) == [
            {"number": 1, "repeat": 0, "store": str(w), "store_key": records[1][0]["store_key"]}
        ]  # 0: already
    store.close()


def test_keep_pareto_draws_the_front_by_configuration_so_a_seed_checked_trial_keeps_its_weights(tmp_path):
    """A configuration's seed check that beats the configuration's first run does not take
    the first run's weights: the front is over configurations (the run-weighted mean of
    their trials, as the verdicts read it), so the trial a verdict names stays loadable."""
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.create_or_load_study(
        "k", task="digits-denoise", families=["hourglass"], metric="psnr", direction="maximize", budget=100
    )
    keeper = Keeper("pareto", store, "k", "maximize")
    w = tmp_path / "w"
    other = {**CONFIG, "lr": 0.01}
    # (config, params, psnr, note): 1 and its seed check 2 are one configuration at 40 params
    # with mean 12.0; 3 (another config of that size, 11.8) is beaten by it; 0 is alone at
    # 20 params. Per trial, 2 (12.5) would have beaten 1 (11.5) and taken its weights.
    plan = [
        (other, 20, 8.0, None),
        (CONFIG, 40, 11.5, None),
        (CONFIG, 40, 12.5, "seed check of trial 1"),
        (other, 40, 11.8, None),
    ]
    for config, params, value, note in plan:
        n = store.add_trial("k", family="hourglass", config=config, params=params, seeds=[7], note=note)
        r = result(n, value, w)
        dropped = keeper.before_store(r)
        store.finish_trial("k", n, r)
        keeper.after_store("hourglass", r, dropped)
    live = {t for t in range(4) if store.artifacts("k", t, WEIGHTS)[0]["removed_at"] is None}
    assert live == {0, 1, 2}
    store.close()
