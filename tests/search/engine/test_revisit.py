"""`--revisit`: what an Optuna proposer does with a proposal of a configuration its study
has already trained (or pruned). A configuration's seeds follow from it, so training it
again would recompute the stored result; "answer" tells the sampler that result instead
and asks again (docs/benchmarks.md §19, "Repeated configurations")."""

import math

import optuna
import pytest

from search.engine.sampling import SIZE_PARAM, OptunaSampler, Proposal, make_sampler
from search.engine.sampling.policies import MAX_REVISITS, RANDOM_AFTER_REVISITS
from search.engine.specs import RunSpec
from search.engine.study import StudyLoop, prepare
from search.spaces import min_params
from storage.records import TrialRecord
from tests.search.fakes import MemoryStore, RecordingProgress, ScriptedExecutor, complete

BUDGET = 30_000


class Lowest(optuna.samplers.RandomSampler):
    """A sampler that always proposes the bottom of every range and the first choice: the
    smallest target size at the first learning rate, again and again (what the GP does
    on the settings of §19's table, scripted)."""

    def sample_independent(self, study, trial, name, dist):
        if isinstance(dist, optuna.distributions.CategoricalDistribution):
            return dist.choices[0]
        return dist.low


@pytest.fixture(scope="module")
def prep():
    return prepare(RunSpec(spaces=("hourglass",), task="digits-denoise", budget=BUDGET))


def lowest(prep, revisit, budget=BUDGET, stopped_as_complete=False):
    return OptunaSampler(
        prep.spaces,
        prep.io,
        budget,
        prep.count,
        make_sampler=lambda seed, trials: Lowest(seed=seed),
        direction="maximize",
        seed=0,
        trials=20,
        corners="none",
        revisit=revisit,
        stopped_as_complete=stopped_as_complete,
    )


def value(q):
    return 10.0 + math.log10(q.params)


def key(q):
    return q.family, sorted(q.config.items())


def drive(p, n, pruned=()):
    """n proposals, each told a value growing with its size (the k-th pruned if k in `pruned`)."""
    out = []
    for k in range(n):
        q = p.ask()
        assert isinstance(q, Proposal)
        p.tell(q, value(q), q.params, pruned=k in pruned)
        out.append(q)
    return out


def test_train_proposes_the_same_configuration_again(prep):
    qs = drive(lowest(prep, "train"), 4)
    assert len({str(key(q)) for q in qs}) == 1  # the scripted sampler's one configuration, trained four times


def test_answer_tells_the_sampler_the_stored_result_and_asks_again(prep):
    """The second proposal repeats the first: it is answered from the first's result (the
    sampler's study gets a complete trial with the first's values), and after
    RANDOM_AFTER_REVISITS answers the next target size is drawn at random, so a new
    configuration comes back; no family turn is spent on an answer."""
    p = lowest(prep, "answer")
    first, second = drive(p, 2)
    assert key(second) != key(first)
    assert p.answered == RANDOM_AFTER_REVISITS
    trials = p.study.trials
    assert len(trials) == 2 + RANDOM_AFTER_REVISITS
    answered = trials[1 : 1 + RANDOM_AFTER_REVISITS]
    assert all(t.state == optuna.trial.TrialState.COMPLETE and t.values == trials[0].values for t in answered)
    assert trials[-1].params[f"hourglass.{SIZE_PARAM}"] > trials[0].params[f"hourglass.{SIZE_PARAM}"]
    assert p.turns.counts["hourglass"] == 2
    qs = drive(p, 6)
    assert len({str(key(q)) for q in [first, second, *qs]}) == 8  # never the same configuration twice


def test_a_pruned_configuration_is_answered_as_it_was_told(prep):
    """A pruned trial's configuration proposed again is answered with what the sampler was
    told of it: PRUNED for a sampler that reads pruned trials, its stopped value as complete
    for one that reads complete trials only (`stopped_as_complete`, the GP)."""
    for as_complete, state in ((False, optuna.trial.TrialState.PRUNED), (True, optuna.trial.TrialState.COMPLETE)):
        p = lowest(prep, "answer", stopped_as_complete=as_complete)
        first, second = drive(p, 2, pruned={0})
        assert key(second) != key(first) and p.answered == RANDOM_AFTER_REVISITS
        assert [t.state for t in p.study.trials[: 1 + RANDOM_AFTER_REVISITS]] == [state] * (1 + RANDOM_AFTER_REVISITS)


def test_a_failed_configuration_is_not_answered(prep):
    """A failed trial has no result to answer with: its configuration is trained again."""
    p = lowest(prep, "answer")
    q = p.ask()
    p.tell(q, None, q.params)
    again = p.ask()
    assert key(again) == key(q) and p.answered == 0


