"""`search train`: a trial trained again (longer, more seeds), recorded as a retraining
beside the search's results; the search's front unchanged; a killed retraining leaves
nothing recorded."""

import hashlib
import os

import pytest

from search.artifacts.location import open_location
from storage import Store, load_trials
from tests.search.cli.test_cli import db_dump
from tests.search.conftest import run_subprocess

STUDY = "t"
RUN = (
    "run",
    "--space",
    "hourglass,conventional",
    "--task",
    "digits-denoise",
    "--budget",
    "60K",
    "--trials",
    "3",
    "--epochs",
    "2",
    "--no-report",
    "--study",
    STUDY,
    "--pruner",
    "none",
    "--keep",
    "all",
)


@pytest.fixture
def study(cli, tmp_path):
    code, _, err = cli(*RUN)
    assert code == 0, err
    db = tmp_path / "search.db"
    df = load_trials(STUDY, f"sqlite:///{db}")
    best = df[df.status == "complete"].sort_values("psnr").iloc[-1]
    return db, int(best.number), float(best.psnr)


def test_longer_retraining_with_more_seeds_is_recorded_beside_the_search(cli, study, tmp_path):
    from reports.tables import pareto_table

    db, number, searched = study
    frame = load_trials(STUDY, f"sqlite:///{db}")
    with Store(f"sqlite:///{db}") as store:
        search_epochs = store.epochs(STUDY, number)
    code, out, err = cli("train", STUDY, str(number), "--epochs", "4", "--repeats", "2")
    assert code == 0, err
    assert f"retraining 1 of trial {number}" in out and "over 2 run(s) at 4 epochs" in out
    assert "retraining: 4 epochs, 2 seed(s)" in err and "psnr" in err  # progress on stderr, as search run's
    with Store(f"sqlite:///{db}") as store:
        (r,) = store.retrainings(STUDY)
        assert (r.trial, r.number, r.status, r.epochs) == (number, 1, "complete", 4)
        assert [run["epochs"] for run in r.runs] == [4, 4] and len({run["seed"] for run in r.runs}) == 2
        assert r.metrics["psnr"][2] == 2 and r.metrics["psnr"][0] == pytest.approx(
            sum(run["metrics"]["psnr"] for run in r.runs) / 2
        )
        for run in r.runs:  # each run's weights, whole, in the study's folder
            (w,) = run["artifacts"]
            data = open_location(w["store"]).read(w["store_key"])
            assert (len(data), hashlib.sha256(data).hexdigest()) == (w["size"], w["sha256"])
            assert w["store"] == str(tmp_path / "search-artifacts")
        assert store.epochs(STUDY, number) == search_epochs  # the search's runs untouched
    after = load_trials(STUDY, f"sqlite:///{db}")
    assert after.equals(frame)  # the search's results, and so its fronts, stay what they were
    assert pareto_table(after, "psnr", "maximize").equals(pareto_table(frame, "psnr", "maximize"))


def test_retraining_at_the_searchs_epochs_trains_the_searchs_first_run_again(cli, study):
    db, number, searched = study
    code, out, err = cli("train", STUDY, str(number), "--epochs", "2")
    assert code == 0, err
    with Store(f"sqlite:///{db}") as store:
        (r,) = store.retrainings(STUDY)
    assert r.metrics["psnr"][0] == pytest.approx(searched, abs=1e-4)  # same seed, same settings


def test_a_recipes_training_settings_are_used(cli, study, tmp_path):
    db, number, _ = study
    (tmp_path / "long.toml").write_text(
        'description = "d"\n[run]\ntask = "digits-denoise"\nbatch_size = 32\n'
        'optimizer = "sgd-step"\nspace = "hourglass"\nbudget = "60K"\n'
    )
    code, out, err = cli("train", STUDY, str(number), "--epochs", "1", "--recipe", "long.toml")
    assert code == 0, err
    with Store(f"sqlite:///{db}") as store:
        (r,) = store.retrainings(STUDY)
    assert r.settings["recipe"] == "long" and r.settings["train"]["batch_size"] == 32
    assert r.settings["train"]["optimizer"] == "sgd-step" and r.runs[0]["epochs"] == 1


