"""The search-efficiency benchmark's quick mode runs end to end (issue 11's CI check)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.bench_scripts import REPO, run_benchmark


@pytest.mark.slow
def test_search_efficiency_quick_mode(tmp_path):
    out = tmp_path / "eff.json"
    done = run_benchmark("search_quality.search_efficiency", "--quick", "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())["settings"]["hourglass-conventional"]
    summary = report["summary"]
    searches = ("gp+pareto", "tpe", "tpe/none", "tpe@free", "tpe+pareto", "tpe+rungs", "grid")  # gp+pareto: the default
    assert set(summary) == {"full grid", *searches} and report["best_hypervolume"] > 0
    for sampler in searches:
        assert all(0 < f <= 1 + 1e-9 for f in summary[sampler]["fractions"])
        curve = report["curves"][sampler][0]
        assert curve["trials"] == [1, 2, 3, 4] and curve["fraction"] == sorted(curve["fraction"])
        assert all(0 <= f <= 1 + 1e-9 for f in summary[sampler]["worst_family"])
        # each family's front against the full grid's front of that family (issue 25 item 2)
        assert set(summary[sampler]["family_vs_grid"]) == {"hourglass", "conventional"}
        assert all(v > 0 for v in summary[sampler]["worst_family_vs_grid"])
        if sampler != "grid":  # compute in seconds beside parameter-epochs (issue 62)
            assert all(0 < v <= 1 + 1e-9 for v in summary[sampler]["least_seconds_share"])
    # families take turns by default: the 4 trials are the two families' corners
    assert summary["tpe"]["family_trials"] == {"hourglass": [2], "conventional": [2]}
    assert summary["full grid"]["trials"] == 8 and "| tpe | 4 |" in done.stdout
    # quick mode trains 1 epoch, after which no trial is ever stopped: the pruned search
    # repeats the unpruned one's trials, so its work (params x epochs trained) is equal
    assert summary["tpe+pareto"]["pruned"] == [0] and summary["tpe+pareto"]["work_ratio"] == [1.0]
    assert summary["tpe+rungs"]["pruned"] == [0] and summary["tpe+rungs"]["work_ratio"] == [1.0]
    assert summary["tpe"]["parameter_epochs"][0] > 0
    # with hindsight a subset of the known trials reaches each study's fraction with at most its work
    for sampler in searches[:-1]:
        assert all(0 < s <= 1 + 1e-9 for s in summary[sampler]["least_work_share"])
        assert "peer_reach_share" not in summary[sampler]  # no peer in this run
    assert "least work for its fraction with hindsight" in done.stdout
    # issue 25's third target: each study against 1000 random orders of the full grid at its own work
    orders = summary["full grid"]["random_orders"]
    assert orders["orders"] == 1000 and len(orders["at_4_trials"]) == 1000
    assert max(orders["at_4_trials"]) <= summary["full grid"]["fraction"] + 1e-9  # 4 of its 8 points at most
    for sampler in searches:
        assert all(0 <= m <= summary["full grid"]["fraction"] + 1e-9 for m in summary[sampler]["grid_orders_at_work"])
        assert all(0 <= v <= 1 for v in summary[sampler]["grid_orders_ahead"])
    assert "random orders of the full grid, 4 points each" in done.stdout


@pytest.mark.slow
def test_search_efficiency_tag_reads_back_finished_studies_and_restarts_a_killed_one(tmp_path):
    db, out = f"sqlite:///{tmp_path}/eff.db", tmp_path / "eff.json"
    args = (
        "search_quality.search_efficiency",
        "--quick",
        "--samplers",
        "tpe,random",
        "--storage",
        db,
        "--out",
        out,
        "--tag",
        "t1",
    )
    first = run_benchmark(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    assert first.stdout.count(" finished trials, ") == 3  # a line per study as it ends (hours of studies)
    ledger_path = tmp_path / "eff.json.studies.json"
    ledger = json.loads(ledger_path.read_text())
    assert len(ledger) == 3 and all(wall > 0 and stopped is None for wall, stopped in ledger.values())
    report = json.loads(out.read_text())["settings"]["hourglass-conventional"]
    # the random study as if killed midway: in the store, not in the ledger
    killed = next(name for name in ledger if "-random-" in name)
    del ledger[killed]
    ledger_path.write_text(json.dumps(ledger))
    again = run_benchmark(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.count("read back") == 2 and f"{killed}: killed midway" in again.stdout
    assert again.stdout.count(" finished trials, ") == 1  # only the study run again
    report2 = json.loads(out.read_text())["settings"]["hourglass-conventional"]
    for search in ("tpe", "random", "full grid"):  # the same studies: seeded, one thread
        for key in ("fractions", "fraction", "trials"):
            assert report2["summary"][search].get(key) == report["summary"][search].get(key)
    assert report2["summary"]["tpe"]["wall_s"] == report["summary"]["tpe"]["wall_s"]  # from the ledger
    assert len(json.loads(ledger_path.read_text())) == 3
    # the same storage and tag with another --out (no ledger there): refused, nothing rerun or deleted
    moved = run_benchmark(*args[:7], tmp_path / "other.json", *args[8:], cwd=tmp_path, timeout=120)
    assert moved.returncode == 2 and moved.stderr.count("\n") == 1 and "holds 3 studies of this tag" in moved.stderr, (
        moved.stderr
    )
    assert not (tmp_path / "other.json.studies.json").exists()
    bad = run_benchmark("search_quality.search_efficiency", "--quick", "--tag", "t1", cwd=tmp_path, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--tag needs --storage" in bad.stderr
    bad = run_benchmark("search_quality.search_efficiency", "--quick", "--grid-orders", "-1", cwd=tmp_path, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--grid-orders must be at least 0" in bad.stderr
    for seeds in ("0", "x", "5-3", "-1", "2-x"):  # --seeds: N >= 1 or A-B with 0 <= A <= B, refused before training
        bad = run_benchmark("search_quality.search_efficiency", "--quick", "--seeds", seeds, cwd=tmp_path, timeout=120)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "a count N" in bad.stderr, (seeds, bad.stderr)
    bad = run_benchmark(*args[:-1], "a b", cwd=tmp_path, timeout=120)
    assert bad.returncode == 2 and "letters, digits" in bad.stderr
    other = f"sqlite:///{tmp_path}/other.db"  # the ledger of one run, the storage of another
    bad = run_benchmark(*args[:5], other, *args[6:], cwd=tmp_path, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "does not hold" in bad.stderr, bad.stderr
    assert len(json.loads(ledger_path.read_text())) == 3


@pytest.mark.slow
def test_twins_pairs_a_smoke_run_of_the_twin_recipe(tmp_path):
    """The grid of hayase-twins-small interleaves the families, so a 2-trial smoke run
    trains one S-Mixer and its twin: the script pairs them (same patch, C, lr; 2L layers).
    The recipe's task is digits-classify (scikit-learn's bundled digits): no data directory."""
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    db = f"sqlite:///{tmp_path}/t.db"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "search.cli",
            "run",
            "--recipe",
            "hayase-twins-small",
            "--smoke",
            "--no-report",
            "--storage",
            db,
            "--study",
            "tw",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = tmp_path / "tw.json"
    done = run_benchmark("reproductions.twins", "--study", "tw", "--storage", db, "--json", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    (pair,) = report["pairs"]
    assert report["summary"]["pairs"] == 1 and pair["omega"] > 0 and pair["runs"] >= 1
    assert "| 2 |" in done.stdout and "mean difference over pairs" in done.stdout
    missing = run_benchmark("reproductions.twins", "--study", "nope", "--storage", db, cwd=tmp_path)
    assert missing.returncode == 2 and "no study named 'nope'" in missing.stderr


@pytest.mark.slow
def test_pruner_replay_reads_an_unpruned_study(tmp_path):
    """benchmarks/search_quality/pruner_replay.py replays the stored curves of an unpruned study at each
    grace, per family; a pruned study is not one it can replay, and is left out."""
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    db = f"sqlite:///{tmp_path}/r.db"
    for study, pruner in (("plain", "none"), ("pruned", "pareto")):
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "search.cli",
                "run",
                "--space",
                "hourglass,conventional",
                "--task",
                "digits-denoise",
                "--budget",
                "60K",
                "--trials",
                "4",
                "--epochs",
                "3",
                "--max-train-samples",
                "256",
                "--pruner",
                pruner,
                "--no-report",
                "--storage",
                db,
                "--study",
                study,
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            cwd=tmp_path,
        )
        assert run.returncode == 0, run.stderr[-3000:]
    out = tmp_path / "replay.json"
    done = run_benchmark(
        "search_quality.pruner_replay",
        "--storage",
        db,
        "--graces",
        "1/3,0.1",
        "--rungs",
        "--checked",
        "1:0.5",
        "--json",
        out,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert list(report) == ["plain"]
    assert set(report["plain"]) == {
        "0.333",
        "0.1",
        "rungs",
        "checked-rungs 1:0.5",
        "study work kept",
        "budget corners' work",
        "rank agreement",
        "rung trust",
        "fronts' own work",
    }
    assert 0 < report["plain"]["fronts' own work"] <= 1
    for key, by_family in report["plain"].items():
        if key in ("study work kept", "budget corners' work", "rank agreement", "rung trust", "fronts' own work"):
            continue
        assert set(by_family) == {"hourglass", "conventional"}
        for s in by_family.values():
            assert s["trials"] == 2 and 0 < s["work_kept"] <= 1 and 0 <= s["front_stopped"] <= s["front"] >= 1
            assert 0 < s["front_work"] <= 1
    assert "| 0.333 | hourglass |" in done.stdout
    bad = run_benchmark("search_quality.pruner_replay", "--storage", db, "--graces", "1/3,1.5", cwd=tmp_path)
    assert bad.returncode == 2 and "--graces must lie in (0, 1)" in bad.stderr
    bad = run_benchmark("search_quality.pruner_replay", "--storage", db, "--rungs", "0.1,x", cwd=tmp_path)
    assert bad.returncode == 2 and "--rungs takes a comma list" in bad.stderr
    for checked, why in (
        ("2,x", "--checked takes a comma list"),
        ("0", "--checked needs MIN at least 1"),
        ("3:1.5", "KEEP in [0, 1]"),
    ):
        bad = run_benchmark("search_quality.pruner_replay", "--storage", db, "--checked", checked, cwd=tmp_path)
        assert bad.returncode == 2 and why in bad.stderr, bad.stderr
    at = run_benchmark(
        "search_quality.pruner_replay", "--storage", db, "--graces", "1/3", "--rungs", "0.5", cwd=tmp_path
    )
    assert at.returncode == 0 and "| rungs 0.5 | hourglass |" in at.stdout
    orders = run_benchmark(
        "search_quality.pruner_replay",
        "--storage",
        db,
        "--graces",
        "1/3",
        "--orders",
        "study,smallest-first,budget-last",
        "--json",
        out,
        cwd=tmp_path,
    )
    assert orders.returncode == 0, orders.stderr[-3000:]
    got = json.loads(out.read_text())["plain"]
    assert set(got) == {
        "0.333",
        "0.333, smallest-first",
        "0.333, budget-last",
        "study work kept",
        "budget corners' work",
        "rank agreement",
        "fronts' own work",
    }
    assert set(got["rank agreement"]) == {"1"}  # 3 epochs: the rung at 1 and grace 1/3's first epoch, 1
    assert "| hourglass | " in orders.stdout.split("how well an epoch ranks")[1]
    assert 0 < got["budget corners' work"] < 1 and "the budget corners" in orders.stdout
    assert set(got["study work kept"]) == {"0.333", "0.333, smallest-first", "0.333, budget-last"}
    assert all(0 < v <= 1 for v in got["study work kept"].values())
    assert "| 0.333, budget-last | " in orders.stdout.split("work kept by the whole study")[1]
    assert "| 0.333, smallest-first | hourglass |" in orders.stdout
    why = run_benchmark(
        "search_quality.pruner_replay",
        "--storage",
        db,
        "--graces",
        "1/3",
        "--checked",
        "1:0.5",
        "--best-so-far",
        "--false-stops",
        "--trust-first",
        "1",
        "--json",
        out,
        cwd=tmp_path,
    )
    assert why.returncode == 0, why.stderr[-3000:]
    got = json.loads(out.read_text())["plain"]
    assert {"0.333, best so far", "checked-rungs 1:0.5, best so far"} <= set(got)
    assert set(got["false stops"]) == {"0.333", "checked-rungs 1:0.5"}  # the study order's rules only
    for listed in got["false stops"].values():
        assert all(w["family"] in ("hourglass", "conventional") and w["stop"] >= 1 for w in listed)
    assert set(got["rung trust"]) == {"1"}  # 3 epochs: one rung, at epoch 1
    for by_family in got["rung trust"].values():
        assert set(by_family) == {"hourglass", "conventional"}
        assert all(set(v) == {"first 1", "all"} for v in by_family.values())
    assert "false stops: front trials each rule stops" in why.stdout and "on a family's first 1 trials" in why.stdout
    bad = run_benchmark("search_quality.pruner_replay", "--storage", db, "--trust-first", "0", cwd=tmp_path)
    assert bad.returncode == 2 and "--trust-first must be at least 1" in bad.stderr
    bad = run_benchmark("search_quality.pruner_replay", "--storage", db, "--orders", "study,largest", cwd=tmp_path)
    assert bad.returncode == 2 and "--orders takes a comma list of study, smallest-first, budget-last" in bad.stderr
    none = run_benchmark("search_quality.pruner_replay", "--storage", db, "--prefix", "nope", cwd=tmp_path)
    assert none.returncode == 2 and "no unpruned study named nope*" in none.stderr


def test_verdict_calibration_reads_replicate_searches(tmp_path):
    """benchmarks/verdicts/verdict_calibration.py on stored replicate searches of the "dn" setting,
    built by hand: six searches of two families whose fronts are 3 dB apart at every size
    (a clear difference), each with 24 trials spread over the sizes."""
    from benchmarks.verdicts import verdict_calibration as vc

    setting = vc.SETTINGS["dn"]
    _dn_replicates(tmp_path)
    out = tmp_path / "cal.json"
    assert (
        vc.main(
            ["--dir", str(tmp_path), "--no-run", "--settings", "dn", "--methods", "default,seed", "--json", str(out)]
        )
        == 0
    )
    default, seed, pooled = json.loads(out.read_text())
    assert default["method"] == "default" and default["replicates"] == 6 and pooled["replicates"] == 2
    # one search calls the clear difference wherever it has models enough to read (the
    # smallest budget, 5K, holds about two models a family: too thin); three pooled call it
    assert default["contradict"] == 0 and default["clear_budgets"] >= 3 and default["power"] >= 0.6
    assert pooled["power"] == 1.0 and 0 < default["thin"] < 0.5
    # per budget: the shares average to the whole's; the smallest budget is the thin one
    assert len(default["answered_by_budget"]) == len(setting.budgets)
    assert abs(sum(default["answered_by_budget"]) / len(setting.budgets) - default["answered"]) < 1e-12
    assert abs(sum(default["thin_by_budget"]) / len(setting.budgets) - default["thin"]) < 1e-12
    assert default["thin_by_budget"][0] == max(default["thin_by_budget"])
    assert seed["median_half_width"] < default["median_half_width"]
    assert default["power_real_ideal"] > 0.99  # 3 dB apart, far beyond the spread between searches


def test_a_calibrated_interval_decides_half_the_budgets_whose_truth_is_z_spreads_away():
    from benchmarks.verdicts import verdict_calibration as vc

    z = 1.959963984540054
    assert vc.ideal_power(np.array([z, -2 * z]), np.array([1.0, 2.0]), 0.95) == pytest.approx(0.5)
    assert vc.ideal_power(np.array([10.0]), np.array([1.0]), 0.95) == pytest.approx(1.0)
    # a truth of one spread: an exactly calibrated interval decides about 17% (Phi(1 - z))
    assert vc.ideal_power(np.array([1.0]), np.array([1.0]), 0.95) == pytest.approx(0.1685, abs=1e-3)
    # a draw-for-draw check: estimates N(truth, s) with the interval +-z s decide that often
    rng = np.random.default_rng(0)
    est = rng.normal(1.5, 1.0, 200_000)
    assert np.mean(est - z > 0) == pytest.approx(vc.ideal_power(np.array([1.5]), np.array([1.0]), 0.95), abs=0.005)


def test_verdict_calibration_reads_its_export_as_it_reads_the_databases(tmp_path):
    """--export writes the replicate searches (the trials' columns the readings use);
    --frames reads them back without the databases, to the same figures, and the normal
    interval form narrows the intervals; a --frames file that is not there is one line,
    exit 2."""
    from benchmarks.verdicts import verdict_calibration as vc

    _dn_replicates(tmp_path, searches=4)
    kept, first, again = tmp_path / "reps.json", tmp_path / "a.json", tmp_path / "b.json"
    methods = "default,default:::::normal"
    common = ["--settings", "dn", "--methods", methods, "--pool", "0", "--replicates", "4"]
    assert vc.main(["--dir", str(tmp_path), "--no-run", *common, "--json", str(first), "--export", str(kept)]) == 0
    (tmp_path / "dn.db").unlink()
    assert vc.main(["--frames", str(kept), *common, "--json", str(again)]) == 0
    a = json.loads(first.read_text())
    assert first.read_text() == again.read_text()  # the same figures to the last digit
    assert a[0]["replicates"] == 4 and len(json.loads(kept.read_text())["dn"]) == 4
    assert a[1]["median_half_width"] < a[0]["median_half_width"]
    assert vc.main(["--frames", str(tmp_path / "none.json"), *common]) == 2


def _dn_replicates(folder, shift: float = 0.0, searches: int = 6) -> None:
    """Replicate searches of the "dn" setting built by hand: fcnet's front 3 dB (plus
    `shift`) below the hourglass's at every size, 24 trials each, three seeds a trial."""
    import numpy as np

    from benchmarks.verdicts import verdict_calibration as vc
    from core.trials import RunResult, TrialResult
    from storage import Store

    setting = vc.SETTINGS["dn"]
    store = Store(f"sqlite:///{folder / 'dn.db'}")
    rng = np.random.default_rng(0)
    for seed in setting.seeds[:searches]:
        name = f"dn-{seed}"
        store.create_or_load_study(
            name,
            task="digits-denoise",
            families=list(setting.families),
            metric="psnr",
            direction="maximize",
            budget=60_000,
        )
        for i in range(vc.TRIALS):
            fam = setting.families[i % 2]
            params = int(np.exp(rng.uniform(np.log(3000), np.log(60_000))))
            top = 20.0 + np.log10(params) - ((3.0 + shift) if fam == "fcnet" else 0.0) - rng.exponential(0.3)
            n = store.add_trial(name, family=fam, config={"i": i}, params=params, seeds=[0, 1, 2])
            runs = [RunResult(k, "complete", {"psnr": top + rng.normal(0, 0.05)}, 1, [], 0.1) for k in range(3)]
            store.finish_trial(name, n, TrialResult(n, "complete", runs, 0.1, "cpu"))
    store.close()


