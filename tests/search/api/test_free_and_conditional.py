"""A user's family with free and conditional keys searched through `search.run` (issue 80):
every free key drawn over its range, conditional keys only where they exist, a GP routed
to one that models the conditional keys (said at the start), and bad spaces refused
in one line before any write."""

import json
import math
import re
import sqlite3

import pytest
from torch import nn

import search
from core.errors import UserError
from search.engine.sampling.policies import CONDITIONAL_SAMPLERS, DEFAULT_SAMPLER
from tests.search.plugins.conftest import clean_registries  # noqa: F401  (autouse: forget the registrations)

SPACE = {
    "depth": {"low": 1, "high": 3},
    "width": {"low": 4, "high": 32, "log": True, "per": "depth"},
    "optimizer": ["adam", "sgd"],
    "momentum": {"low": 0.1, "high": 0.99, "if": "optimizer == 'sgd'"},
    "lr": {"low": 1e-4, "high": 1e-1, "log": True},
    "dropout": {"low": 0.0, "high": 0.5},
}


def build(config, io):
    widths = [io.d_in] + [config[f"width_{i}"] for i in range(1, config["depth"] + 1)]
    layers: list[nn.Module] = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU(), nn.Dropout(config["dropout"])]
    return nn.Sequential(*layers, nn.Linear(widths[-1], io.d_out))


def train(model, settings, report):
    """Instant training: a score that peaks at lr 1e-2 and grows with the size, read from
    the configuration (the model is built and counted as in any search)."""
    c = settings.config
    size = sum(p.numel() for p in model.parameters())
    score = -abs(math.log10(c["lr"]) + 2) + 0.2 * math.log10(size) - c["dropout"]
    for epoch in range(1, settings.epochs + 1):
        report(epoch, {"score": score})
    return {"score": score}


@pytest.fixture
def registered():
    search.task("cond-task", train, metrics={"score": "maximize"}, inputs=8, outputs=2, epochs=2)
    search.family("cond-mlp", space=SPACE, build=build, default_task="cond-task")


