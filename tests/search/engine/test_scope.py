"""One Optuna study per family (`--sampler-scope family`): each family's sampler ranks
and models its own trials only, under the same turns as one shared study."""

import collections
import math
import statistics

import pytest

from search.engine.prepare import prepare
from search.engine.sampling import Proposal, make_sampler
from search.engine.sampling.policies import DEFAULT_SCOPE, DEFAULT_SIZE_SCALE, size_objective
from search.engine.specs import RunSpec
from storage.records import TrialRecord

FAMILIES = ("hourglass", "conventional")
BUDGET = 100_000


@pytest.fixture(scope="module")
def prep():
    return prepare(RunSpec(spaces=FAMILIES, task="digits-denoise", budget=BUDGET))


def build(prep, scope, seed=3, trials=40, sampler="tpe", spaces=None):
    spaces = spaces or prep.spaces
    return make_sampler(
        sampler, spaces, prep.io, BUDGET, prep.count, direction="maximize", seed=seed, trials=trials, scope=scope
    )


def propose(p, n, score):
    """The next `n` accepted proposals, each told `score(proposal)`."""
    got = []
    while len(got) < n:
        q = p.ask()
        if isinstance(q, Proposal):
            got.append(q)
            p.tell(q, score(q), q.params)
        else:
            p.reject(q)
    return got


def test_one_study_per_family_under_the_turns(prep):
    assert DEFAULT_SCOPE == "study"
    p = build(prep, "family")
    got = propose(p, 12, lambda q: 20.0)
    assert [q.family for q in got] == list(FAMILIES) * 6  # equal turns, --space order
    assert set(p.studies) == set(FAMILIES) and p.study is None
    for fam, study in p.studies.items():
        trials = study.get_trials(deepcopy=False)
        assert len(trials) >= 6 and all("family" not in t.params for t in trials)
        assert all(k.startswith(f"{fam}.") for t in trials for k in t.params)
    # each family's corners first: its smallest model, then one at the budget
    for fam in FAMILIES:
        first = [q.params for q in got if q.family == fam][:2]
        assert first[0] < first[1] <= BUDGET and first[1] > 0.9 * BUDGET, first
    # the records carry no `family` parameter; the shared study's do
    assert "family" not in got[0].optuna["params"]
    shared = propose(build(prep, "study"), 2, lambda q: 20.0)
    assert shared[0].optuna["params"]["family"] == shared[0].family


def test_the_scope_a_spec_resolves_to():
    from core.errors import UserError

    spec = RunSpec(spaces=FAMILIES, task="digits-denoise", budget=BUDGET)  # the default sampler, gp
    assert spec.sampler == "gp" and spec.scope is None and spec.sampler_scope == "family"
    assert (
        RunSpec(spaces=FAMILIES, task="digits-denoise", budget=BUDGET, sampler="tpe").sampler_scope
        == DEFAULT_SCOPE
        == "study"
    )
    assert RunSpec(spaces=FAMILIES, task="digits-denoise", budget=BUDGET, sampler="gp").sampler_scope == "family"
    assert (
        RunSpec(spaces=FAMILIES, task="digits-denoise", budget=BUDGET, sampler="gp", share="free").sampler_scope
        == "study"
    )
    assert (
        RunSpec(spaces=FAMILIES, task="digits-denoise", budget=BUDGET, sampler="gp", scope="study").sampler_scope
        == "study"
    )
    free = RunSpec(spaces=FAMILIES, task="digits-denoise", budget=BUDGET, share="free")  # the sampler draws the family
    assert free.sampler == "tpe" and free.sampler_scope == "study"
    assert RunSpec(spaces=("hourglass",), task="digits-denoise", budget=BUDGET, share="free").sampler == "gp"
    turns = RunSpec(spaces=FAMILIES, task="digits-denoise", budget=BUDGET, share="uncertain")  # turns by uncertainty
    assert turns.sampler == "gp" and turns.sampler_scope == "family"
    assert RunSpec(spaces=FAMILIES, task="digits-denoise", budget=BUDGET, scope="study").sampler_scope == "study"
    with pytest.raises(UserError, match="needs --share equal or uncertain"):
        RunSpec(spaces=FAMILIES, task="digits-denoise", budget=BUDGET, scope="family", share="free")


def test_one_family_is_the_same_either_way(prep):
    spaces = {"hourglass": prep.spaces["hourglass"]}
    a = [q.config for q in propose(build(prep, "family", spaces=spaces), 15, lambda q: math.log(q.params))]
    b = [q.config for q in propose(build(prep, "study", spaces=spaces), 15, lambda q: math.log(q.params))]
    assert a == b


