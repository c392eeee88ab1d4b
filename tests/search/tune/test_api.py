"""The product inside a user's own Tune script (issue 29, items 2 and 4): the budgeted
searcher (search/tune/api.py) with the user's own family and trainable, with the
product's trainable, resumed; the product's trainable under Tune's own searcher
(OptunaSearch) and scheduler (ASHA); bad input as one-line ValueErrors before any write;
and the how-to's example (docs/how-to/ray-and-tune.md), run as written.

Tune's calls are made by hand where that suffices (no Ray cluster); the rest runs on one
local Ray (2 CPUs, one torch thread per trial) with tiny trials on the digits tasks."""

import math
import os
import re
import sqlite3
from pathlib import Path

import pytest
from ray.tune.search import Searcher

from search.tune import BudgetedSearcher, TuneInputError, budgeted_searcher, product_trainable
from search.tune.trainable import trial_spec_of
from storage import Store

REPO = Path(__file__).resolve().parents[3]
BUDGET = 20_000
OWN = {"my-mlp": {"width": {"low": 4, "high": 1024}, "lr": [1e-3, 1e-2]}}


def count(config):
    """my-mlp: Linear(64, width) + ReLU + Linear(width, 64), exactly."""
    return 64 * config["width"] + config["width"] + config["width"] * 64 + 64


def train_own(config):
    """A user's trainable for my-mlp: the how-to's, with 2 epochs and 512 images."""
    import torch
    from ray import tune
    from sklearn.datasets import load_digits

    torch.manual_seed(0)
    x = torch.tensor(load_digits().data[:512], dtype=torch.float32) / 16
    net = torch.nn.Sequential(
        torch.nn.Linear(64, config["width"]), torch.nn.ReLU(), torch.nn.Linear(config["width"], 64)
    )
    assert sum(p.numel() for p in net.parameters()) == count(config)
    opt = torch.optim.Adam(net.parameters(), lr=config["lr"])
    for _ in range(2):
        loss = torch.nn.functional.mse_loss(net((x + 0.5 * torch.randn_like(x)).clamp(0, 1)), x)
        opt.zero_grad(), loss.backward(), opt.step()
        tune.report({"psnr": -10 * torch.log10(loss).item()})


def url(tmp_path, name="search.db"):
    return f"sqlite:///{tmp_path / name}"


def rows(path):
    """(number, status, family, params, config) of every trial, by number."""
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT number, status, family, params, config FROM trials ORDER BY number").fetchall()
    finally:
        con.close()


def dump(path):
    con = sqlite3.connect(path)
    try:
        return list(con.iterdump())
    finally:
        con.close()


def own_searcher(tmp_path, **kw):
    base = dict(
        space=OWN,
        count_params=count,
        budget=BUDGET,
        task="digits-denoise",
        storage=url(tmp_path),
        study="own",
        trials=3,
    )
    base.update(kw)
    return budgeted_searcher(**base)


# -- bad input: a one-line ValueError, nothing written -------------------------------------
BAD = [
    (
        dict(budget=100),
        "budget 100 is below the smallest my-mlp model on digits-denoise (580 parameters (count_params))",
    ),
    (
        dict(space={"my-mlp": {"width": {"low": 4, "high": 1024}}, "constraints": []}, count_params={"my-mlp": count}),
        "space 'constraints': expected a dict of keys, got list",
    ),
    (
        dict(space={"hourglass": {"d_z": {"low": 8, "high": 32}}}, count_params=None, budget="100K"),
        "family 'hourglass': its space allows no configuration on 'digits-denoise': check its ranges",
    ),
    (dict(space="hourglass", count_params=None, budget=100), "budget 100 is below the smallest hourglass model"),
    (dict(task="nope"), "unknown task 'nope'; known: "),
    (dict(space="hourglas", count_params=None), "unknown family 'hourglas'; known: "),
    (
        dict(space={"hourglass": {"width": [8]}}, count_params=count),
        "count_params counts one family of your own in space, found none",
    ),
    (dict(count_params=lambda c: c["nope"]), "of 'my-mlp' raised KeyError"),
    (dict(count_params=lambda c: 1.5), "of 'my-mlp' must return a count >= 0, got 1.5"),
    (dict(budget="lots"), "bad budget 'lots'"),
    (dict(sampler="nope"), "unknown sampler 'nope'"),
    (dict(trials=0), "--trials and --repeats must be at least 1"),
    (dict(space={"my-mlp": {"width": {"low": 4}}}), "width: a range needs low and high"),
    (dict(storage_wait=-1), "--storage-wait must be a number of seconds, 0 or more, got -1"),
]