def test_a_trial_that_is_not_complete_is_refused_and_nothing_is_written(cli, study):
    db, _, _ = study
    with Store(f"sqlite:///{db}") as store:
        n = store.add_trial(STUDY, family="hourglass", config={"d_z": 64, "d_h": 4, "L": 1}, params=1, seeds=[1])
    before = db_dump(db)
    code, out, err = cli("train", STUDY, str(n), "--epochs", "2")
    assert code == 2 and f"trial {n} of 't' is running; only a complete trial is trained again" in err
    assert len(err.strip().splitlines()) == 1 and db_dump(db) == before


def test_ctrl_c_during_a_retraining_records_nothing_and_deletes_its_files(cli, study, tmp_path, monkeypatch):
    from search.api.progress import ConsoleProgress

    db, number, _ = study
    folder = tmp_path / "search-artifacts"
    files, before = set(os.listdir(folder)), db_dump(db)

    def stop_in_the_second_run(self, spec, repeat, record):
        if repeat == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(ConsoleProgress, "epoch", stop_in_the_second_run)
    code, _, err = cli("train", STUDY, str(number), "--epochs", "2", "--repeats", "2")
    assert code == 130 and "interrupted" in err
    assert db_dump(db) == before and set(os.listdir(folder)) == files  # the first run's file deleted


@pytest.mark.slow
def test_a_retraining_killed_during_a_weights_write_records_nothing_then_runs_again(cli, study, tmp_path):
    db, number, _ = study
    before = db_dump(db)
    proc = run_subprocess(["train", STUDY, str(number), "--epochs", "2"], tmp_path, {"SEARCH_FAULT_WEIGHTS": "crash"})
    proc.communicate(timeout=300)
    assert proc.returncode == 137
    assert db_dump(db) == before  # nothing half-recorded (an unrecorded half file may stay in the store)
    code, out, err = cli("train", STUDY, str(number), "--epochs", "2")  # run again: recorded once, whole
    assert code == 0, err
    with Store(f"sqlite:///{db}") as store:
        (r,) = store.retrainings(STUDY)
    w = r.runs[0]["artifacts"][0]
    assert hashlib.sha256(open_location(w["store"]).read(w["store_key"])).hexdigest() == w["sha256"]


