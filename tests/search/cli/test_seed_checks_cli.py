"""A one-seed search with seed checks, end to end: `search run` trains a second seed of
front configurations after its trials, and `search compare` then reads intervals where a
search without them says "single run"."""

import json

from search.engine.seed_checks import checked_trial, is_check
from storage import Store

RUN = (
    "run",
    "--space",
    "hourglass,conventional",
    "--task",
    "digits-denoise",
    "--budget",
    "20K",
    "--trials",
    "6",
    "--epochs",
    "2",
    "--max-train-samples",
    "256",
    "--pruner",
    "none",
    "--no-report",
)


def verdict_statuses(cli, study):
    code, out, err = cli("compare", study, "--budgets", "20K", "--min-near", "0", "--format", "json")
    assert code == 0, err
    return [v["status"] for v in json.loads(out)["levels"]], json.loads(out)


def test_checked_search_gives_intervals_where_an_unchecked_one_has_none(cli):
    # a share of 1: every front configuration is checked (their time is within the trials'), so the test is exact
    code, out, err = cli(*RUN, "--study", "checked", "--seed-checks", "1")
    assert code == 0, err
    code, _, err = cli(*RUN, "--study", "plain", "--seed-checks", "0")
    assert code == 0, err
    store = Store("sqlite:///search.db")
    rows = store.trials("checked")
    main = [r for r in rows if not is_check(r)]
    checks = [r for r in rows if is_check(r)]
    assert len(main) == 6 and checks and all(r.status == "complete" for r in checks)
    by_number = {r.number: r for r in main}
    assert all(by_number[checked_trial(r.note)].config == r.config for r in checks)
    assert not any(is_check(r) for r in store.trials("plain"))
    store.close()
    assert verdict_statuses(cli, "plain")[0] == ["single run"]
    statuses, answer = verdict_statuses(cli, "checked")
    assert statuses[0] in ("better", "not distinguishable")
    level = answer["levels"][0]
    assert level["margin_low"] is not None and level["margin_low"] <= level["margin"] <= level["margin_high"]
    assert "pooled" in answer["interval"]
    # the own-noise reading of the same study: only configurations run twice have a std
    code, out, err = cli("compare", "checked", "--budgets", "20K", "--min-near", "0", "--noise", "own")
    assert code == 0, err
    # resumed: nothing more to do, the checks are not run again
    code, _, err = cli(*RUN, "--study", "checked", "--seed-checks", "1")
    assert code == 0 and "nothing to do" in err
    store = Store("sqlite:///search.db")
    assert len(store.trials("checked")) == len(rows)
    store.close()
