"""The peers of issue 30 (benchmarks/search_quality/peers.py): plain Optuna and Ax searching the product's
ranges. Unit checks drive each peer's ask/tell with a made-up metric (no training, past
the random start so that each model proposes); the quick benchmark runs them end to end
through the product's study loop and trainer. Ax's checks are skipped without the
`peers` extra; the Optuna peers need nothing beyond the product's dependencies."""

import json
import math

import pytest

import benchmarks.search_quality.peers as peers
from benchmarks.search_quality.peer_space import PeerSpace
from core.errors import UserError
from search.engine.sampling import SAMPLERS, Proposal, Rejection, make_sampler
from search.engine.specs import RunSpec
from search.engine.study import prepare
from search.spaces import check_config
from tests.bench_scripts import run_benchmark

BUDGET = 100_000
NO_AX = "Ax is not installed (the peers extra: pip install -e '.[peers]')"
needs_ax = pytest.mark.skipif(not peers.ax_available(), reason=NO_AX)


@pytest.fixture(scope="module")
def prep():
    """The peers registered into a copy of the product's sampler registry, put back after
    this module: later tests (tests/search's known-names checks) see the product's own."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SAMPLERS, "_items", dict(SAMPLERS._items))
        peers.register()
        yield prepare(RunSpec(spaces=("hourglass", "conventional"), task="digits-denoise", budget=BUDGET))


def drive(proposer, accepted: int):
    """Ask until `accepted` proposals were made, telling each a made-up validation metric
    that grows with the size; (proposals, rejections)."""
    done, rejected = [], []
    while len(done) < accepted:
        p = proposer.ask()
        if isinstance(p, Rejection):
            rejected.append(p)
            assert len(rejected) < 2000, "the peer proposes nothing within the rules and budget"
            continue
        done.append(p)
        proposer.tell(p, 10 + math.log10(p.params), p.params)
    return done, rejected


def check_proposals(prep, done, rejected):
    for p in done:
        assert isinstance(p, Proposal) and p.params <= BUDGET
        assert p.params == prep.count(p.family, p.config)
        assert check_config(prep.spaces[p.family], prep.io, p.config) is None
        assert list(p.config) == [d.name for d in prep.spaces[p.family].dims]
    assert all(r.reason for r in rejected)


def test_peer_space_names_each_familys_own_parameters(prep):
    space = PeerSpace(prep.spaces, prep.io, BUDGET, prep.count)
    names = [n for n, _ in space.params("hourglass")]
    assert names == ["hourglass_L", "hourglass_d_z", "hourglass_d_h", "hourglass_lr"]  # fixed_w_in: one value
    assert space.constants("hourglass") == {"fixed_w_in": False}
    d_h = prep.spaces["hourglass"].dim("d_h")
    assert space.bounds("hourglass", d_h, {"d_z": 100})[1] == 99  # the shape rule d_h < d_z as a dependent range
    one = PeerSpace({"hourglass": prep.spaces["hourglass"]}, prep.io, BUDGET, prep.count)
    assert next(n for n, _ in one.params("hourglass")) == "L"  # one family: plain keys
    over = space.judge("hourglass", {"fixed_w_in": False, "L": 40, "d_z": 367, "d_h": 200, "lr": 1e-3})
    assert isinstance(over, Rejection) and over.reason.startswith("over budget") and over.params > BUDGET


@pytest.mark.parametrize("name", peers.OPTUNA_PEERS)
def test_optuna_peers_propose_within_the_rules_and_budget(prep, name):
    proposer = make_sampler(name, prep.spaces, prep.io, BUDGET, prep.count, direction="maximize", seed=0, trials=8)
    done, rejected = drive(proposer, 8)  # 2 start-up trials, then the model's
    check_proposals(prep, done, rejected)
    study = proposer.study
    states = [t.state.name for t in study.trials]
    assert states.count("COMPLETE") == 8 and states.count("PRUNED") == len(rejected)
    assert [d.name for d in study.directions] == ["MINIMIZE", "MAXIMIZE"]
    assert all("family" in t.params for t in study.trials)


def test_tune_optuna_search_draws_what_optuna_tpe_draws(prep):
    """Tune's OptunaSearch is Optuna's TPE with the same defaults: at 40 trials (10 start-up
    trials either way) the two peers propose the same configurations, rejections included,
    past the start into TPE's model."""

    def proposals(name):
        proposer = make_sampler(name, prep.spaces, prep.io, BUDGET, prep.count, direction="maximize", seed=3, trials=40)
        done, rejected = drive(proposer, 14)
        check_proposals(prep, done, rejected)
        return proposer, [(p.family, p.config) for p in done], [(r.family, r.reason) for r in rejected]

    tune, *tune_draws = proposals("tune-optuna")
    _, *optuna_draws = proposals("optuna-tpe")
    assert tune_draws == optuna_draws
    study = tune.searcher._ot_study  # Tune's own Optuna study, told through on_trial_complete
    states = [t.state.name for t in study.trials]
    assert states.count("COMPLETE") == 14 and states.count("PRUNED") == len(tune_draws[1])
    assert type(study.sampler).__name__ == "TPESampler" and study.sampler._n_startup_trials == 10