@pytest.mark.parametrize("kw,message", BAD, ids=[m[:40] for _, m in BAD])
def test_bad_input_is_a_one_line_value_error_and_the_database_is_unchanged(tmp_path, kw, message):
    own_searcher(tmp_path, study="before").close()  # a database with a study in it
    before = dump(tmp_path / "search.db")
    with pytest.raises(ValueError) as raised:
        own_searcher(tmp_path, **kw)
    assert isinstance(raised.value, TuneInputError)
    text = str(raised.value)
    assert message in text and "\n" not in text, text
    assert dump(tmp_path / "search.db") == before


@pytest.mark.parametrize(
    "storage,message",
    [
        ("nosuchdb://x/y", "cannot open storage 'nosuchdb://x/y'"),
        ("sqlite:///{tmp}/missing/folder/x.db", "cannot open storage"),
        ("   ", "storage must be a database URL or a SQLite file"),
    ],
)
def test_a_bad_storage_url_is_refused_and_nothing_is_written(tmp_path, storage, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        own_searcher(tmp_path, storage=storage.format(tmp=tmp_path))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "kw,message",
    [
        (dict(task="nope"), "unknown task 'nope'; known: "),
        (dict(task="digits-denoise", family="nope"), "unknown family 'nope'; known: "),
        (dict(task="digits-denoise", family="transformer"), "family 'transformer' does not fit task 'digits-denoise'"),
        (dict(task="digits-denoise", epochs=0), "epochs must be a positive integer, got 0"),
        (dict(task="digits-denoise", optimizer="nope"), "unknown optimizer 'nope'"),
        (dict(task="digits-denoise", cpus=0), "cpus must be > 0"),
        (dict(task="digits-denoise", colour="red"), "product_trainable takes no colour"),
    ],
)
def test_the_trainable_refuses_bad_settings_before_tune_starts(kw, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        product_trainable(**kw)


@pytest.mark.parametrize(
    "config,message",
    [
        ({"family": "hourglass", "d_z": 100, "d_h": 8, "L": 1}, "the trainable's config needs 'task'"),
        ({"family": "hourglass", "task": "nope"}, "unknown task 'nope'"),
        ({"family": "nope", "task": "digits-denoise"}, "unknown family 'nope'"),
        (
            {"family": "hourglass", "task": "digits-denoise", "d_z": 100, "d_h": 8, "L": 1, "d_q": 3},
            "family 'hourglass' takes no key d_q",
        ),
        ({"family": "hourglass", "task": "digits-denoise", "d_z": 32, "d_h": 8, "L": 1}, "hourglass needs d_z > d_x"),
    ],
)
def test_a_plain_config_is_checked(config, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        trial_spec_of(config)


def test_a_plain_config_becomes_the_trial_spec():
    import numpy as np

    spec = trial_spec_of(
        {
            "family": "hourglass",
            "task": "digits-denoise",
            "d_z": np.int64(100),
            "d_h": 8,
            "L": 1,
            "lr": 1e-3,
            "epochs": 2,
            "max_train_samples": 256,
            "seed": 5,
            "repeats": 2,
        }
    )
    assert spec.family == "hourglass" and spec.task == "digits-denoise" and spec.weights is None
    assert spec.config == {"d_z": 100, "d_h": 8, "L": 1, "lr": 1e-3} and type(spec.config["d_z"]) is int
    assert spec.train.epochs == 2 and spec.train.max_train_samples == 256 and len(spec.seeds) == 2


# -- the searcher, Tune's calls by hand -----------------------------------------------------
def report(iteration, **metrics):
    return {"training_iteration": iteration, "time_total_s": 0.5 * iteration, **metrics}


def test_every_proposal_is_within_the_budget_and_spread_over_the_parameter_axis(tmp_path):
    s = own_searcher(tmp_path, trials=8)
    try:
        configs = [s.suggest(f"t{i}") for i in range(8)]
        assert s.suggest("t8") is None  # the study's 8 are running
    finally:
        s.close()
    sizes = [count(c) for c in configs]
    assert all(c["family"] == "my-mlp" and set(c) >= {"width", "lr", "trial"} for c in configs)
    assert all(n <= BUDGET for n in sizes)
    assert sizes[0] == count({"width": 4}) and sizes[1] > 0.9 * BUDGET  # the corners first
    assert len(set(sizes)) >= 6 and min(sizes[2:]) < BUDGET / 3 < max(sizes[2:])  # spread, not piled at the budget
    stored = rows(tmp_path / "search.db")
    assert [r[3] for r in stored] == sizes and all(r[1] == "running" for r in stored)


def test_a_users_reports_become_stored_trials(tmp_path):
    """The metric by its name each epoch: complete at the best validation epoch; a trial
    Tune stopped early pruned with its epochs; none reported failed (and retried); a
    non-finite metric diverged; the study then FINISHED."""
    s = own_searcher(tmp_path, trials=4, epochs=3)
    store = Store(url(tmp_path))
    a, b, c, d = (s.suggest(t) for t in "abcd")
    for i, (val, test) in enumerate([(7.0, 6.5), (9.0, 8.5), (8.0, 9.9)], 1):  # best validation: epoch 2
        s.on_trial_result("a", report(i, psnr=test, val_psnr=val))
    s.on_trial_complete("a", report(3, psnr=9.9, val_psnr=8.0, done=True))
    s.on_trial_result("b", report(1, psnr=5.0))
    s.on_trial_complete("b", report(2, psnr=5.5, done=True))  # Tune stopped it at a result it did not pass on
    s.on_trial_result("c", report(1, loss=0.3))
    s.on_trial_complete("c", report(1, loss=0.3, done=True))
    s.on_trial_result("d", report(1, psnr=float("nan")))
    s.on_trial_complete("d", report(1, psnr=float("nan"), done=True))
    recs = {r.number: r for r in store.trials("own")}
    assert recs[0].status == "complete" and recs[0].metrics["psnr"][0] == 8.5 and recs[0].metrics["val_psnr"][0] == 9.0
    assert [e["psnr"] for e in store.epochs("own", 0)] == [7.0, 9.0, 8.0]  # the validation values by epoch
    assert recs[1].status == "pruned" and recs[1].error.startswith("stopped by Tune at epoch 2 of 3")
    assert len(store.epochs("own", 1)) == 2 and recs[1].metrics == {}
    assert recs[2].status == "failed" and "the trainable reported no 'psnr'" in recs[2].error
    assert recs[3].status == "diverged" and math.isnan(store.epochs("own", 3)[0]["psnr"])
    e = s.suggest("e")  # the failed trial again (retries=1)
    assert e["trial"] == 4 and e["width"] == c["width"] and e["lr"] == c["lr"]
    s.on_trial_result("e", report(1, psnr=6.0))
    s.on_trial_result("e", report(2, psnr=7.0))
    s.on_trial_complete("e", report(2, psnr=7.0, done=True))  # no val_psnr: the last report counts
    assert store.trials("own")[4].metrics["psnr"][0] == 7.0
    assert s.suggest("f") == Searcher.FINISHED and s._beat is None
    s.on_trial_complete("e", report(2, psnr=7.0))  # twice, or a trial it never suggested: ignored
    assert len(store.trials("own")) == 5


def test_a_study_error_is_raised_by_suggest_and_its_trials_are_interrupted(tmp_path):
    s = own_searcher(tmp_path, trials=2)
    store = Store(url(tmp_path))
    s.suggest("a")
    s.error = RuntimeError("the database went away")  # what on_trial_complete keeps when a write fails
    with pytest.raises(RuntimeError, match="the database went away"):
        s.suggest("b")
    assert [r.status for r in store.trials("own")] == ["interrupted"] and s._beat is None


# -- on Ray: Tune's Tuner --------------------------------------------------------------------
@pytest.fixture(scope="module")
def ray_cpus(tmp_path_factory):
    """One local Ray for the module (2 CPUs, one torch thread per trial); Tune's console
    tables off and its default folder (~/ray_results) in a temporary home."""
    import ray

    home = tmp_path_factory.mktemp("home")
    # Ray 2.60 turns token authentication on for a local cluster and keeps its token in
    # ~/.ray/auth_token; an earlier ray.init in this process may have set RAY_AUTH_MODE=token,
    # and Ray's servers then look for the token in the new home: it goes there too
    token = Path.home() / ".ray" / "auth_token"
    if token.is_file():
        (home / ".ray").mkdir()
        (home / ".ray" / "auth_token").write_bytes(token.read_bytes())
    saved = {k: os.environ.get(k) for k in ("HOME", "RAY_AIR_NEW_OUTPUT")}
    os.environ.update(HOME=str(home), RAY_AIR_NEW_OUTPUT="0")
    ray.init(
        num_cpus=2,
        num_gpus=0,
        include_dashboard=False,
        configure_logging=False,
        runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}},
    )
    yield ray
    ray.shutdown()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def fit(trainable, tmp_path, **tune_config):
    from ray import tune

    param_space = tune_config.pop("param_space", None)
    return tune.Tuner(
        trainable,
        param_space=param_space,
        tune_config=tune.TuneConfig(**tune_config),
        run_config=tune.RunConfig(storage_path=str(tmp_path / "ray"), verbose=0),
    ).fit()


