"""search/api/readings.py: `compare` and `predict` answer what `search compare` and
`search predict` print (their json and csv), and refuse bad input with one line."""

import json

import numpy as np
import pytest

from core.errors import UserError
from search.api.predictions import Prediction, predict
from search.api.readings import Comparison, compare
from storage import Store
from tests.search.cli.test_compare_cli import add, two_family_study
from tests.search.cli.test_predict_cli import add_shaped_study


@pytest.fixture
def url(tmp_path):
    """Studies "hg" and "conv" (one family each), replicate searches "q-r1".."q-r3" of a
    question "q", and "shaped" (two families on known laws, real configurations)."""
    url = f"sqlite:///{tmp_path / 'readings.sqlite'}"
    store = Store(url)
    for name, fam in (("hg", "hourglass"), ("conv", "conventional")):
        store.create_or_load_study(
            name, task="digits-denoise", families=[fam], metric="psnr", direction="maximize", budget=100_000
        )
    add(store, "hg", "hourglass", 10_000, [20.0, 20.2, 19.9], 70)
    add(store, "hg", "hourglass", 50_000, [24.0, 24.1, 23.8], 90)
    add(store, "conv", "conventional", 12_000, [15.0, 15.3, 15.1], 70)
    add(store, "conv", "conventional", 60_000, [24.0, 24.3, 23.9], 80)
    for k, (hg, conv) in enumerate(((20.0, 18.0), (21.0, 18.5), (20.5, 18.2)), 1):
        name = f"q-r{k}"
        two_family_study(url, name, replicate_of="q", replicate=k).close()
        for fam, top in (("hourglass", hg), ("conventional", conv)):
            add(store, name, fam, 8_000, [top - 1, top - 1.1, top - 0.9], 60)
            add(store, name, fam, 9_000, [top, top + 0.1, top - 0.1], 70)
    add_shaped_study(store, np.random.default_rng(0))
    store.close()
    return url


@pytest.mark.parametrize(
    "studies,flags,kwargs",
    [
        (["hg", "conv"], (), {}),
        (
            ["hg", "conv"],
            ("--budgets", "20K,100K", "--interval", "seed", "--min-near", "0", "--confidence", "0.9"),
            {"budgets": ["20K", 100_000], "interval": "seed", "min_near": 0, "confidence": 0.9},
        ),
        (["hg", "conv"], ("--levels", "3", "--families", "hourglass"), {"levels": 3, "families": ["hourglass"]}),
        (["q"], ("--budgets", "10K"), {"budgets": [10_000]}),  # replicate searches by their group name: pooled
        (["q-r1", "q-r3"], ("--replicates",), {"replicates": True}),
    ],
)
def test_compare_answers_what_search_compare_prints(cli, url, studies, flags, kwargs):
    args = (*studies, *flags)
    code, out, err = cli("compare", *args, "--format", "json", "--storage", url)
    assert code == 0, err
    store = Store(url)
    try:
        got = compare(store, studies, **kwargs)
    finally:
        store.close()
    assert isinstance(got, Comparison)
    assert got.to_dict() == json.loads(out)
    assert json.dumps(got.to_dict(), indent=2) + "\n" == out  # byte for byte
    assert got.pooled == studies[0].startswith("q") and got.budgets == [v["budget"] for v in json.loads(out)["levels"]]
    code, out, err = cli("compare", *args, "--format", "csv", "--storage", url)
    assert code == 0, err
    assert got.frame().to_csv(index=False) == out


def test_compare_opens_a_storage_url_itself_and_names_each_best_trial(url):
    got = compare(url, ["hg", "conv"], budgets=[20_000], interval="seed", min_near=0)
    (v,) = got.verdicts
    assert v.winner == "hourglass" and got.metric == "psnr" and got.direction == "maximize"
    best = next(r for r in v.families if r.family == "hourglass")
    assert got.origin(best.number) == ("hg", 0) and got.origin(None) == (None, None)
    assert [r.name for r in got.records] == ["hg", "conv"] and got.measure == "params"


@pytest.mark.slow  # over 10 s here: the README's test command leaves it to `-m slow`
def test_predict_answers_what_search_predict_prints(cli, url):
    code, out, err = cli("predict", "shaped", "--at", "1M,10M", "--format", "json", "--storage", url)
    assert code == 0, err
    store = Store(url)
    try:
        got = predict(store, ["shaped"], at=[1_000_000, "10M"])  # a list of numbers or budget strings
    finally:
        store.close()
    assert isinstance(got, Prediction)
    assert got.to_dict() == json.loads(out)
    assert json.dumps(got.to_dict(), indent=2) + "\n" == out  # byte for byte
    code, out, err = cli("predict", "shaped", "--at", "1M,10M", "--format", "csv", "--storage", url)
    assert code == 0, err
    assert got.frame().to_csv(index=False) == out and "config_params" in out.splitlines()[0]
    assert got.targets == (1_000_000, 10_000_000) and got.search_budget == 100_000
    assert got.proposal("hourglass", 1e6).config["L"] == 2


def one_line_error(call) -> str:
    with pytest.raises(UserError) as e:
        call()
    text = str(e.value)
    assert text and len(text.splitlines()) == 1
    return text


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"confidence": 1.5}, "--confidence must be between 0 and 1, got 1.5"),
        ({"families": ["mixer"]}, "no family mixer in these studies; they have conventional, hourglass"),
        ({"levels": 0}, "--levels must be at least 1"),
        ({"min_near": -1}, "--min-near must be at least 0, got -1"),
        ({"interval": "luck"}, "unknown interval 'luck'"),
        ({"budgets": ["10Q"]}, "bad budget '10Q'"),
        ({"budgets": [0]}, "it must be positive"),
        ({"budgets": [10_000], "levels": 3}, "give budgets or levels, not both"),
        ({"metric": "fid"}, "no metric 'fid' in these studies"),
        ({"replicates": True}, "replicate searches need at least two studies"),
    ],
)
def test_bad_compare_input_is_a_one_line_user_error(url, kwargs, match):
    studies = ["hg"] if kwargs.get("replicates") else ["hg", "conv"]
    assert match in one_line_error(lambda: compare(url, studies, **kwargs))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"at": "1M", "confidence": 1.5}, "--confidence must be between 0 and 1, got 1.5"),
        ({"at": "1M", "families": ["mixer"]}, "no family mixer in these studies"),
        ({"at": "1M", "families": ["hourglass"]}, "predict compares families: shaped has 1 (hourglass)"),
        ({"at": ","}, "--at needs at least one budget"),
        ({"at": []}, "--at needs at least one budget"),
        ({"at": [50_000]}, "--at 50K is not above the search budget 100K"),
    ],
)
def test_bad_predict_input_is_a_one_line_user_error(url, kwargs, match):
    assert match in one_line_error(lambda: predict(url, ["shaped"], **kwargs))


def test_arguments_are_checked_before_the_store_is_opened(tmp_path):
    """A bad argument is the error even when the storage is unusable, and nothing is created."""
    bad = f"sqlite:///{tmp_path / 'no' / 'such' / 'dir.sqlite'}"
    assert "--confidence" in one_line_error(lambda: compare(bad, ["s"], confidence=1.5))
    assert "--at needs" in one_line_error(lambda: predict(bad, ["s"], at=""))
    assert not (tmp_path / "no").exists()


def test_help_describes_the_answers():
    for obj in (compare, predict, Comparison, Prediction, Comparison.to_dict, Prediction.frame):
        assert obj.__doc__ and "search " in obj.__doc__
