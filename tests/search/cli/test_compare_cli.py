"""`search compare` on stored studies (SQLite, and PostgreSQL when the suite has one)."""

import json
import math
import os
import uuid

import pytest

from core.trials import RunResult, TrialResult
from storage import Store

BACKENDS = ["sqlite"] + (["postgresql"] if os.environ.get("SEARCH_TEST_POSTGRES_URL") else [])


def add(store, study, family, params, values, number_config):
    n = store.add_trial(
        study,
        family=family,
        config={"d_z": number_config, "d_h": 8, "L": 1},
        params=params,
        seeds=list(range(len(values))),
    )
    runs = [RunResult(i, "complete", {"psnr": v, "val_psnr": v}, 1, [], 0.1) for i, v in enumerate(values)]
    store.finish_trial(study, n, TrialResult(n, "complete", runs, 0.1, "cpu"))


def two_family_study(url: str, name: str, **settings) -> Store:
    """A study of hourglass and conventional on digits-denoise, budget 100K, opened."""
    store = Store(url)
    store.create_or_load_study(
        name,
        task="digits-denoise",
        families=["hourglass", "conventional"],
        metric="psnr",
        direction="maximize",
        budget=100_000,
        **({"settings": settings} if settings else {}),
    )
    return store


@pytest.fixture(params=BACKENDS)
def studies(request, tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}" if request.param == "sqlite" else os.environ["SEARCH_TEST_POSTGRES_URL"]
    tag = uuid.uuid4().hex[:6]
    names = {"hg": f"hg-{tag}", "conv": f"conv-{tag}", "sr": f"sr-{tag}"}
    store = Store(url)
    for key, fams in (("hg", ["hourglass"]), ("conv", ["conventional"])):
        store.create_or_load_study(
            names[key], task="digits-denoise", families=fams, metric="psnr", direction="maximize", budget=100_000
        )
    store.create_or_load_study(
        names["sr"], task="digits-sr", families=["hourglass"], metric="psnr", direction="maximize", budget=100_000
    )
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
    # two configurations a family: the seed-noise interval without the thin rule (the
    # default would say "too thin": see the test below)
    code, out, err = cli(
        "compare",
        n["hg"],
        n["conv"],
        "--budgets",
        "20K,100K",
        "--format",
        "json",
        "--interval",
        "seed",
        "--min-near",
        "0",
        "--estimate",
        "best",
        "--storage",
        url,
    )
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


def test_a_margin_answers_equivalent_where_the_difference_cannot_matter(cli, studies):
    """`--margin 1` (dB): at 100K the two families' difference lies inside ±1, so the answer
    is "equivalent within ±1"; at 20K hourglass is ahead by 5 dB, beyond the margin."""
    url, n = studies
    code, out, err = cli(
        "compare",
        n["hg"],
        n["conv"],
        "--budgets",
        "20K,100K",
        "--format",
        "json",
        "--interval",
        "seed",
        "--min-near",
        "0",
        "--margin",
        "1",
        "--storage",
        url,
    )
    assert code == 0, err
    small, large = json.loads(out)["levels"]
    assert small["status"] == "better" and small["equivalence"] == 1.0
    assert large["status"] == "equivalent" and -1 < large["margin_low"] and large["margin_high"] < 1
    assert "equivalent within ±1" in large["verdict"]
    code, out, _ = cli(
        "compare",
        n["hg"],
        n["conv"],
        "--budgets",
        "100K",
        "--interval",
        "seed",
        "--min-near",
        "0",
        "--margin",
        "1",
        "--storage",
        url,
    )
    assert code == 0 and "equivalent within ±1" in out


def test_compare_table_and_csv(cli, studies):
    url, n = studies
    code, out, _ = cli(
        "compare", n["hg"], n["conv"], "--levels", "3", "--min-near", "0", "--interval", "seed", "--storage", url
    )
    assert code == 0 and "hourglass better by" in out and "front hypervolume" in out
    assert "--decide" not in out  # two studies read apart: no one study to search on
    lines = out.splitlines()  # the answer first: the question, one line per budget, the method in a line
    assert lines[0] == "psnr (maximize): which family is better at each budget"
    assert all(line.startswith("  at most ") for line in lines[1:4])
    assert lines[4].startswith("95% intervals: bootstrap over seed noise only (in full:") and len(lines[4]) <= 120
    code, out, _ = cli("compare", n["hg"], n["conv"], "--format", "csv", "--storage", url)
    assert code == 0 and out.splitlines()[0] == "budget,family,psnr,low,high,best,number,params,runs,verdict"