def test_pruner_bias_reads_the_gap_between_pruned_and_unpruned_searches(tmp_path):
    """Two folders of the same replicate searches, one with fcnet's front 0.5 dB lower (as a
    pruner that stops a family's slow starters would leave it): the pooled differences are
    0.5 dB apart at every budget where both are read, and the gap is stated against the
    unpruned replicates' spread; an unknown setting is one line, exit 2."""
    pruned, unpruned = tmp_path / "p", tmp_path / "u"
    pruned.mkdir(), unpruned.mkdir()
    _dn_replicates(pruned, shift=0.5)
    _dn_replicates(unpruned)
    out = tmp_path / "bias.json"
    done = run_benchmark(
        "verdicts.pruner_bias",
        "--pruned",
        pruned,
        "--unpruned",
        unpruned,
        "--settings",
        "dn",
        "--json",
        out,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (r,) = json.loads(out.read_text())
    gaps = [g for g in r["gap"] if g == g]
    assert gaps and all(abs(g - 0.5) < 0.05 for g in gaps), r["gap"]
    assert r["median_gap_to_spread"] > 0.5 and 0 <= r["coverage_of_unpruned"] <= 1
    assert "| dn | median |" in done.stdout
    bad = run_benchmark(
        "verdicts.pruner_bias", "--pruned", pruned, "--unpruned", unpruned, "--settings", "zz", cwd=tmp_path
    )
    assert bad.returncode == 2 and "unknown setting(s) zz" in bad.stderr


def test_verdict_calibration_passes_search_flags_to_the_searches_it_runs(tmp_path, monkeypatch):
    """--search-flags reach every `search run` the script starts (replicates of another
    search, e.g. `--sampler gp`), after the setting's own flags; nothing is trained here."""
    from benchmarks.verdicts import verdict_calibration as vc

    calls = []
    monkeypatch.setattr(vc.subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    setting = vc.SETTINGS["gc"]
    vc.run_missing(setting, tmp_path, ("--sampler", "gp"))
    assert len(calls) == len(setting.seeds)
    assert all(c[-2:] == ["--sampler", "gp"] and "--study" in c for c in calls)
    assert [c[c.index("--seed") + 1] for c in calls] == [str(s) for s in setting.seeds]


def _law_study(store, name: str, rng, gap: float = 0.0, noise: float = 0.003) -> None:
    """A stored search whose fronts follow known saturating laws: family "a" has error
    0.02 + 3 N^-0.5 on 1 - accuracy, family "b" `gap` more; 30 configurations a family at
    log-uniform sizes 100..100K, some off the front, 3 seeds each."""
    import numpy as np

    from core.trials import RunResult, TrialResult

    store.create_or_load_study(
        name, task="digits-classify", families=["a", "b"], metric="accuracy", direction="maximize", budget=100_000
    )
    for i in range(60):
        fam = "ab"[i % 2]
        params = int(np.exp(rng.uniform(np.log(100), np.log(100_000))))
        error = 0.02 + 3 * params**-0.5 + (gap if fam == "b" else 0.0) + (rng.exponential(0.02) if i % 3 == 0 else 0)
        n = store.add_trial(name, family=fam, config={"i": i}, params=params, seeds=[0, 1, 2])
        runs = [RunResult(k, "complete", {"accuracy": 1 - error + rng.normal(0, noise)}, 1, [], 0.1) for k in range(3)]
        store.finish_trial(name, n, TrialResult(n, "complete", runs, 0.1, "cpu"))


@pytest.mark.slow
def test_predict_calibration_on_studies_with_known_laws(tmp_path):
    """benchmarks/verdicts/predict_calibration.py on stored searches whose fronts follow the law:
    fitted on the smaller half of the log-parameter axis, the law's 90% intervals hold most
    of the measured front above it, the law beats the flat guess, and where "b" is clearly
    worse the predicted leader is "a"."""
    import numpy as np

    from benchmarks.verdicts import predict_calibration as pc
    from storage import Store

    store = Store(f"sqlite:///{tmp_path / 'law.db'}")
    rng = np.random.default_rng(1)
    for k in range(2):
        _law_study(store, f"law-{k}", rng, gap=0.05)
    store.close()
    out = tmp_path / "pc.json"
    assert pc.main(["--source", f"law={tmp_path / 'law.db'}", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    s = report["summary"]
    assert s["rows"] >= 10 and s["declined"] < 0.5
    assert s["shipped"]["coverage"] >= 0.7
    assert s["any_fit"]["median_log_error"] < s["any_fit"]["median_flat_log_error"]
    right, clear = s["winner_right_shipped"]
    assert clear >= 2 and right == clear
    assert {r["family"] for r in report["rows"]} == {"a", "b"}
    assert all(r["budget"] > r["cut"] for r in report["rows"])


def test_predict_calibration_rejects_bad_arguments(tmp_path, capsys):
    from benchmarks.verdicts import predict_calibration as pc

    for argv in (
        ["--cut", "1.5", "--source", "x=y.db"],
        ["--source", "nolabel"],
        ["--recipes", "a"],
        ["--source", f"x={tmp_path / 'missing.db'}"],
        [],
    ):
        with pytest.raises(SystemExit) as e:
            pc.main(argv)
        assert e.value.code == 2


@pytest.mark.slow
def test_weights_overhead_tiny(tmp_path):
    """Issue 34's figures: the write per trial and the store under --keep pareto vs all, run tiny."""
    out = tmp_path / "w.json"
    done = run_benchmark(
        "speed.weights_overhead",
        "--trials",
        "3",
        "--seeds",
        "2",
        "--work",
        tmp_path / "work",
        "--json",
        out,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    write, paired, store = report["write"], report["paired"], report["store"]
    assert write["writes"] == paired["pairs"] == 6  # every trial of both --keep all studies, paired with none's
    assert write["ms_median"] > 0 and 0 < write["share_median"] < 1
    assert store["none"]["files"] == [0, 0] and store["all"]["files"] == [3, 3]
    assert all(0 < p <= a for p, a in zip(store["pareto"]["files"], store["all"]["files"]))
    # (a file's metadata names its study: "w-pareto-s0" is a few bytes longer than "w-all-s0")
    assert all(
        0 < p <= a + 64 * n
        for p, a, n in zip(store["pareto"]["bytes"], store["all"]["bytes"], store["pareto"]["files"])
    )
    # the folders hold what the studies' records say they keep
    assert len(list((tmp_path / "work" / "w-all-s0-artifacts").iterdir())) == 3
    assert "| `write_weights` per trial (ms) |" in done.stdout and "| pareto |" in done.stdout
    bad = run_benchmark("speed.weights_overhead", "--trials", "0", cwd=tmp_path)
    assert bad.returncode == 2 and "must be at least 1" in bad.stderr


def test_verdict_calibration_replicates_pick_the_seeds_and_bad_counts_stop_before_anything(
    tmp_path, monkeypatch, capsys
):
    """--replicates N runs seeds 11 .. 10 + N of each setting (more replicates for a
    narrower answer rate); a count out of range is one line, exit 2, and no folder made."""
    from benchmarks.verdicts import verdict_calibration as vc

    calls = []
    monkeypatch.setattr(vc.subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    monkeypatch.setattr(
        vc,
        "evaluate",
        lambda setting, folder, m, conf, resample_corners=False: {
            "setting": setting.name,
            "method": m,
            "replicates": len(setting.seeds),
            "contradict": 0.0,
            "disjoint": 0.0,
            "coverage": 1.0,
            "power": float("nan"),
            "clear_budgets": 0,
            "aa_not_distinguishable": 1.0,
            "thin": 0.0,
            "median_half_width": 1.0,
        },
    )
    assert (
        vc.main(
            [
                "--dir",
                str(tmp_path / "cal"),
                "--settings",
                "gc",
                "--replicates",
                "12",
                "--methods",
                "default",
                "--pool",
                "0",
            ]
        )
        == 0
    )
    assert [c[c.index("--seed") + 1] for c in calls] == [str(s) for s in range(11, 23)]
    assert "| gc | 12 | default |" in capsys.readouterr().out
    for bad in ("1", "101"):
        assert vc.main(["--dir", str(tmp_path / f"bad{bad}"), "--replicates", bad]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: --replicates") and "\n" not in err
        assert not (tmp_path / f"bad{bad}").exists()
    assert vc.main(["--dir", str(tmp_path / "bad-setting"), "--settings", "xx"]) == 2
    assert not (tmp_path / "bad-setting").exists()


def test_verdict_calibration_does_not_rerun_a_pruned_search(tmp_path, monkeypatch):
    """A stored replicate whose trials are all finished, some of them pruned, is read, not
    run again; a replicate with too few trials is run (resumed)."""
    from benchmarks.verdicts import verdict_calibration as vc
    from core.trials import RunResult, TrialResult
    from storage import Store

    setting = vc.replace(vc.SETTINGS["dn"], seeds=(11, 12))
    store = Store(f"sqlite:///{tmp_path / 'dn.db'}")
    for seed, n_trials in ((11, vc.TRIALS), (12, vc.TRIALS - 1)):
        name = f"dn-{seed}"
        store.create_or_load_study(
            name,
            task="digits-denoise",
            families=list(setting.families),
            metric="psnr",
            direction="maximize",
            budget=60_000,
        )
        for i in range(n_trials):
            n = store.add_trial(name, family=setting.families[i % 2], config={"i": i}, params=1000 + i, seeds=[0])
            status = "pruned" if i % 3 == 0 else "complete"
            store.finish_trial(
                name, n, TrialResult(n, status, [RunResult(0, status, {"psnr": 20.0}, 1, [], 0.1)], 0.1, "cpu")
            )
    store.close()
    calls = []
    monkeypatch.setattr(vc.subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    vc.run_missing(setting, tmp_path)
    assert [c[c.index("--study") + 1] for c in calls] == ["dn-12"]


def test_search_efficiency_parses_every_policy_of_a_search_entry():
    """A --samplers entry names each policy by its own mark (search_efficiency.Search)."""
    from benchmarks.search_quality.search_efficiency import Search

    s = Search.parse("gp/size+pareto:0.2@equal^last%log=ramp~family#answer&modelled")
    assert s == Search("gp", "size", "pareto", "0.2", "equal", "last", "family", "log", "ramp", "answer", "modelled")
    assert Search.parse("gp+pareto#train").revisit == "train" and Search.parse("gp+pareto").revisit == ""


@pytest.mark.slow
def test_pruned_seconds_sets_the_pruners_saving_in_seconds_beside_parameter_epochs(tmp_path):
    """benchmarks/gpu/pruned_seconds.py reads a pruned and an unpruned study of one seed (what the
    GPU checklist's `prunework` step writes) and fits seconds per epoch on depth and size."""
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    for pruner in ("pareto", "none"):
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "search.cli",
                "run",
                "--space",
                "hourglass",
                "--task",
                "digits-denoise",
                "--budget",
                "60K",
                "--trials",
                "5",
                "--epochs",
                "3",
                "--max-train-samples",
                "256",
                "--pruner",
                pruner,
                "--no-report",
                "--keep",
                "none",
                "--storage",
                f"sqlite:///{tmp_path}/{pruner}.db",
                "--study",
                "pw",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            cwd=tmp_path,
        )
        assert run.returncode == 0, run.stderr[-3000:]
    out = tmp_path / "pw.json"
    done = run_benchmark(
        "gpu.pruned_seconds", "--pair", tmp_path / "pareto.db", tmp_path / "none.db", "--json", out, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (pair,) = json.loads(out.read_text())["pairs"]
    assert pair["trials"] == 5 and pair["unpruned_s"] > 0 and pair["unpruned_work"] > 0
    # each front is a share of the pair's union front
    assert pair["front"][1] <= 1 + 1e-9 and 0 < pair["front"][0] <= 1 + 1e-9
    assert 0 < pair["work_share"] and 0 < pair["seconds_share"]
    fit = json.loads(out.read_text())["fit"]
    assert set(fit) == {"L", "params", "L+params"} and all(f["n"] == 8 for f in fit.values())
    assert fit["L+params"]["r2"] >= max(fit["L"]["r2"], fit["params"]["r2"]) - 1e-9  # nested least squares
    assert "| 1 |" in done.stdout and "seconds per epoch over 8 trained trials" in done.stdout
    missing = run_benchmark("gpu.pruned_seconds", "--pair", tmp_path / "pareto.db", tmp_path / "nope.db", cwd=tmp_path)
    assert missing.returncode == 2 and "no such database" in missing.stderr and missing.stderr.count("\n") == 1
    other = run_benchmark(
        "gpu.pruned_seconds", "--pair", tmp_path / "pareto.db", tmp_path / "none.db", "--study", "x", cwd=tmp_path
    )
    assert other.returncode == 2 and "holds no study named x" in other.stderr


@pytest.mark.slow
def test_start_draws_compares_the_two_shape_draws_first_trials(tmp_path):
    """benchmarks/search_quality/start_draws.py: untrained proposals of both draws, KS-tested per column, and
    the first trained trials' hypervolume paired by seed (read back from --storage)."""
    out, db = tmp_path / "draws.json", f"sqlite:///{tmp_path}/draws.db"
    args = (
        "search_quality.start_draws",
        "--setting",
        "hourglass",
        "--first",
        "3",
        "--proposals",
        "2",
        "--trained",
        "2",
        "--search-flags",
        "--start ramp --corners last",
        "--storage",
        db,
        "--json",
        out,
    )
    done = run_benchmark(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    cols = {(r["family"], r["column"]) for r in report["proposals"]}
    assert {("hourglass", c) for c in ("params", "L", "d_z", "d_h", "lr")} <= cols
    assert all(r["n"] == [6, 6] and 0 <= r["ks_p"] <= 1 for r in report["proposals"])  # 2 seeds x 3 trials a draw
    fr = report["trained"]["fractions"]
    assert set(fr) == {"modelled", "random"} and all(
        len(v) == 2 and all(0 < x <= 1 + 1e-9 for x in v) for v in fr.values()
    )
    assert max(max(v) for v in fr.values()) <= 1 + 1e-9 and sum(report["trained"]["ahead"].values()) == 2
    again = run_benchmark(*args[:6], "0", *args[7:], cwd=tmp_path)  # --proposals 0: the trained studies read back
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(out.read_text())["trained"]["fractions"] == fr
    for bad, why in (
        (("--setting", "nope"), "unknown --setting"),
        (("--first", "0"), "--first must be between"),
        (("--trained", "1"), "at least 2 seeds"),
        (("--search-flags=--start",), "flag-value pairs"),
        (("--search-flags", "--epochs 3"), "--search-flags knows"),
        (("--search-flags", "--start sideways"), "unknown --start"),
    ):
        r = run_benchmark("search_quality.start_draws", "--proposals", "1", *bad, cwd=tmp_path, timeout=120)
        assert r.returncode == 2 and why in r.stderr and r.stderr.count("\n") == 1, (bad, r.stderr)


@pytest.mark.slow  # over 10 s here: the README's test command leaves it to `-m slow`
def test_fused_trials_steps_and_profile_measure_packs_against_alone(tmp_path):
    """benchmarks/speed/fused_trials.py on tiny settings: one step of a pack against its members
    alone (identical and different shapes), and the profile's table."""
    out = tmp_path / "steps.json"
    r = run_benchmark("speed.fused_trials", "steps", "--k", "1,2", "--repeats", "1", "--out", out, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = json.loads(out.read_text())["steps"]
    assert {(row["pack"], row["k"]) for row in rows} >= {("identical", 1), ("identical", 2)}
    assert all(row["fused_ms"] > 0 and row["alone_ms"] > 0 and row["speedup"] > 0 for row in rows)
    assert any(row["pack"].startswith("different") for row in rows)
    assert {row.get("family") for row in rows if row["pack"] == "identical"} == {"hourglass", "han", "fcnet"}
    r = run_benchmark(
        "speed.fused_trials", "vmap", "--k", "2", "--repeats", "1", "--out", tmp_path / "v.json", timeout=240
    )
    assert r.returncode == 0, r.stderr[-3000:]
    rows = json.loads((tmp_path / "v.json").read_text())["vmap"]
    assert {row["family"] for row in rows} == {"mixer", "s-mixer", "rp-mixer", "han"} and all(
        row["k"] == 2 for row in rows
    )
    r = run_benchmark("speed.fused_trials", "profile", "--k", "2", "--out", tmp_path / "profile.json", timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    shares = json.loads((tmp_path / "profile.json").read_text())["profile"]
    assert set(shares) == {"small", "deep"} and all(0 < sum(v.values()) <= 1.0001 for v in shares.values())


def test_fused_trials_compares_the_configurations_both_arms_trained():
    """`same_config_speedup`: alone over fused, for the complete configurations of both."""
    import pandas as pd

    from benchmarks.speed.fused_trials import same_config_speedup

    def frame(rows):
        return pd.DataFrame([{"config": {"w": w}, "duration_s": d, "status": status} for w, d, status in rows])

    alone = frame([("x", 3.0, "complete"), ("y", 2.0, "complete"), ("z", 5.0, "complete"), ("w", 1.0, "failed")])
    fused = frame([("x", 2.0, "complete"), ("y", 4.0, "complete"), ("w", 1.0, "complete"), ("v", 1.0, "complete")])
    assert same_config_speedup(alone, fused) == [1.5, 0.5]
