"""`search compare` on stored studies (SQLite, and PostgreSQL when the suite has one)."""
import json
import os
import uuid

import pytest

from core.trials import RunResult, TrialResult
from storage import Store

BACKENDS = ["sqlite"] + (["postgresql"] if os.environ.get("SEARCH_TEST_POSTGRES_URL") else [])


def add(store, study, family, params, values, number_config):
    n = store.add_trial(study, family=family, config={"d_z": number_config, "d_h": 8, "L": 1}, params=params,
                        seeds=list(range(len(values))))
    runs = [RunResult(i, "complete", {"psnr": v, "val_psnr": v}, 1, [], 0.1) for i, v in enumerate(values)]
    store.finish_trial(study, n, TrialResult(n, "complete", runs, 0.1, "cpu"))


@pytest.fixture(params=BACKENDS)
def studies(request, tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}" if request.param == "sqlite" else os.environ["SEARCH_TEST_POSTGRES_URL"]
    tag = uuid.uuid4().hex[:6]
    names = {"hg": f"hg-{tag}", "conv": f"conv-{tag}", "sr": f"sr-{tag}"}
    store = Store(url)
    for key, fams in (("hg", ["hourglass"]), ("conv", ["conventional"])):
        store.create_or_load_study(names[key], task="digits-denoise", families=fams, metric="psnr",
                                   direction="maximize", budget=100_000)
    store.create_or_load_study(names["sr"], task="digits-sr", families=["hourglass"], metric="psnr",
                               direction="maximize", budget=100_000)
    add(store, names["hg"], "hourglass", 10_000, [20.0, 20.2, 19.9], 70)
    add(store, names["hg"], "hourglass", 50_000, [24.0, 24.1, 23.8], 90)
    add(store, names["conv"], "conventional", 12_000, [15.0, 15.3, 15.1], 70)
    add(store, names["conv"], "conventional", 60_000, [24.0, 24.3, 23.9], 80)
    yield url, names
    if request.param == "postgresql":
        for name in names.values():
            store.delete_study(name)
    store.close()


def test_compare_two_studies_as_json(cli, studies):
    url, n = studies
    code, out, err = cli("compare", n["hg"], n["conv"], "--budgets", "20K,100K", "--format", "json",
                         "--storage", url)
    assert code == 0, err
    got = json.loads(out)
    assert got["studies"] == [n["hg"], n["conv"]] and got["metric"] == "psnr" and got["confidence"] == 0.95
    small, large = got["levels"]
    assert small["budget"] == 20_000 and small["winner"] == "hourglass" and small["status"] == "better"
    hg = next(f for f in small["families"] if f["family"] == "hourglass")
    assert hg["value"] == pytest.approx(20.0333, abs=1e-3) and hg["study"] == n["hg"] and hg["trial"] == 0
    assert hg["low"] < hg["value"] < hg["high"] and hg["runs"] == 3 and hg["config"]["d_z"] == 70
    assert large["status"] == "not distinguishable" and large["margin_low"] < 0 < large["margin_high"]
    assert {f["family"] for f in got["fronts"]} == {"hourglass", "conventional"}
    assert all(f["low"] <= f["hypervolume"] <= f["high"] for f in got["fronts"])
    d = got["front_difference"]
    vols = {f["family"]: f["hypervolume"] for f in got["fronts"]}
    assert d["difference"] == pytest.approx(vols[d["first"]] - vols[d["second"]]) and d["difference"] >= 0
    assert d["low"] <= d["difference"] <= d["high"]


def test_compare_table_and_csv(cli, studies):
    url, n = studies
    code, out, _ = cli("compare", n["hg"], n["conv"], "--levels", "3", "--storage", url)
    assert code == 0 and "hourglass better by" in out and "front hypervolume" in out
    code, out, _ = cli("compare", n["hg"], n["conv"], "--format", "csv", "--storage", url)
    assert code == 0 and out.splitlines()[0] == "budget,family,psnr,low,high,number,params,runs,verdict"


@pytest.mark.parametrize("args,match", [
    (("{hg}", "{sr}"), "differ in task"),
    (("{hg}", "{conv}", "--families", "mixer"), "no family mixer"),
    (("{hg}", "--budgets", "10Q"), "bad budget"),
    (("{hg}", "--levels", "0"), "--levels must be at least 1"),
    (("{hg}", "--confidence", "1.5"), "--confidence must be between 0 and 1"),
    (("nope",), "no study named 'nope'"),
    (("{hg}", "--levels", "3", "--budgets", "1K"), "not allowed with argument"),
])
def test_bad_compare_input_is_one_line_exit_2(cli, studies, args, match):
    url, n = studies
    code, out, err = cli("compare", *[a.format(**n) for a in args], "--storage", url)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