def test_the_fit_reads_the_front_between_its_configurations_and_shows_the_best_beside_it(cli, studies):
    """hourglass has front configurations at 10K (mean 20.03) and 50K (23.97): at 20K the
    fit is the line through both in log parameters, 20.03 + 3.93 ln 2 / ln 5; the best
    within 20K stays the 10K trial."""
    url, n = studies
    args = ("compare", n["hg"], n["conv"], "--budgets", "20K", "--min-near", "0", "--storage", url)
    code, out, _ = cli(*args, "--estimate", "fit", "--format", "json")
    hg = next(f for f in json.loads(out)["levels"][0]["families"] if f["family"] == "hourglass")
    low, high = 20.0 + 0.1 / 3, 24.0 - 0.1 / 3
    assert code == 0 and hg["value"] == pytest.approx(low + (high - low) * math.log(2) / math.log(5))
    assert hg["best"] == pytest.approx(low) and hg["params"] == 10_000
    code, out, _ = cli(*args, "--estimate", "fit")
    assert code == 0 and "21.73" in out and "(fit); best 20.03" in out
    code, out, _ = cli(*args, "--format", "json")  # the default: the best within the budget
    hg = next(f for f in json.loads(out)["levels"][0]["families"] if f["family"] == "hourglass")
    assert hg["value"] == pytest.approx(low) == pytest.approx(hg["best"])


def test_the_normal_interval_form_is_centred_on_the_estimate_and_says_so(cli, studies):
    url, n = studies
    args = ("compare", n["hg"], n["conv"], "--budgets", "20K,50K", "--min-near", "0", "--storage", url)
    code, out, err = cli(*args, "--interval-form", "normal", "--format", "json")
    assert code == 0, err
    got = json.loads(out)
    assert "normal bootstrap interval" in got["interval"]
    rows = [f for level in got["levels"] for f in level["families"] if f["low"] is not None]
    assert rows
    for f in rows:
        assert (f["low"] + f["high"]) / 2 == pytest.approx(f["value"])
    code, out, _ = cli(*args, "--format", "json")
    assert code == 0 and "normal bootstrap" not in json.loads(out)["interval"]


def test_a_budget_with_too_few_trials_near_it_is_too_thin_to_tell(cli, studies):
    url, n = studies
    code, out, err = cli("compare", n["hg"], n["conv"], "--budgets", "40K", "--format", "json", "--storage", url)
    assert code == 0, err
    (level,) = json.loads(out)["levels"]
    assert level["status"] == "too thin" and level["margin_low"] is None
    hg = next(f for f in level["families"] if f["family"] == "hourglass")
    assert hg["thin"]["near"] == 0 and hg["thin"]["needed"] == 1 and hg["thin"]["more_trials"] == 2
    assert level["verdict"].startswith("too thin to tell: conventional has 0 configurations between 13.3K and 40K")
    # hourglass's sizes up to the budget span 10K..40K, a factor 4, of which the window is a
    # factor 3: log 3 / log 4 = 79% of its trials would land there, so 2 trials make one
    assert (
        "hourglass has 0 configurations between 13.3K and 40K (1 needed): about 2 more trials of hourglass"
        in level["verdict"]
    )
    assert "resampled" in json.loads(out)["interval"]


def test_an_undecided_budget_says_what_deciding_it_would_take_and_the_decide_that_does_it(cli, tmp_path):
    """One study of both families: hourglass clearly ahead at 20K, level at 100K. The table
    ends with the undecided budget, about what evidence deciding it needs, and the --decide
    to run; a margin that decides it, or two studies read apart, leave nothing to say."""
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    store = two_family_study(url, "both")
    add(store, "both", "hourglass", 10_000, [20.0, 20.2, 19.9], 70)
    add(store, "both", "hourglass", 50_000, [24.0, 24.1, 23.8], 90)
    add(store, "both", "conventional", 12_000, [15.0, 15.3, 15.1], 70)
    add(store, "both", "conventional", 60_000, [24.0, 24.3, 23.9], 80)
    store.close()
    args = ("compare", "both", "--budgets", "20K,100K", "--interval", "seed", "--min-near", "0", "--storage", url)
    code, out, err = cli(*args)
    assert code == 0, err
    tail = out.strip().splitlines()[-3:]
    assert tail[0] == "undecided at 100K:"
    assert tail[1].startswith("  at 100K: not distinguishable") and "x the evidence near this budget" in tail[1]
    assert "--decide 100K and a larger --trials" in tail[2]
    code, out, _ = cli(*args, "--format", "json")
    assert code == 0 and json.loads(out)["next_step"][0] == "undecided at 100K:"
    code, out, _ = cli(*args, "--margin", "1")  # equivalent within ±1 at 100K: all decided
    assert code == 0 and "undecided" not in out and "--decide" not in out


