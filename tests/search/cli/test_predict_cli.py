"""`search predict` on stored studies whose fronts follow known laws."""

import json

import numpy as np
import pytest

from core.trials import RunResult, TrialResult
from models import get_family
from reports.scaling import ERROR_SCALES, Law
from storage import Store
from tasks import get_task

LAWS = {"hourglass": Law(0.004, 6.0, 0.5), "conventional": Law(0.008, 6.0, 0.5)}


@pytest.fixture
def url(tmp_path):
    url = f"sqlite:///{tmp_path / 'p.sqlite'}"
    store = Store(url)
    rng = np.random.default_rng(0)
    store.create_or_load_study(
        "s", task="digits-denoise", families=list(LAWS), metric="psnr", direction="maximize", budget=100_000
    )
    store.create_or_load_study(
        "one", task="digits-denoise", families=["hourglass"], metric="psnr", direction="maximize", budget=100_000
    )
    store.create_or_load_study(
        "b", task="digits-denoise", families=list(LAWS), metric="bleu", direction="maximize", budget=100_000
    )
    for i in range(32):
        fam = list(LAWS)[i % 2]
        params = int(np.exp(rng.uniform(np.log(1000), np.log(100_000))))
        psnr = float(ERROR_SCALES["psnr"].from_error(LAWS[fam](params))) - rng.exponential(0.1)
        for study in ("s", "one") if fam == "hourglass" else ("s",):
            n = store.add_trial(study, family=fam, config={"i": i}, params=params, seeds=[0, 1, 2])
            runs = [RunResult(k, "complete", {"psnr": psnr + rng.normal(0, 0.03)}, 1, [], 0.1) for k in range(3)]
            store.finish_trial(study, n, TrialResult(n, "complete", runs, 0.1, "cpu"))
    add_shaped_study(store, rng)
    store.close()
    return url


def add_shaped_study(store, rng):
    """Study "shaped": real configurations on digits-denoise whose widths grow along the
    front at a fixed depth (hourglass d_h = d_z / 4, conventional d_h = 2 d_z), L = 2."""
    io = get_task("digits-denoise").io()
    store.create_or_load_study(
        "shaped", task="digits-denoise", families=list(LAWS), metric="psnr", direction="maximize", budget=100_000
    )
    for fam, ratio in (("hourglass", 0.25), ("conventional", 2.0)):
        for d_z in np.geomspace(70, 180, 8).astype(int):
            config = {"fixed_w_in": False, "L": 2, "d_z": int(d_z), "d_h": int(d_z * ratio), "lr": 1e-3}
            params = get_family(fam).count_params(config, io)
            psnr = float(ERROR_SCALES["psnr"].from_error(LAWS[fam](params)))
            n = store.add_trial("shaped", family=fam, config=config, params=params, seeds=[0, 1])
            runs = [RunResult(k, "complete", {"psnr": psnr + rng.normal(0, 0.02)}, 1, [], 0.1) for k in range(2)]
            store.finish_trial("shaped", n, TrialResult(n, "complete", runs, 0.1, "cpu"))


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


@pytest.mark.slow  # over 10 s here: the README's test command leaves it to `-m slow`
def test_predict_proposes_a_configuration_within_each_target_with_its_exact_count(cli, url):
    code, out, err = cli("predict", "shaped", "--at", "1M,10M", "--format", "json", "--storage", url)
    assert code == 0, err
    io = get_task("digits-denoise").io()
    for at in json.loads(out)["targets"]:
        for f in at["families"]:
            c = f["configuration"]
            cfg = c["config"]
            assert c["params"] == get_family(f["family"]).count_params(cfg, io) <= at["budget"]
            assert c["params"] > 0.9 * at["budget"] and cfg["L"] == 2 and cfg["lr"] == 1e-3
            ratio = 0.25 if f["family"] == "hourglass" else 2.0
            assert cfg["d_h"] / cfg["d_z"] == pytest.approx(ratio, rel=0.1)  # the front's widths are rounded
            assert 0.5 <= c["trends"]["d_z"] < 1  # N ~ d_z^2 + 128 d_z: between sqrt and linear
            assert "L = 2 (the same on every front configuration)" in c["notes"]
    code, out, _ = cli("predict", "shaped", "--at", "1M", "--storage", url)
    line = next(x for x in out.splitlines() if "hourglass" in x and "configuration to train at 1M:" in x)
    assert '"L": 2' in line and "parameters;" in line and "d_z ~ N^" in line
    code, out, _ = cli("predict", "shaped", "--at", "1M", "--format", "csv", "--storage", url)
    assert code == 0 and "config_params" in out.splitlines()[0]
    code, out, _ = cli("predict", "s", "--at", "1M", "--storage", url)  # configs {"i": ...}: says so
    assert "no configuration to train at 1M: the front's configurations lack L, d_z, d_h" in out


@pytest.mark.parametrize(
    "args,match",
    [
        (("s", "--at", "50K"), "--at 50K is not above the search budget 100K"),
        (("s", "--at", "1M", "--confidence", "2"), "--confidence must be between 0 and 1"),
        (("s", "--at", "1Q"), "bad budget"),
        (("s", "--at", ","), "--at needs at least one budget"),
        (("s", "--at", "1M", "--families", "mixer"), "no family mixer"),
        (("one", "--at", "1M"), "predict compares families: one has 1 (hourglass)"),
        (("b", "--at", "1M"), "cannot predict bleu: no error scale"),
        (("nope", "--at", "1M"), "no study named 'nope'"),
        (("s",), "the following arguments are required: --at"),
    ],
)
def test_bad_predict_input_is_one_line_exit_2(cli, url, args, match):
    code, _, err = cli("predict", *args, "--storage", url)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_report_predict_at_draws_the_laws_to_the_budgets(cli, url, tmp_path):
    code, _, err = cli("report", "s", "--predict-at", "1M,10M", "--out", str(tmp_path / "site"), "--storage", url)
    assert code == 0, err
    page = (tmp_path / "site" / "study-s.html").read_text()
    assert "hourglass predicted" in page and "conventional at the targets" in page and "markers at 1M, 10M" in page