@pytest.mark.slow
def test_your_family_on_tune_is_recorded_readable_and_resumed(ray_cpus, tmp_path, cli):
    s = own_searcher(tmp_path, trials=3)
    assert isinstance(s, BudgetedSearcher) and s.metric_name == "psnr" and s.study == "own"
    results = fit(train_own, tmp_path, search_alg=s, num_samples=-1, max_concurrent_trials=2)
    assert len(results) == 3 and not results.errors
    first = rows(tmp_path / "search.db")
    assert [r[:3] for r in first] == [(n, "complete", "my-mlp") for n in range(3)]
    assert all(r[3] <= BUDGET for r in first)
    code, out, err = cli("trials", "own", "--storage", url(tmp_path))
    assert code == 0, err
    assert len([ln for ln in out.splitlines() if " complete my-mlp " in ln]) == 3 and "psnr" in out
    code, out, err = cli("compare", "own", "--storage", url(tmp_path))
    assert code == 0 and "my-mlp" in out, err
    code, out, err = cli("report", "--storage", url(tmp_path), "--out", str(tmp_path / "pages"))
    assert code == 0 and (tmp_path / "pages" / "index.html").is_file(), err

    # a second Tuner on the same study continues it: the first trials as they were, 2 new ones
    results = fit(train_own, tmp_path, search_alg=own_searcher(tmp_path, trials=5), num_samples=-1)
    assert len(results) == 2
    after = rows(tmp_path / "search.db")
    assert after[:3] == first and [r[:2] for r in after[3:]] == [(3, "complete"), (4, "complete")]
    assert len({r[4] for r in after}) == 5  # nothing proposed twice
    # and once the study has its trials, the same script runs none
    results = fit(train_own, tmp_path, search_alg=own_searcher(tmp_path, trials=5), num_samples=-1)
    assert len(results) == 0 and rows(tmp_path / "search.db") == after