def test_replicate_searches_are_pooled_by_their_group_name(cli, tmp_path):
    url = f"sqlite:///{tmp_path / 'rep.sqlite'}"
    store = Store(url)
    for k, (hg, conv) in enumerate(((20.0, 18.0), (21.0, 18.5), (20.5, 18.2)), 1):
        name = f"q-r{k}"
        two_family_study(url, name, replicate_of="q", replicate=k).close()
        for fam, top in (("hourglass", hg), ("conventional", conv)):
            add(store, name, fam, 8_000, [top - 1, top - 1.1, top - 0.9], 60)
            add(store, name, fam, 9_000, [top, top + 0.1, top - 0.1], 70)
    store.close()
    code, out, err = cli("compare", "q", "--budgets", "10K", "--format", "json", "--storage", url)
    assert code == 0, err
    got = json.loads(out)
    assert got["studies"] == ["q-r1", "q-r2", "q-r3"] and "replicate searches" in got["interval"]
    (level,) = got["levels"]
    hg = next(f for f in level["families"] if f["family"] == "hourglass")
    assert hg["value"] == pytest.approx(20.5) and hg["searches"] == 3 and hg["study"] == "q-r2"
    assert (
        level["winner"] == "hourglass"
        and level["status"] == "better"
        and level["margin"] == pytest.approx(20.5 - 54.7 / 3)
    )
    code, out, _ = cli("compare", "q-r1", "q-r2", "--replicates", "--budgets", "10K", "--storage", url)
    assert code == 0 and "replicate searches" in out and "mean of 2 searches" in out


def add_diffusion(store, study, family, params, runs):
    """A trial of a diffusion study: `runs` is one (loss, frechet, sample_accuracy) per seed."""
    n = store.add_trial(
        study,
        family=family,
        config={"D": 64, "depth": 3, "patch": 2, "mlp_ratio": 4},
        params=params,
        seeds=list(range(len(runs))),
    )
    results = [
        RunResult(
            i,
            "complete",
            {"loss": loss, "val_loss": loss, "frechet": fd, "sample_accuracy": acc, "mystery": 1.0},
            1,
            [],
            0.1,
        )
        for i, (loss, fd, acc) in enumerate(runs)
    ]
    store.finish_trial(study, n, TrialResult(n, "complete", results, 0.1, "cpu"))


@pytest.fixture
def diffusion_study(tmp_path):
    """Searched on the denoising loss, where lmlp wins; uvit's samples are better (lower
    frechet, higher sample accuracy)."""
    url = f"sqlite:///{tmp_path / 'diff.sqlite'}"
    store = Store(url)
    store.create_or_load_study(
        "hu", task="digits-diffusion", families=["lmlp", "uvit"], metric="loss", direction="minimize", budget=200_000
    )
    add_diffusion(store, "hu", "lmlp", 50_000, [(0.050, 9.0, 0.50), (0.051, 9.2, 0.52), (0.049, 8.9, 0.49)])
    add_diffusion(store, "hu", "uvit", 60_000, [(0.060, 3.0, 0.90), (0.061, 3.1, 0.91), (0.059, 2.9, 0.89)])
    store.close()
    return url


