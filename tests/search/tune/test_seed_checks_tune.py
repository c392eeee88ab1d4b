"""`search run --executor tune` ends a one-seed search with its seed checks, as the local
loop does: Tune asks the study for each trial, and after the trials the study's answer is
a check (search/engine/seed_checks.py)."""

import pytest

from search.engine.seed_checks import checked_trial, is_check
from storage import Store

pytestmark = pytest.mark.slow


def test_a_tune_study_runs_its_seed_checks_after_its_trials(cli, tmp_path):
    args = ("run", "--space", "hourglass,conventional", "--task", "digits-denoise", "--budget", "30K")
    args += ("--epochs", "1", "--max-train-samples", "256", "--executor", "tune", "--no-report", "--trials", "4")
    code, out, err = cli(*args, "--seed-checks", "1", "--pruner", "none")
    assert code == 0, err
    rows = Store("sqlite:///search.db").trials("digits-denoise-hourglass-conventional")
    main = {r.number: r for r in rows if not is_check(r)}
    checks = [r for r in rows if is_check(r)]
    assert len(main) == 4 and checks and all(r.status == "complete" for r in rows)
    for r in checks:  # every front configuration once more, with the next seed of its sequence
        first = main[checked_trial(r.note)]
        assert r.config == first.config and r.seeds != first.seeds
    code, out, err = cli("compare", "digits-denoise-hourglass-conventional", "--budgets", "30K", "--min-near", "0")
    assert code == 0 and "single run" not in out, out
