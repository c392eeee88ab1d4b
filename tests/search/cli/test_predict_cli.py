"""`search predict` on stored studies whose fronts follow known laws."""
import json

import numpy as np
import pytest

from core.trials import RunResult, TrialResult
from reports.scaling import ERROR_SCALES, Law
from storage import Store

LAWS = {"hourglass": Law(0.004, 6.0, 0.5), "conventional": Law(0.008, 6.0, 0.5)}


@pytest.fixture
def url(tmp_path):
    url = f"sqlite:///{tmp_path / 'p.sqlite'}"
    store = Store(url)
    rng = np.random.default_rng(0)
    store.create_or_load_study("s", task="digits-denoise", families=list(LAWS), metric="psnr",
                               direction="maximize", budget=100_000)
    store.create_or_load_study("one", task="digits-denoise", families=["hourglass"], metric="psnr",
                               direction="maximize", budget=100_000)
    store.create_or_load_study("b", task="digits-denoise", families=list(LAWS), metric="bleu",
                               direction="maximize", budget=100_000)
    for i in range(32):
        fam = list(LAWS)[i % 2]
        params = int(np.exp(rng.uniform(np.log(1000), np.log(100_000))))
        psnr = float(ERROR_SCALES["psnr"].from_error(LAWS[fam](params))) - rng.exponential(0.1)
        for study in ("s", "one") if fam == "hourglass" else ("s",):
            n = store.add_trial(study, family=fam, config={"i": i}, params=params, seeds=[0, 1, 2])
            runs = [RunResult(k, "complete", {"psnr": psnr + rng.normal(0, 0.03)}, 1, [], 0.1) for k in range(3)]
            store.finish_trial(study, n, TrialResult(n, "complete", runs, 0.1, "cpu"))
    store.close()
    return url


def test_predict_reads_each_front_at_a_larger_budget(cli, url):
    code, out, err = cli("predict", "s", "--at", "1M,10M", "--format", "json", "--storage", url)
    assert code == 0, err
    got = json.loads(out)
    assert got["error_scale"].startswith("MSE") and got["search_budget"] == 100_000
    fams = {f["family"]: f for f in got["families"]}
    assert all(f["trust"] is None and f["front_points"] >= 4 for f in fams.values())
    assert fams["hourglass"]["alpha"] == pytest.approx(0.5, rel=0.3)
    at_1m, at_10m = got["targets"]
    assert at_1m["leader"] == "hourglass" and at_1m["margin_low"] > 0 and at_10m["budget"] == 10_000_000
    hg = next(f for f in at_1m["families"] if f["family"] == "hourglass")
    truth = float(ERROR_SCALES["psnr"].from_error(LAWS["hourglass"](1e6)))
    assert hg["low"] <= hg["value"] <= hg["high"] and abs(hg["value"] - truth) < 1.0 and hg["p_best"] > 0.9
    code, out, _ = cli("predict", "s", "--at", "1M", "--storage", url)
    assert code == 0 and "at 1M parameters:" in out and "hourglass ahead of conventional by" in out


@pytest.mark.parametrize("args,match", [
    (("s", "--at", "50K"), "--at 50K is not above the search budget 100K"),
    (("s", "--at", "1M", "--confidence", "2"), "--confidence must be between 0 and 1"),
    (("s", "--at", "1Q"), "bad budget"),
    (("s", "--at", ","), "--at needs at least one budget"),
    (("s", "--at", "1M", "--families", "mixer"), "no family mixer"),
    (("one", "--at", "1M"), "predict compares families: one has 1 (hourglass)"),
    (("b", "--at", "1M"), "cannot predict bleu: no error scale"),
    (("nope", "--at", "1M"), "no study named 'nope'"),
    (("s",), "the following arguments are required: --at"),
])
def test_bad_predict_input_is_one_line_exit_2(cli, url, args, match):
    code, _, err = cli("predict", *args, "--storage", url)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
