"""`search run --decide`: the rounds that search where named budgets are undecided, on
in-memory fakes whose truth is known (search/engine/deciding.py, StudyLoop._next_step)."""

import numpy as np
import pytest

from core.errors import UserError
from search.engine.deciding import check_budgets, decide_start, decisions_text, outstanding, read_verdicts, steps_for
from search.engine.seed_checks import checked_trial, is_check
from search.engine.specs import RunSpec
from search.engine.study import StudyLoop, prepare, run_seeds
from tests.search.fakes import MemoryStore, RecordingProgress, ScriptedExecutor, complete

FAMILIES = ("hourglass", "conventional")


def truth(gap):
    """A trial's value: its family's front (hourglass `gap` above conventional), a little
    lower for a small model, plus seed noise 0.05 from its seed."""

    def outcome(spec):
        noise = np.random.default_rng(spec.seeds[0]).normal(0, 0.05)
        base = 20.0 + (gap if spec.family == "hourglass" else 0.0)
        return complete(spec, base + noise - 0.1 * (spec.number % 3))

    return outcome


def run(store, gap, trials, decide=(20_000.0,), margin=None):
    spec = RunSpec(
        spaces=FAMILIES,
        task="digits-denoise",
        budget=20_000,
        trials=trials,
        study="s",
        pruner="none",
        decide=decide,
        margin=margin,
        seed_checks=0,
        sampler="random",  # the rounds are the subject, and a GP's 80 asks take a minute
    )
    loop = StudyLoop(spec, store, RecordingProgress(), prepare(spec), executor=ScriptedExecutor(truth(gap)))
    return loop, loop.run()


def test_a_clear_difference_is_decided_before_the_trials_run_out():
    store = MemoryStore()
    _, out = run(store, gap=1.0, trials=80)
    rows = store.trials("s")
    main = [r for r in rows if not is_check(r)]
    assert out.decided and 40 <= len(main) < 80  # read after the default search's 40, stopped before the 80
    assert any(is_check(r) for r in rows)  # the seed noise was measured first (one seed each otherwise)
    (v,), _ = read_verdicts(rows, "psnr", "maximize", FAMILIES, [20_000.0], None, 3.0)
    assert v.status == "better" and v.winner == "hourglass"


def test_equal_families_are_decided_equivalent_with_a_margin_and_not_without():
    store = MemoryStore()
    _, out = run(store, gap=0.0, trials=80, margin=1.0)
    (v,), _ = read_verdicts(store.trials("s"), "psnr", "maximize", FAMILIES, [20_000.0], 1.0, 3.0)
    assert out.decided and v.status == "equivalent"
    # each configuration's seeds go on along its own sequence, one per check, none twice
    rows = store.trials("s")
    for first in (r for r in rows if not is_check(r)):
        seeds = [tuple(first.seeds)] + [tuple(r.seeds) for r in rows if checked_trial(r.note) == first.number]
        assert [s[0] for s in seeds] == list(run_seeds(0, first.family, first.config, len(seeds)))
    store = MemoryStore()
    _, out = run(store, gap=0.0, trials=46)
    assert not out.decided and sum(not is_check(r) for r in store.trials("s")) == 46  # --trials is the limit
    verdicts, cands = read_verdicts(store.trials("s"), "psnr", "maximize", FAMILIES, [20_000.0], None, 3.0)
    text = decisions_text(verdicts, 46, out.decided)
    assert text[0].startswith("--decide: not every named budget decided after 46 trial(s) (the --trials limit)")
    timed = decisions_text(verdicts, 46, out.decided, timed_out=True)
    assert timed[0].endswith("(the --time-limit)") and timed[1:] == text[1:]
    assert "at 20K:" in text[1]


def test_a_resumed_decision_goes_on_from_the_stored_trials():
    store = MemoryStore()
    run(store, gap=0.0, trials=42)
    before = len(store.trials("s"))
    _, out = run(store, gap=0.0, trials=46)
    assert sum(not is_check(r) for r in store.trials("s")) == 46 and len(store.trials("s")) > before


def test_the_steps_aim_at_thin_families_and_seed_the_leaders_where_noise_is_unknown():
    store = MemoryStore()
    run(store, gap=1.0, trials=8)  # before any reading: one seed each
    rows = [r for r in store.trials("s") if not is_check(r)]
    (v,), cands = read_verdicts(rows, "psnr", "maximize", FAMILIES, [20_000.0], None, 3.0)
    assert v.status == "single run"
    steps = steps_for(v, cands, rows, "maximize", 3.0)
    assert {s.family for s in steps} == set(FAMILIES) and all(s.again is not None for s in steps)
    assert {s.again.number for s in steps} == {r.number for r in v.families}
    (thin,), cands = read_verdicts(rows, "psnr", "maximize", FAMILIES, [9_000.0], None, 3.0)
    steps = steps_for(thin, cands, rows, "maximize", 3.0)
    assert steps and all(s.again is None and (s.low, s.high) == (3_000.0, 9_000.0) for s in steps)
    assert "at 9K" in outstanding(thin)


def test_the_first_reading_comes_after_the_default_searchs_share_of_trials():
    assert decide_start(80, 2) == 40 and decide_start(6, 2) == 6 and decide_start(400, 4) == 80


def test_budgets_outside_the_search_are_refused():
    check_budgets([20_000.0], 20_000, {"a": 8_000.0, "b": 16_000.0})
    with pytest.raises(UserError, match="--decide 30K is above the search budget 20K"):
        check_budgets([30_000.0], 20_000, {"a": 8_000.0})
    with pytest.raises(UserError, match=r"--decide 10K is below the smallest b model \(16K\)"):
        check_budgets([10_000.0], 20_000, {"a": 8_000.0, "b": 16_000.0})


def test_the_sampler_aims_the_next_proposal():
    from search.engine.sampling import make_sampler

    spec = RunSpec(spaces=FAMILIES, task="digits-denoise", budget=100_000, trials=20, study="s")
    prep = prepare(spec)
    sampler = make_sampler(
        "gp",
        prep.spaces,
        prep.io,
        spec.budget,
        prep.count,
        direction="maximize",
        seed=0,
        trials=20,
        scope="family",
        corners="none",
    )
    sampler.replay([], lambda r: None)
    for fam in ("conventional", "hourglass", "conventional"):
        sampler.aim(fam, 40_000, 60_000)
        p = sampler.ask()
        assert p.family == fam and 30_000 <= p.params <= 60_000  # at or just under its target