@pytest.mark.slow
def test_the_products_trainable_under_the_budgeted_searcher_and_asha(ray_cpus, tmp_path):
    """Two configurations of equal size on a grid, one at a learning rate that learns
    nothing: ASHA (on val_psnr) stops it after its first epoch, the study stores it
    `pruned` with that epoch; the other completes with its test metrics."""
    from ray.tune.schedulers import ASHAScheduler

    s = budgeted_searcher(
        space={"hourglass": {"d_z": [100], "d_h": [8], "L": [1], "lr": [5e-3, 1e-5]}},
        sampler="grid",
        budget="100K",
        task="digits-denoise",
        storage=url(tmp_path),
        study="g",
        trials=2,
        epochs=3,
        max_train_samples=256,
    )
    asha = ASHAScheduler(grace_period=1, reduction_factor=2)
    fit(
        product_trainable(),
        tmp_path,
        search_alg=s,
        scheduler=asha,
        metric="val_psnr",
        mode="max",
        num_samples=-1,
        max_concurrent_trials=1,
    )
    store = Store(url(tmp_path))
    good, bad = store.trials("g")
    assert good.status == "complete" and good.config["lr"] == 5e-3 and good.metrics["psnr"][0] > 0
    assert len(store.epochs("g", 0)) == 3 and good.params == 14_400
    assert bad.status == "pruned" and bad.config["lr"] == 1e-5 and len(store.epochs("g", 1)) == 1
    assert bad.error == "stopped by Tune at epoch 1 of 3 (its scheduler or stopper)"