def test_a_dominated_family_learns_from_its_own_trials(prep):
    """hourglass always scores 30, conventional at most 0, best at 10^4 parameters: every
    conventional trial is dominated by a smaller hourglass one. In one shared study TPE's
    "good" trials are all hourglass, so conventional is drawn as if at random; with a study
    of its own it learns where its own best lies. Measured: how far (in decades) its last
    proposals are from 10^4 (the median of each seed's last 12): over 4 seeds, every own
    study nearer than every shared one (measured 2026-12-05 over 8 seeds: 0.29-0.34 decades
    against 0.49-0.69)."""

    def score(q):
        return 30.0 if q.family == "hourglass" else -abs(math.log10(q.params) - 4.0)

    def distance(scope, seed):
        got = propose(build(prep, scope, seed=seed, trials=60), 60, score)
        late = [q for q in got if q.family == "conventional"][-12:]
        return statistics.median(abs(math.log10(q.params) - 4.0) for q in late)

    own = [distance("family", s) for s in range(4)]
    shared = [distance("study", s) for s in range(4)]
    assert max(own) < min(shared), (own, shared)


def records(proposals, metric=20.0):
    return [
        TrialRecord(
            number=i,
            family=q.family,
            config=q.config,
            params=q.params,
            status="complete",
            seeds=[0],
            metrics={"val_psnr": (metric, None, 1)},
            optuna=q.optuna,
        )
        for i, q in enumerate(proposals)
    ]


@pytest.mark.parametrize("before,after", [("family", "family"), ("study", "family"), ("family", "study")])
def test_resume_replays_each_family_into_its_study(prep, before, after):
    """A resumed proposer replays the past trials (recorded under either scope) into the
    right study and continues the turns; a family's own study keeps no `family` key."""
    past = records(propose(build(prep, before, seed=0), 5, lambda q: 20.0))  # hg, cv, hg, cv, hg
    resumed = build(prep, after, seed=0)
    resumed.replay(past, lambda r: r.metrics["val_psnr"][0])
    if after == "family":
        sizes = {f: len(s.get_trials(deepcopy=False)) for f, s in resumed.studies.items()}
        assert sizes == {"hourglass": 3, "conventional": 2}
        assert all("family" not in t.params for s in resumed.studies.values() for t in s.get_trials(deepcopy=False))
    else:
        assert all(t.params["family"] in FAMILIES for t in resumed.study.get_trials(deepcopy=False))
    got = propose(resumed, 3, lambda q: 20.0)
    assert [q.family for q in got] == ["conventional", "hourglass", "conventional"]
    counts = collections.Counter(r.family for r in past) + collections.Counter(q.family for q in got)
    assert counts == {"hourglass": 4, "conventional": 4}


def test_a_retried_trial_joins_its_familys_study(prep):
    """A retried config (no live Optuna trial) is added to its family's own study."""
    p = build(prep, "family", seed=1)
    q = propose(p, 1, lambda q: 20.0)[0]
    before = len(p.studies[q.family].get_trials(deepcopy=False))
    p.tell(Proposal(q.family, q.config, q.params, q.optuna), 21.0, q.params)
    trials = p.studies[q.family].get_trials(deepcopy=False)
    assert len(trials) == before + 1 and trials[-1].values == [size_objective(q.params, DEFAULT_SIZE_SCALE), 21.0]


@pytest.mark.parametrize("sampler", ["gp", "nsga2", "random"])
def test_every_optuna_sampler_runs_per_family(prep, sampler):
    got = propose(build(prep, "family", sampler=sampler, trials=12), 12, lambda q: math.log(q.params))
    assert collections.Counter(q.family for q in got) == dict.fromkeys(FAMILIES, 6)
    assert all(q.params <= BUDGET for q in got)


def test_search_run_with_a_sampler_per_family_then_resumed(cli):
    """From the command line: the scope is stored with the study, each trial's record
    holds its own family's draw (no `family` parameter), and the same command with more
    trials continues the turns."""
    from storage import Store

    args = [
        "run",
        "--space",
        "hourglass,conventional",
        "--task",
        "digits-denoise",
        "--budget",
        "20K",
        "--epochs",
        "1",
        "--max-train-samples",
        "256",
        "--no-report",
        "--study",
        "s",
        "--sampler-scope",
        "family",
    ]
    code, out, err = cli(*args, "--trials", "4")
    assert code == 0, err
    code, out, err = cli(*args, "--trials", "6")
    assert code == 0, err
    store = Store("sqlite:///search.db")
    assert store.get_study("s").settings["scope"] == "family"
    from search.engine.seed_checks import is_check

    trials = [t for t in store.trials("s") if not is_check(t)]  # the seed checks after each run left out
    assert [t.family for t in trials] == list(FAMILIES) * 3
    assert all(
        t.optuna
        and "family" not in t.optuna["params"]
        and all(k.startswith(f"{t.family}.") for k in t.optuna["params"])
        for t in trials
    )


