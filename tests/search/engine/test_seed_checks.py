"""Seed checks: which front configurations get a second seed after a one-seed search's
trials, and the loop that runs them (search/engine/seed_checks.py, StudyLoop._next_check)."""

import dataclasses

import pytest

from search.engine.search_flags import search_flags, search_settings
from search.engine.seed_checks import check_note, checked_trial, front_numbers, is_check, level_corners, plan_checks
from search.engine.specs import RunSpec
from search.engine.study import StudyLoop, prepare, run_seeds
from storage.records import TrialRecord
from tests.search.fakes import MemoryStore, RecordingProgress, ScriptedExecutor, complete


def record(number, family, params, value, duration, status="complete", note=None):
    return TrialRecord(
        number, family, {"n": number}, params, status, [1], {"psnr": (value, None, 1)}, note=note, duration_s=duration
    )


def value(r):
    return r.metrics["psnr"][0]


def test_the_front_is_what_no_other_configuration_of_the_family_beats_at_no_more_parameters():
    rows = [
        record(0, "a", 100, 10.0, 1),
        record(1, "a", 200, 9.0, 1),  # beaten by #0, which is smaller
        record(2, "a", 300, 12.0, 1),
        record(3, "b", 100, 5.0, 1),
        record(4, "a", 50, 20.0, 1, status="pruned"),  # not complete: not on the front
        record(5, "a", 400, 30.0, 1, note=check_note(2)),  # a check: never a front configuration itself
    ]
    assert front_numbers(rows, value, "maximize") == {"a": [0, 2], "b": [3]}
    assert front_numbers(rows, value, "minimize") == {"a": [0, 1], "b": [3]}  # lower is better: #1 beats #0


def test_checks_go_cheapest_first_in_family_turns_within_the_share_of_training_time():
    rows = [
        record(0, "a", 100, 10.0, 4.0),
        record(1, "a", 300, 12.0, 1.0),
        record(2, "a", 900, 14.0, 9.0),
        record(3, "b", 100, 11.0, 2.0),
        record(4, "b", 400, 13.0, 3.0),
        record(5, "b", 50, 1.0, 1.0, status="failed"),  # its time counts as spent
    ]  # 20 s spent
    assert [r.number for r in plan_checks(rows, value, "maximize", 0.5)] == [1, 3, 0, 4]  # 1 + 2 + 4 + 3 <= 10
    assert [r.number for r in plan_checks(rows, value, "maximize", 1.0)] == [1, 3, 0, 4, 2]
    assert plan_checks(rows, value, "maximize", 0.0) == []
    # a resumed plan: the check of #1 ran (its time is spent) and #3's is running: neither is planned again
    done = [
        *rows,
        record(6, "a", 300, 12.5, 1.0, note=check_note(1)),
        record(7, "b", 100, 0, None, "running", check_note(3)),
    ]
    assert [r.number for r in plan_checks(done, value, "maximize", 0.5)] == [0, 4]  # 9 s left: 4 + 3
    assert checked_trial("retry 1 of trial 6: boom; seed check of trial 1") == 1 and checked_trial("retry 1") is None


def test_the_budgets_order_checks_the_configuration_holding_each_default_level_first():
    # sizes 100 .. 10,000: `search compare`'s default levels are 100, 316, 1000, 3162 and 10,000
    rows = [
        record(0, "a", 100, 10.0, 1.0),
        record(1, "a", 1000, 14.0, 9.0),
        record(2, "a", 10_000, 18.0, 2.0),
        record(3, "a", 300, 11.0, 1.0),
        record(4, "a", 500, 12.0, 1.5),  # on the front, but no level's best: 316 has #3, 1000 has #1
        record(5, "b", 200, 9.0, 1.0),
    ]  # 15.5 s spent
    fronts = {"a": [rows[i] for i in (0, 1, 2, 3, 4)], "b": [rows[5]]}
    corners = level_corners(fronts, [100, 316, 1000, 3162, 10_000])
    assert [r.number for r in corners["a"]] == [0, 3, 1, 2] and [r.number for r in corners["b"]] == [5]
    # 35% of 15.5 s = 5.4 s: the level corners first in family turns, #1 (9 s) passed over and #2
    # (the top level's) taken; the cheapest order spends the time on #4 instead, which holds no level
    assert [r.number for r in plan_checks(rows, value, "maximize", 0.35, "budgets")] == [0, 5, 3, 2]
    assert [r.number for r in plan_checks(rows, value, "maximize", 0.35, "cheapest")] == [0, 5, 3, 4]
    # with time for all, the corners and then the rest of the front
    assert [r.number for r in plan_checks(rows, value, "maximize", 1.0, "budgets")] == [0, 5, 3, 1, 2, 4]
    with pytest.raises(ValueError, match="unknown seed check order 'best'"):
        plan_checks(rows, value, "maximize", 0.5, "best")