@pytest.mark.slow
def test_the_products_trainable_under_optuna_search_and_asha(ray_cpus, tmp_path):
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler
    from ray.tune.search.optuna import OptunaSearch

    trainable = product_trainable(task="digits-denoise", family="hourglass", epochs=2, max_train_samples=256)
    space = {"d_z": tune.choice([96, 128]), "d_h": tune.choice([8, 16]), "L": 1, "lr": tune.loguniform(1e-3, 1e-2)}
    results = fit(
        trainable,
        tmp_path,
        param_space=space,
        search_alg=OptunaSearch(seed=0),
        metric="val_psnr",
        mode="max",
        num_samples=2,
        max_concurrent_trials=2,
    )
    assert len(results) == 2 and not results.errors
    for r in results:  # the last report: the trial's metrics at its best validation epoch
        assert r.metrics["val_psnr"] > 0 and r.metrics["psnr"] > 0 and r.metrics["status"] == "complete"
        epochs = r.metrics_dataframe.dropna(subset=["epoch"])
        assert list(epochs["epoch"]) == [1, 2] and epochs["val_psnr"].notna().all()  # every epoch
    # ASHA on the validation metric stops the trial that learns nothing after its first epoch
    space = {"d_z": 100, "d_h": 8, "L": 1, "lr": tune.grid_search([5e-3, 1e-5])}
    results = fit(
        trainable,
        tmp_path,
        param_space=space,
        scheduler=ASHAScheduler(grace_period=1, reduction_factor=2),
        metric="val_psnr",
        mode="max",
        max_concurrent_trials=1,
    )
    by_lr = {r.config["lr"]: r.metrics for r in results}
    assert by_lr[1e-5]["training_iteration"] == 1 and "psnr" not in by_lr[1e-5]
    assert by_lr[5e-3]["training_iteration"] == 3 and by_lr[5e-3]["status"] == "complete"  # 2 epochs + its result


@pytest.mark.slow
def test_a_plain_config_that_fails_errors_its_tune_trial(ray_cpus, tmp_path):
    results = fit(
        product_trainable(task="digits-denoise", epochs=1, max_train_samples=64),
        tmp_path,
        param_space={"family": "hourglass", "d_z": 32, "d_h": 8, "L": 1},
        num_samples=1,
    )
    [error] = results.errors
    assert "hourglass needs d_z > d_x" in str(error)


# -- the how-to's example -----------------------------------------------------------------------
def howto_blocks() -> list[str]:
    """The Python blocks of the Ray Tune section of the how-to (docs/how-to/ray-and-tune.md), as written."""
    text = (REPO / "docs" / "how-to" / "ray-and-tune.md").read_text()
    section = text[text.index("**Ray Tune.**") : text.index("**Several drivers, one study.**")]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_howto_shows_the_api_in_about_fifteen_lines():
    first, second = howto_blocks()
    assert "budgeted_searcher(" in first and "count_params" in first and len(first.splitlines()) <= 22
    assert "product_trainable(" in second and "OptunaSearch" in second and "ASHAScheduler" in second


@pytest.mark.slow
def test_the_howto_example_runs_as_written(ray_cpus, tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in howto_blocks():
        exec(compile(block, str(REPO / "docs" / "how-to" / "ray-and-tune.md"), "exec"), namespace)
    recs = Store(url(tmp_path)).trials("my-mlp")
    assert len(recs) == 4 and all(r.status == "complete" and r.params <= 20_000 for r in recs)
    code, out, err = cli("trials", "my-mlp")
    assert code == 0 and out.count(" complete ") == 4, err