@pytest.mark.parametrize(
    "flags, sampler, scope",
    [((), "gp", "family"), (("--share", "free"), "tpe", "study"), (("--sampler", "tpe"), "tpe", "study")],
)
def test_search_run_without_a_sampler_stores_the_default(cli, flags, sampler, scope):
    """No --sampler: gp, a GP per family under the turns; with --share free (the sampler
    draws the family, which a shared GP would model alone) tpe in one study."""
    from storage import Store

    code, out, err = cli(
        "run",
        "--space",
        "hourglass,conventional",
        "--task",
        "digits-denoise",
        "--budget",
        "20K",
        "--epochs",
        "1",
        "--max-train-samples",
        "128",
        "--no-report",
        "--study",
        "d",
        "--trials",
        "2",
        *flags,
    )
    assert code == 0, err
    settings = Store("sqlite:///search.db").get_study("d").settings
    assert (settings["sampler"], settings["scope"]) == (sampler, scope)


@pytest.mark.slow  # over 10 s here: the README's test command leaves it to `-m slow`
def test_gp_hears_a_pruned_trial_as_its_value_when_stopped(prep, monkeypatch):
    """GPSampler reads only complete trials: told PRUNED, a stopped trial is invisible to it
    and it proposes the stopped region again (classification: 10-15 of a family's 20 trials
    pruned, docs/benchmarks.md §14). The `gp` proposer tells a pruned trial as complete with
    the value it had when stopped; TPE, which reads pruned trials, is told PRUNED. The GP
    fits for every trial here (these trials are instant, so the default would propose two
    from one fit, whose second point also steers away from the first)."""
    import optuna

    import search.engine.sampling.samplers as samplers
    from search.engine.sampling import OptunaSampler
    from search.engine.sampling.samplers import _gp

    monkeypatch.setattr(samplers, "PAIR_SHARE", None)

    spaces = {"hourglass": prep.spaces["hourglass"]}

    def late_stopped(stopped_as_complete):
        p = OptunaSampler(
            spaces,
            prep.io,
            BUDGET,
            prep.count,
            make_sampler=_gp,
            direction="maximize",
            seed=0,
            trials=30,
            stopped_as_complete=stopped_as_complete,
        )
        got = []
        while len(got) < 30:
            q = p.ask()
            if not isinstance(q, Proposal):
                continue
            big = q.params > 20_000  # the pruner stops every model above 20K at 5 dB
            p.tell(q, 5.0 if big else 10.0 + math.log10(q.params), q.params, pruned=big)
            got.append(big)
        return sum(got[-12:]), p

    heard, p = late_stopped(True)
    states = collections.Counter(t.state for t in p.study.get_trials(deepcopy=False))
    assert states[optuna.trial.TrialState.PRUNED] == 0
    unheard, _ = late_stopped(False)
    assert heard <= 3 < 8 <= unheard, (heard, unheard)
    tpe = build(prep, "study", spaces=spaces, trials=12)
    q = tpe.ask()
    while not isinstance(q, Proposal):
        q = tpe.ask()
    tpe.tell(q, 5.0, q.params, pruned=True)
    assert tpe.study.get_trials(deepcopy=False)[q.handle.number].state == optuna.trial.TrialState.PRUNED


def test_the_study_loop_tells_gp_the_stopped_value_and_replays_it(tmp_path):
    """Through the study loop (scripted curves, the rung pruner): each pruned trial reaches
    the gp proposer as complete with its value at the epoch it was stopped, and a resumed
    loop replays the same values from the stored curves."""
    import optuna

    from core.trials import TrainSettings
    from search.engine.study import StudyLoop
    from storage import Store
    from tests.search.engine.test_pruners import _curve
    from tests.search.fakes import CurveExecutor, RecordingProgress

    def loop(store, trials):
        spec = RunSpec(
            spaces=("hourglass",),
            task="digits-denoise",
            budget=20_000,
            trials=trials,
            study="g",
            sampler="gp",
            pruner="rungs",
            train=TrainSettings(epochs=9),
            revisit="train",
        )  # no answered revisit: Optuna's trials are the stored ones, one for one
        executor = CurveExecutor(_curve)
        it = StudyLoop(spec, store, RecordingProgress(), prepare(spec), executor=executor)
        executor.on_epoch = it.on_epoch
        return it

    with Store(f"sqlite:///{tmp_path / 'db.sqlite'}") as store:
        first = loop(store, 16)
        first.run()
        told = {
            t.number: t
            for t in first.sampler.study.get_trials(deepcopy=False)
            if t.state != optuna.trial.TrialState.WAITING
        }
        rows = {t.number: t for t in store.trials("g")}
        curves = store.epochs_of("g", ("pruned",), repeat=0)
        pruned = [n for n, t in rows.items() if t.status == "pruned"]
        assert len(pruned) >= 3
        values = {}
        for n in pruned:  # Optuna's trial numbers follow the proposals (no rejection here)
            assert told[n].state == optuna.trial.TrialState.COMPLETE
            assert told[n].values == [size_objective(rows[n].params, DEFAULT_SIZE_SCALE), curves[n][-1]["psnr"]]
            values[n] = told[n].values
        resumed = loop(store, 16)
        resumed.start()
        replayed = resumed.sampler.study.get_trials(deepcopy=False)
        assert {n: replayed[n].values for n in pruned} == values
        assert all(t.state == optuna.trial.TrialState.COMPLETE for t in replayed[:16])
        resumed.executor.close()