@pytest.mark.parametrize(
    "metric,winner,value",
    [(None, "lmlp", 0.050), ("loss", "lmlp", 0.050), ("frechet", "uvit", 3.0), ("sample_accuracy", "uvit", 0.90)],
)
def test_compare_on_another_metric_takes_its_own_direction(cli, diffusion_study, metric, winner, value):
    args = ("--metric", metric) if metric else ()
    code, out, err = cli(
        "compare",
        "hu",
        "--budgets",
        "100K",
        "--min-near",
        "0",
        "--interval",
        "seed",
        "--format",
        "json",
        *args,
        "--storage",
        diffusion_study,
    )
    assert code == 0, err
    got = json.loads(out)
    (level,) = got["levels"]
    assert got["metric"] == (metric or "loss") and level["winner"] == winner and level["status"] == "better"
    assert got["direction"] == ("maximize" if metric == "sample_accuracy" else "minimize")
    best = next(f for f in level["families"] if f["family"] == winner)
    assert best["value"] == pytest.approx(value) and best["runs"] == 3
    code, out, _ = cli("compare", "hu", "--budgets", "100K", "--min-near", "0", *args, "--storage", diffusion_study)
    assert code == 0 and out.startswith(f"{metric or 'loss'} (") and f"{winner} better by" in out
    code, out, _ = cli("compare", "hu", "--format", "csv", *args, "--storage", diffusion_study)
    assert code == 0 and out.splitlines()[0].startswith(f"budget,family,{metric or 'loss'},low,high")


@pytest.mark.parametrize(
    "metric,match",
    [
        ("fid", "no metric 'fid' in these studies; they have loss, val_loss, frechet, sample_accuracy, mystery"),
        ("mystery", "metric 'mystery' has no known direction"),
    ],
)
def test_an_unknown_metric_is_one_line_exit_2_naming_the_studys_metrics(cli, diffusion_study, metric, match):
    code, out, err = cli("compare", "hu", "--metric", metric, "--storage", diffusion_study)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_search_that_trains_the_smallest_model_keeps_it_in_every_resample(cli, tmp_path):
    """A study whose settings say it visited each family's smallest model first (`--corners
    both`) and whose value at 20K rests on that model's best learning rate: `search compare`
    keeps it in every bootstrap resample (a narrow interval at 20K); `--resample-corners`
    resamples it like the rest (a wide one, or too thin)."""
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    store = Store(url)
    settings = {"spread": "size", "corners": "both"}
    store.create_or_load_study(
        "s",
        task="digits-denoise",
        families=["hourglass"],
        metric="psnr",
        direction="maximize",
        budget=100_000,
        settings=settings,
    )
    for i, (params, value) in enumerate([(16_500, 18.6), (16_500, 11.9), (16_500, 17.5), (18_000, 17.4)]):
        add(store, "s", "hourglass", params, [value, value + 0.05], 60 + i)
    for i, params in enumerate((30_000, 50_000, 70_000, 90_000)):
        add(store, "s", "hourglass", params, [18.8 + i / 10, 18.85 + i / 10], 80 + i)
    store.close()

    def at_20k(*flags):
        code, out, err = cli("compare", "s", "--budgets", "20K", "--format", "json", "--storage", url, *flags)
        assert code == 0, err
        (level,) = json.loads(out)["levels"]
        (fam,) = level["families"]
        return fam

    kept, loose = at_20k(), at_20k("--resample-corners")
    assert kept["low"] is not None and kept["high"] - kept["low"] < 0.5
    assert loose["low"] is None or loose["high"] - loose["low"] > 1.0


def test_untried_answers_too_thin_where_the_front_rate_was_never_tried_near_the_budget(cli, tmp_path):
    url = f"sqlite:///{tmp_path / 'lr.sqlite'}"
    store = two_family_study(url, "lr")
    # the hourglass wins at 10K with lr 0.005; near 40K it trained only lr 0.001
    plan = [("hourglass", 10_000, 0.005, [20.0, 20.2]), ("hourglass", 10_000, 0.001, [18.0, 18.1])]
    plan += [("hourglass", 30_000, 0.001, [21.0, 21.2]), ("hourglass", 38_000, 0.001, [21.5, 21.4])]
    plan += [("conventional", 11_000, 0.001, [19.0, 19.1]), ("conventional", 35_000, 0.001, [21.0, 20.9])]
    for i, (family, params, lr, values) in enumerate(plan):
        config = {"d_z": 70 + i, "d_h": 8, "L": 1, "lr": lr}
        n = store.add_trial("lr", family=family, config=config, params=params, seeds=[0, 1])
        runs = [RunResult(j, "complete", {"psnr": v}, 1, [], 0.1) for j, v in enumerate(values)]
        store.finish_trial("lr", n, TrialResult(n, "complete", runs, 0.1, "cpu"))
    store.close()
    args = ("compare", "lr", "--budgets", "12K,40K", "--storage", url)
    code, out, err = cli(*args, "--untried", "--format", "json")
    assert code == 0, err
    got = json.loads(out)
    small, large = (level["families"][1] for level in got["levels"])  # the hourglass (by name)
    assert small["thin"] is None or small["thin"]["kind"] != "untried"  # 10K lies within 12K / 3 .. 12K
    assert large["thin"]["kind"] == "untried" and large["thin"]["untried"] == [{"lr": 0.005}] and large["low"] is None
    assert "never tried near a budget" in got["interval"]
    code, out, _ = cli(*args, "--untried")
    assert code == 0 and "hourglass's front trains with lr 0.005, which it never tried between 13.3K and 40K" in out
    code, out, _ = cli(*args, "--format", "json")  # off by default
    assert code == 0 and json.loads(out)["levels"][1]["families"][1]["thin"] is None


