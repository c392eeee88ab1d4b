"""benchmarks/verdicts/check_order.py: the same searches with their seed checks deleted and checked
again in another order; what the checks cost, read from the database."""

import sqlite3

import benchmarks.verdicts.check_order as co
from core.trials import EpochRecord, RunResult, TrialResult
from storage import Store
from tests.bench_scripts import run_benchmark


def _searches(folder, setting, checks=2):
    """Two stored searches of `setting`, each with `setting.trials` one-seed trials of 1 s and
    `checks` seed checks of 0.5 s (each with a run and an epoch, as a real check has; the
    last one a retry)."""
    store = Store(f"sqlite:///{folder / setting.name}.db")
    for seed in setting.seeds[:2]:
        name = f"{setting.name}-{seed}"
        store.create_or_load_study(
            name,
            task="digits-denoise",
            families=list(setting.families),
            metric="psnr",
            direction="maximize",
            budget=1e5,
        )
        for i in range(setting.trials + checks):
            note = f"seed check of trial {i - setting.trials}" if i >= setting.trials else None
            if i == setting.trials + checks - 1:  # a retried check: its note starts with the retry
                note = f"retry 1 of trial {i}: boom; {note}"
            n = store.add_trial(
                name, family=setting.families[i % 2], config={"i": i}, params=1000 + i, seeds=[i], note=note
            )
            run = RunResult(0, "complete", {"psnr": 20.0 + i / 10}, 1, [EpochRecord(1, 0.1, {"psnr": 20.0}, 0.5)], 0.5)
            store.finish_trial(name, n, TrialResult(n, "complete", [run], 0.5 if note else 1.0, "cpu"))
    store.close()


def test_the_copy_loses_its_checks_and_nothing_else_and_each_study_is_resumed_in_the_order(tmp_path, monkeypatch):
    setting = co.SETTINGS["qs"]
    _searches(tmp_path, setting)
    before = co.check_costs(tmp_path / "qs.db", setting)
    assert before == {"checks_median": 2.0, "check_seconds_share_median": 1.0 / setting.trials}
    calls = []
    monkeypatch.setattr(co.subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    co.recheck(setting, tmp_path, tmp_path / "budgets", "budgets")
    copy = Store(f"sqlite:///{tmp_path / 'budgets' / 'qs.db'}")
    for seed in setting.seeds[:2]:
        rows = copy.trials(f"qs-{seed}")
        assert len(rows) == setting.trials and not any(r.note for r in rows)  # the checks went, the trials stayed
    copy.close()

    def counts(db, where=None):  # every row of the tables (orphans too), or those of the trials `where` picks
        con = sqlite3.connect(db)
        join = "" if where is None else f" x JOIN trials t ON t.id = x.trial_id {where}"
        out = [con.execute(f"SELECT COUNT(*) FROM {t}{join}").fetchone()[0] for t in ("runs", "trial_metrics")]
        con.close()
        return out

    kept = counts(tmp_path / "qs.db", "WHERE t.note IS NULL")
    assert counts(tmp_path / "budgets" / "qs.db") == kept and kept[0] == 2 * setting.trials  # no check's rows left
    assert co.check_costs(tmp_path / "budgets" / "qs.db", setting)["checks_median"] == 0.0
    assert co.check_costs(tmp_path / "qs.db", setting) == before  # the source is left as it was
    assert [c[c.index("--study") + 1] for c in calls] == [f"qs-{s}" for s in setting.seeds[:2]]
    assert all(c[-2:] == ["--seed-check-order", "budgets"] and c[c.index("--trials") + 1] == "40" for c in calls)


def test_the_default_order_or_a_missing_calibration_is_one_line_and_exit_2(tmp_path):
    same = run_benchmark("verdicts.check_order", "--dir", tmp_path, "--order", "cheapest", cwd=tmp_path)
    assert same.returncode == 2 and same.stderr.strip() == "error: --order must be one of budgets, got 'cheapest'"
    none = run_benchmark("verdicts.check_order", "--dir", tmp_path, "--settings", "qs", cwd=tmp_path)
    assert none.returncode == 2 and none.stderr.strip() == f"error: no calibration searches in {tmp_path} for qs"