def test_a_conditional_family_is_searched_over_every_key(registered, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "cond.db"
    study = search.run(
        space="cond-mlp", budget="1500", trials=16, storage=str(db), report=False, seed_checks=0, pruner="none"
    )
    said = capsys.readouterr()
    err = said.err
    assert re.search(r"16 finished trial\(s\), 16 run now \([0-9.]+ s, [0-9]+% of it outside the trials\)", said.out)
    routed = CONDITIONAL_SAMPLERS[DEFAULT_SAMPLER]
    said_routed = f"which {DEFAULT_SAMPLER} alone draws at random: sampler {routed}"
    assert f"note: cond-mlp has conditional keys, {said_routed}" in err
    assert f"--sampler {routed}" in err  # the first line says which sampler searches
    assert "--shape-draw random" in err
    assert "Warning" not in err  # no Optuna warning reaches the user's terminal
    df = study.trials()
    keys = ["depth", "width_1", "width_2", "width_3", "optimizer", "momentum", "lr", "dropout"]
    assert set(keys) <= set(df.columns)  # each of the family's keys a column, as d_z and L are
    assert list(df.columns).index("seeds") > max(list(df.columns).index(k) for k in keys)
    assert [c.get("momentum") for c in df["config"]] == df["momentum"].tolist()  # None where absent
    done = df[df.status == "complete"]
    assert len(done) == 16 and (done.params <= 1500).all()
    configs = [json.loads(c) if isinstance(c, str) else c for c in done.config]
    for c in configs:
        assert {k for k in c if k.startswith("width_")} == {f"width_{i}" for i in range(1, c["depth"] + 1)}
        assert ("momentum" in c) == (c["optimizer"] == "sgd")
    lrs = sorted(c["lr"] for c in configs)
    assert lrs[0] < 1e-3 and lrs[-1] > 1e-2  # drawn over the range, not pinned at an end
    dropouts = [c["dropout"] for c in configs]
    assert max(dropouts) - min(dropouts) > 0.25  # over its range 0-0.5, not at one end
    with sqlite3.connect(db) as con:
        (settings,) = con.execute("SELECT settings FROM studies").fetchone()
    assert json.loads(settings)["sampler"] == routed


@pytest.mark.parametrize("sampler, routed", sorted(CONDITIONAL_SAMPLERS.items()))
def test_each_gp_sampler_is_routed_to_its_conditional_form(registered, sampler, routed):
    """`gp` and `auto` (whose GP models only the keys every trial has) become `gp-cond` and
    `auto-cond` for a conditional space, said in `routed`; TPE is kept as given."""
    from search.engine.prepare import prepare
    from search.engine.specs import RunSpec

    prep = prepare(RunSpec(spaces=("cond-mlp",), task="cond-task", budget=1500, sampler=sampler))
    assert prep.spec.sampler == routed and f"sampler {routed}" in prep.spec.routed
    kept = prepare(RunSpec(spaces=("cond-mlp",), task="cond-task", budget=1500, sampler="tpe"))
    assert kept.spec.sampler == "tpe"


@pytest.mark.parametrize(
    "space, message",
    [
        (
            dict(SPACE, momentum={"low": 0.1, "high": 0.99, "if": "opt == 'sgd'"}),
            "family 'cond-bad': dimension 'momentum' is conditional on 'opt', no dimension of its space",
        ),
        (
            dict(SPACE, lr={"low": 0.1, "high": 1e-4, "log": True}),
            "family 'cond-bad': lr: need low <= high, got 0.1..0.0001",
        ),
        (
            dict(SPACE, depth={"low": 1, "high": 3, "size": False}),
            "family 'cond-bad': dimension 'depth' is declared \"size\": false but the count moves with it",
        ),
        (
            {"depth": {"low": 1, "high": 3}, "width": {"low": 4, "high": 32, "per": "layers"}},
            "family 'cond-bad': width: 'per' must name an earlier integer range",
        ),
    ],
)
def test_bad_spaces_are_one_line_errors_and_nothing_is_written(registered, tmp_path, space, message):
    db = tmp_path / "bad.db"
    with pytest.raises(UserError) as e:
        search.family("cond-bad", space=space, build=build, default_task="cond-task")
        search.run(space="cond-bad", budget="1500", trials=2, storage=str(db), report=False)
    said = str(e.value)  # the family named first (with where it came from, when the run reads it)
    assert said.startswith("family 'cond-bad'") and message.split(": ", 1)[1] in said and "\n" not in said
    assert not db.exists()


def test_size_dimensions_that_cannot_reach_the_budget_are_refused(registered, tmp_path):
    db = tmp_path / "small.db"
    with pytest.raises(UserError, match="budget 10 is below the smallest cond-mlp model"):
        search.run(space="cond-mlp", budget=10, trials=2, storage=str(db), report=False)
    assert not db.exists()


def test_auto_hands_instant_trials_to_tpe_and_says_so(registered, tmp_path, monkeypatch, capsys):
    """`auto` (here `auto-cond`) measures the GP's proposals against the trials' own time:
    instant trials go to TPE once a GP proposal is measured; the summary line says how many
    each drew."""
    monkeypatch.chdir(tmp_path)
    search.run(
        space="cond-mlp",
        budget="1500",
        trials=16,
        storage=str(tmp_path / "auto.db"),
        report=False,
        seed_checks=0,
        pruner="none",
        sampler="auto",
        workers="1",
    )
    out = capsys.readouterr().out
    (summary,) = [line for line in out.splitlines() if "finished trial(s)" in line]
    drawn = {name: int(n) for name, n in re.findall(r"(the GP|TPE)(?: proposed)? (\d+)", summary)}
    assert set(drawn) == {"the GP", "TPE"} and drawn["TPE"] >= 6 and sum(drawn.values()) == 16, summary
    with sqlite3.connect(tmp_path / "auto.db") as con:  # each trial's record names the sampler that drew it
        stored = [json.loads(r)["drawn_by"] for (r,) in con.execute("SELECT optuna FROM trials ORDER BY number")]
    assert {name: stored.count(name) for name in set(stored)} == drawn