def test_the_pages_show_the_retraining_beside_the_search_and_serve_offers_the_weights(cli, study, tmp_path):
    import threading
    import urllib.error
    import urllib.request

    from reports.server import make_server, trial_filename, weights_filename
    from reports.site import study_filename
    from search.cli.browse import read_kept_file

    db, number, searched = study
    assert cli("train", STUDY, str(number), "--epochs", "3", "--repeats", "2")[0] == 0
    with Store(f"sqlite:///{db}") as store:
        (r,) = store.retrainings(STUDY)
        search_weights = store.artifacts(STUDY, number, "weights")
    retrained = f"{r.metrics['psnr'][0]:.4g} ± {r.metrics['psnr'][1]:.2g}"
    code, _, err = cli("report", "--out", "rep")
    assert code == 0, err
    page = (tmp_path / "rep" / study_filename(STUDY)).read_text()
    assert "<h2>Trained again</h2>" in page and retrained in page
    files = [a for run in r.runs for a in run["artifacts"]] + search_weights
    assert all(a["sha256"] in page and f"{a['size']:,} bytes" in page for a in files)

    store = Store(f"sqlite:///{db}")
    server = make_server(store, "127.0.0.1", 0, quiet=True, read_file=read_kept_file)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with urllib.request.urlopen(base + trial_filename(STUDY, number), timeout=30) as resp:
            trial = resp.read().decode()
        assert "<h2>Trained again</h2>" in trial and retrained in trial and "3, 3" in trial  # epochs per run
        assert 'id="retraining-1-figure"' in trial  # its learning curves
        assert all(a["sha256"] in trial for a in files)
        link = weights_filename(STUDY, number, 1, 1)
        assert f'href="{link}"' in trial and f'href="{weights_filename(STUDY, number, 0, 0)}"' in trial
        with urllib.request.urlopen(base + link, timeout=30) as resp:
            data, headers = resp.read(), resp.headers
        assert hashlib.sha256(data).hexdigest() == r.runs[1]["artifacts"][0]["sha256"]
        assert headers["Content-Type"] == "application/octet-stream" and "attachment" in headers["Content-Disposition"]
        for bad, code in ((weights_filename(STUDY, number, 1, 5), 404), (weights_filename(STUDY, 99, 0, 0), 404)):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(base + bad, timeout=30)
            assert e.value.code == code
        with pytest.raises(urllib.error.HTTPError) as e:  # GET only: nothing served can change anything
            urllib.request.urlopen(urllib.request.Request(base + link, method="DELETE"), timeout=30)
        assert e.value.code == 405
        w = r.runs[1]["artifacts"][0]  # a changed file is never served
        (tmp_path / "search-artifacts" / w["store_key"]).write_bytes(b"x" * w["size"])
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(base + link, timeout=30)
        assert e.value.code == 500 and "differs from its record" in e.value.read().decode()
    finally:
        server.shutdown()
        server.server_close()
        store.close()


def test_the_study_page_with_a_retraining_renders_without_script_errors(cli, study, tmp_path):
    from reports.site import study_filename
    from tests.reports.test_browser import rendered_dom, script_errors

    _, number, _ = study
    assert cli("train", STUDY, str(number), "--epochs", "1")[0] == 0
    assert cli("report", "--out", "rep")[0] == 0
    dom = rendered_dom(tmp_path / "rep" / study_filename(STUDY))
    assert script_errors(dom) == "" and "Trained again" in dom and "Kept weights" in dom


def test_a_retrained_model_is_loaded_back_and_gives_its_recorded_test_metric(cli, study, tmp_path):
    import json

    import torch

    from search import load_model
    from tasks import get_task, load_data
    from tasks.train import evaluate

    db, number, _ = study
    assert cli("train", STUDY, str(number), "--epochs", "3", "--repeats", "2")[0] == 0
    with Store(f"sqlite:///{db}") as store:
        (r,) = store.retrainings(STUDY)
    task = get_task("digits-denoise")
    data = load_data(task, None, torch.device("cpu"))
    for run in r.runs:
        model = load_model(STUDY, number, storage=str(db), retraining=1, seed=run["repeat"])
        got = evaluate(model, data, "test")
        assert got["psnr"] == pytest.approx(run["metrics"]["psnr"], abs=1e-4)
    code, out, err = cli("model", STUDY, str(number), "--retraining", "1", "--seed", "1", "--out", "m")
    assert code == 0, err
    info = json.loads((tmp_path / "m" / "config.json").read_text())
    assert info["retraining"] == 1 and info["sha256"] == r.runs[1]["artifacts"][0]["sha256"]
    assert info["metrics"]["psnr"] == pytest.approx(r.metrics["psnr"][0])
    assert (tmp_path / "m" / f"trial{number}-retraining1-seed{r.runs[1]['seed']}.safetensors").is_file()
    assert (
        f"load_model({STUDY!r}, {number}, seed={r.runs[1]['seed']}, retraining=1)"
        in (tmp_path / "m" / "load.py").read_text()
    )
    code, _, err = cli("model", STUDY, str(number), "--retraining", "2", "--out", "m")
    assert code == 2 and f"trial {number} of study 't' has no retraining 2; it has 1" in err