def test_a_space_of_one_configuration_trains_it_again_after_max_revisits(prep):
    """With the budget at the smallest model every target size gives it: MAX_REVISITS
    answers, then the revisit is trained after all (the search does not spin)."""
    smallest = min_params(prep.spaces["hourglass"], prep.io, lambda c: prep.count("hourglass", c))
    p = lowest(prep, "answer", budget=smallest)
    first, second = drive(p, 2)
    assert key(second) == key(first) and p.answered == MAX_REVISITS


def test_a_resumed_study_knows_its_replayed_results(prep):
    """Replayed complete trials are known: a resumed study answers a revisit of one."""
    q = lowest(prep, "train").ask()
    past = [TrialRecord(0, q.family, q.config, q.params, "complete", [0], {"val_psnr": (value(q), None, 1)}, q.optuna)]
    p = lowest(prep, "answer")
    p.replay(past, lambda r: r.metrics["val_psnr"][0])
    nxt = p.ask()
    assert key(nxt) != key(q) and p.answered == RANDOM_AFTER_REVISITS


@pytest.mark.parametrize("sampler", ["tpe", "gp", "random", "nsga2"])
def test_every_optuna_sampler_builds_with_answer(sampler):
    """The registry passes `revisit` to every Optuna sampler; no proposal is a revisit."""
    prep2 = prepare(RunSpec(spaces=("hourglass", "conventional"), task="digits-denoise", budget=BUDGET))
    p = make_sampler(
        sampler, prep2.spaces, prep2.io, BUDGET, prep2.count, direction="maximize", seed=1, trials=12, revisit="answer"
    )
    qs = []
    while len(qs) < 12:
        q = p.ask()
        if isinstance(q, Proposal):
            p.tell(q, value(q), q.params)
            qs.append(q)
        else:
            p.reject(q)
    assert len({str(key(q)) for q in qs}) == 12


def test_the_study_loop_trains_each_configuration_once_and_says_how_many_it_answered(monkeypatch):
    """Through the study loop, on a scripted executor: with `--revisit answer` the stored
    trials are all different configurations, the outcome counts the answers and the study's
    settings keep the policy; with "train" the scripted sampler's configuration is trained
    again and again."""
    from search.engine.sampling import samplers

    monkeypatch.setitem(samplers.SAMPLERS._items, "lowest", samplers._optuna(lambda seed, trials: Lowest(seed=seed)))
    for revisit in ("answer", "train"):
        spec = RunSpec(
            spaces=("hourglass",),
            task="digits-denoise",
            budget=BUDGET,
            trials=5,
            study="r",
            sampler="lowest",
            corners="none",
            pruner="none",
            revisit=revisit,
            seed_checks=0,
        )
        store = MemoryStore()
        out = StudyLoop(
            spec,
            store,
            RecordingProgress(),
            prepare(spec),
            executor=ScriptedExecutor(lambda s: complete(s, 10.0 + s.number)),
        ).run()
        rows = store.trials("r")
        distinct = len({str(sorted(t.config.items())) for t in rows})
        assert len(rows) == 5 and store.studies["r"].settings["revisit"] == revisit
        if revisit == "answer":
            assert distinct == 5 and out.answered >= RANDOM_AFTER_REVISITS * 4
        else:
            assert distinct == 1 and out.answered == 0


def test_search_run_answers_revisits_and_says_so(cli):
    """From the command line, with the budget at the smallest hourglass (four learning
    rates, so four configurations): six trials train each configuration once before any
    repeat, the summary says how many proposals were answered, and the study keeps the
    policy."""
    from storage import Store

    code, out, err = cli(
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "8840",
        "--epochs",
        "1",
        "--max-train-samples",
        "128",
        "--no-report",
        "--study",
        "rev",
        "--trials",
        "6",
        "--revisit",
        "answer",
        "--seed-checks",
        "0",
    )
    assert code == 0, err
    store = Store("sqlite:///search.db")
    rows = store.trials("rev")
    lrs = [t.config["lr"] for t in rows]
    assert len(rows) == 6 and len(set(lrs[:4])) == 4  # every configuration once before a repeat
    assert store.get_study("rev").settings["revisit"] == "answer"
    store.close()
    answered = int(out.split(" proposal(s) of a trained configuration answered")[0].rsplit(", ", 1)[1])
    assert answered >= MAX_REVISITS


def test_a_configuration_in_flight_is_not_proposed_twice(prep):
    """With several trials in flight: a proposal of a configuration still training is told
    to the sampler as failed (no result yet) and asked again, so two workers never train
    the same configuration at once; once told, the first is answered as usual."""
    p = lowest(prep, "answer")
    first = p.ask()
    second = p.ask()  # the first not told yet
    assert key(second) != key(first) and p.answered == RANDOM_AFTER_REVISITS
    states = [t.state for t in p.study.trials[1 : 1 + RANDOM_AFTER_REVISITS]]
    assert states == [optuna.trial.TrialState.FAIL] * RANDOM_AFTER_REVISITS
    p.tell(first, value(first), first.params)
    p.tell(second, value(second), second.params)
    assert key(p.ask()) not in (key(first), key(second))