@pytest.mark.parametrize(
    "args,match",
    [
        (("{hg}", "--metric", "frechet"), "no metric 'frechet' in these studies; they have psnr, val_psnr"),
        (("{hg}", "{sr}"), "differ in task"),
        (("{hg}", "{conv}", "--families", "mixer"), "no family mixer"),
        (("{hg}", "--budgets", "10Q"), "bad budget"),
        (("{hg}", "--levels", "0"), "--levels must be at least 1"),
        (("{hg}", "--confidence", "1.5"), "--confidence must be between 0 and 1"),
        (("nope",), "no study named 'nope'"),
        (("{hg}", "--min-near", "-1"), "--min-near must be at least 0, got -1"),
        (("{hg}", "--interval", "luck"), "argument --interval: invalid choice: 'luck'"),
        (("{hg}", "--interval-form", "bca"), "argument --interval-form: invalid choice: 'bca'"),
        (("{hg}", "--noise", "loud"), "argument --noise: invalid choice: 'loud'"),
        (("{hg}", "--estimate", "mean"), "argument --estimate: invalid choice: 'mean'"),
        (("{hg}", "--replicates"), "replicate searches need at least two studies, got 1"),
        (("{hg}", "--levels", "3", "--budgets", "1K"), "not allowed with argument"),
        (("{hg}", "--margin", "0"), "--margin must be a difference above 0 in the metric's units, got 0.0"),
        (("{hg}", "--margin", "-0.5"), "--margin must be a difference above 0 in the metric's units, got -0.5"),
        (("{hg}", "--margin", "nan"), "--margin must be a difference above 0 in the metric's units, got nan"),
        (("{hg}", "--resample-corners=yes"), "argument --resample-corners: ignored explicit argument 'yes'"),
        (("{hg}", "--untried=yes"), "argument --untried: ignored explicit argument 'yes'"),
    ],
)
def test_bad_compare_input_is_one_line_exit_2(cli, studies, args, match):
    url, n = studies
    code, out, err = cli("compare", *[a.format(**n) for a in args], "--storage", url)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.slow
def test_search_repeats_runs_replicate_searches_that_compare_pools(cli, tmp_path):
    url = f"sqlite:///{tmp_path / 'reps.sqlite'}"
    code, out, err = cli(
        "run",
        "--space",
        "hourglass,conventional",
        "--task",
        "digits-denoise",
        "--budget",
        "20K",
        "--trials",
        "2",
        "--epochs",
        "1",
        "--max-train-samples",
        "256",
        "--repeats",
        "2",
        "--search-repeats",
        "2",
        "--seed",
        "5",
        "--study",
        "rep",
        "--no-report",
        "--storage",
        url,
    )
    assert code == 0, err
    assert "search 2 of 2: study 'rep-r2', seed 6" in out and "search compare rep" in out
    store = Store(url)
    recs = [store.get_study(f"rep-r{k}") for k in (1, 2)]
    assert [(r.settings["replicate_of"], r.settings["replicate"], r.settings["seed"]) for r in recs] == [
        ("rep", 1, 5),
        ("rep", 2, 6),
    ]
    assert all(len(store.trials_frame(r.name)) >= 2 for r in recs)
    store.close()
    code, out, err = cli("compare", "rep", "--format", "json", "--storage", url)
    assert code == 0, err
    assert json.loads(out)["studies"] == ["rep-r1", "rep-r2"]