@needs_ax
def test_ax_peer_reaches_botorch_within_the_rules_and_budget(prep):
    proposer = make_sampler("ax", prep.spaces, prep.io, BUDGET, prep.count, direction="maximize", seed=0, trials=8)
    done, rejected = drive(proposer, 5)
    check_proposals(prep, done, rejected)
    nodes = set(proposer.client.summarize()["generation_node"])
    assert "MBM" in nodes, nodes  # BoTorch proposed, after the centre and Sobol start


def test_ax_without_the_extra_is_a_one_line_error(monkeypatch):
    monkeypatch.setattr(peers, "ax_available", lambda: False)
    with pytest.raises(UserError, match=r"pip install -e '\.\[peers\]'"):
        peers.check_available("ax")
    peers.check_available("optuna-gp")  # Optuna's peers need no extra


def quick(tmp_path, searches: str):
    out = tmp_path / "eff.json"
    done = run_benchmark(
        "search_quality.search_efficiency", "--quick", "--samplers", searches, "--out", out, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done, json.loads(out.read_text())["settings"]["hourglass-conventional"]["summary"]


def check_quick(done, summary, searches):
    for name in searches:
        assert all(0 < f <= 1 + 1e-9 for f in summary[name]["fractions"])
        assert summary[name]["wall_s"][0] > 0 and summary[name]["rejected"][0] >= 0
        assert f"| {name} | 4 |" in done.stdout


@pytest.mark.slow
def test_quick_benchmark_runs_the_optuna_peers(tmp_path):
    done, summary = quick(tmp_path, ",".join(peers.OPTUNA_PEERS))
    assert set(summary) == {"full grid", *peers.OPTUNA_PEERS}
    check_quick(done, summary, peers.OPTUNA_PEERS)
    # the work each reached the best peer's fraction with: the best peer reaches its own within its own work
    best = max(peers.OPTUNA_PEERS, key=lambda p: summary[p]["fractions"][0])
    assert 0 < summary[best]["peer_reach_share"][0] <= 1 + 1e-9
    assert f"work to reach {best}'s fraction" in done.stdout


@pytest.mark.slow
def test_quick_benchmark_runs_the_tune_peer(tmp_path):
    done, summary = quick(tmp_path, "tune-optuna")
    assert set(summary) == {"full grid", "tune-optuna"}
    check_quick(done, summary, ["tune-optuna"])


@pytest.mark.slow
@needs_ax
def test_quick_benchmark_runs_ax(tmp_path):
    done, summary = quick(tmp_path, "tpe,ax")
    check_quick(done, summary, ("tpe", "ax"))


def test_unknown_search_is_a_one_line_error(tmp_path):
    bad = run_benchmark("search_quality.search_efficiency", "--samplers", "tpe,optuna", cwd=tmp_path, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "unknown sampler 'optuna'" in bad.stderr


def test_a_search_stuck_on_rejected_proposals_is_measured_not_fatal(tmp_path, monkeypatch):
    """A search that proposes only points it may not train (Optuna's GPSampler skips pruned
    trials and proposed the same over-budget point 1,197 times on the hourglass setting)
    ends with the trials it trained and a note; any other error still stops the benchmark."""
    import dataclasses

    import benchmarks.search_quality.search_efficiency as se
    from core.errors import RejectedInARow
    from core.trials import TrainSettings
    from storage import Store

    real = se.run_study

    def stuck(spec, store, progress):  # two trials, then the loop's "rejected in a row" error
        real(dataclasses.replace(spec, trials=2), store, progress)
        raise RejectedInARow("1000 proposals in a row were rejected: widen the space or raise the budget")

    monkeypatch.setattr(se, "run_study", stuck)
    store = Store(f"sqlite:///{tmp_path}/s.db")
    train = TrainSettings(epochs=1, max_train_samples=64)
    record, frame, wall, stopped = se.run(store, se.SETTINGS["hourglass"], "s", "random", 0, 5, train, None)
    assert len(frame) == 2 and (frame["status"] == "complete").all() and wall > 0
    assert (
        stopped == "stopped after 2 finished trials: 1000 proposals in a row were rejected: widen the space "
        "or raise the budget"
    )
    monkeypatch.setattr(se, "run_study", lambda spec, store, progress: (_ for _ in ()).throw(UserError("other")))
    with pytest.raises(UserError, match="other"):
        se.run(store, se.SETTINGS["hourglass"], "t", "random", 0, 5, train, None)
    store.close()