def test_the_check_order_is_said_only_where_a_search_checks():
    said = dict(search_flags(search_settings(RunSpec(spaces=("hourglass",), task="digits-denoise", budget=2e4)), 1))
    assert said["--seed-check-order"] == "cheapest"
    none = RunSpec(spaces=("hourglass",), task="digits-denoise", budget=2e4, seed_checks=0.0)
    assert "--seed-check-order" not in dict(search_flags(search_settings(none), 1))


def test_an_unknown_check_order_is_refused():
    from core.errors import UserError

    with pytest.raises(UserError, match="unknown --seed-check-order 'best'; known: cheapest, budgets"):
        RunSpec(spaces=("hourglass",), task="digits-denoise", budget=20_000, seed_check_order="best")


def timed(spec, seconds):
    return dataclasses.replace(complete(spec, 20.0 + spec.number % 7), duration_s=seconds)


def run_loop(store, trials, seed_checks, repeats=1):
    spec = RunSpec(
        spaces=("hourglass", "conventional"),
        task="digits-denoise",
        budget=20_000,
        trials=trials,
        study="s",
        seed_checks=seed_checks,
        repeats=repeats,
        pruner="none",
    )
    executor = ScriptedExecutor(lambda s: timed(s, 1.0))
    loop = StudyLoop(spec, store, RecordingProgress(), prepare(spec), executor=executor)
    return loop, loop.run()


def test_a_one_seed_search_checks_front_configurations_after_its_trials(store):
    loop, out = run_loop(store, 6, 0.5)
    rows = store.trials("s")
    main, checks = [r for r in rows if not is_check(r)], [r for r in rows if is_check(r)]
    assert len(main) == 6 and 1 <= len(checks) <= 3  # within half of the 6 s spent
    assert out.finished == 6  # the checks are not trials of the search's count
    assert all(r.number > max(m.number for m in main) for r in checks)
    by_number = {r.number: r for r in main}
    for r in checks:
        first = by_number[checked_trial(r.note)]
        assert (r.family, r.config, r.params) == (first.family, first.config, first.params)
        assert tuple(r.seeds) == run_seeds(0, r.family, r.config, 2)[1:] and r.seeds != first.seeds
    assert sum(len(st.trials) for st in loop.sampler.studies.values()) == 6  # the sampler heard of the trials only
    # resumed: nothing runs again
    again, out2 = run_loop(store, 6, 0.5)
    assert out2.ran == 0 and len(store.trials("s")) == len(rows)
    # a longer search resumed: its new trials run first (the checks do not count as trials), then more checks
    _, out3 = run_loop(store, 8, 0.5)
    assert out3.finished == 8 and sum(not is_check(r) for r in store.trials("s")) == 8


def test_no_checks_with_repeats_or_a_share_of_zero(store):
    run_loop(store, 4, 0.0)
    assert not any(is_check(r) for r in store.trials("s"))
    other = MemoryStore()
    run_loop(other, 4, 0.5, repeats=2)
    assert not any(is_check(r) for r in other.trials("s"))


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), True, "0.2"])
def test_a_share_outside_zero_to_one_is_refused(bad):
    from core.errors import UserError

    with pytest.raises(UserError, match="--seed-checks"):
        RunSpec(spaces=("hourglass",), task="digits-denoise", budget=20_000, seed_checks=bad)
