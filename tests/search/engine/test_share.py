"""How a multi-family study shares its trials (`--share`, issue 11): by default the
families take turns; with `free` the sampler chooses the family."""
import collections

import pytest

from search.engine.proposers import Proposal
from search.engine.policies import DEFAULT_SHARE
from search.engine.samplers import make_proposer
from search.engine.specs import RunSpec
from search.engine.study import prepare
from storage.records import TrialRecord

FAMILIES = ("hourglass", "conventional", "han")


@pytest.fixture(scope="module")
def prep():
    return prepare(RunSpec(spaces=FAMILIES, task="digits-denoise", budget=100_000))


def ask_families(p, n, score):
    """The families of the next `n` accepted proposals; each is told `score(family)`."""
    got = []
    while len(got) < n:
        q = p.ask()
        if isinstance(q, Proposal):
            got.append(q.family)
            p.tell(q, score(q.family), q.params)
        else:
            p.reject(q)
    return got


@pytest.mark.parametrize("sampler", ["tpe", "random", "nsga2"])
def test_equal_share_gives_the_families_turns(prep, sampler):
    """Whatever the sampler learns (here: one family always scores far better), the
    default share keeps every family within one trial of the others."""
    assert DEFAULT_SHARE == "equal"
    p = make_proposer(sampler, prep.spaces, prep.io, 100_000, prep.count, direction="maximize", seed=3,
                      trials=30)
    got = ask_families(p, 30, lambda f: 30.0 if f == "hourglass" else 10.0)
    for k in range(1, 31):
        counts = collections.Counter(got[:k])
        assert max(counts[f] for f in FAMILIES) - min(counts[f] for f in FAMILIES) <= 1, got[:k]


def test_free_share_lets_tpe_favour_the_leading_family(prep):
    """With `free`, TPE draws the family like any other parameter: told that one family is
    far better, it gives that family most of the trials after its random start."""
    p = make_proposer("tpe", prep.spaces, prep.io, 100_000, prep.count, direction="maximize", seed=3, trials=40,
                      share="free")
    got = ask_families(p, 40, lambda f: 30.0 if f == "hourglass" else 10.0)
    late = collections.Counter(got[20:])
    assert late["hourglass"] > 20 / len(FAMILIES) + 3, got


def test_turns_continue_from_the_replayed_trials(prep):
    """On resume the turns count the study's past trials: after 3 hourglass trials and 1
    conventional one, han and conventional catch up first (ties in --space order)."""
    first = make_proposer("tpe", prep.spaces, prep.io, 100_000, prep.count, direction="maximize", seed=0,
                          trials=10, share="free")
    want, past = {"hourglass": 3, "conventional": 1}, []
    while len(past) < 4:
        q = first.ask()
        if not isinstance(q, Proposal):
            continue
        first.tell(q, 20.0, q.params)
        if sum(r.family == q.family for r in past) < want.get(q.family, 0):
            past.append(TrialRecord(number=len(past), family=q.family, config=q.config, params=q.params,
                                    status="complete", seeds=[0], metrics={"val_psnr": (20.0, None, 1)},
                                    optuna=q.optuna))
    resumed = make_proposer("tpe", prep.spaces, prep.io, 100_000, prep.count, direction="maximize", seed=0,
                            trials=10)
    resumed.replay(past, lambda r: r.metrics["val_psnr"][0])
    got = ask_families(resumed, 6, lambda f: 20.0)
    assert got == ["han", "conventional", "han", "conventional", "han", "hourglass"], got
